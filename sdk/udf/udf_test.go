package udf

import (
	"strings"
	"testing"
)

func strCol(vals ...string) Column {
	c := Column{Offsets: []int32{0}}
	for _, v := range vals {
		c.Values = append(c.Values, v...)
		c.Offsets = append(c.Offsets, int32(len(c.Values)))
	}
	return c
}

func strResults(r *Result, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(r.Values[r.Offsets[i]:r.Offsets[i+1]])
		if r.Valid != nil && r.Valid[i] == 0 {
			out[i] = "NULL"
		}
	}
	return out
}

// TestScalar: a function's signature, its string results, and a panic
// reported with the row it happened at.
func TestScalar(t *testing.T) {
	registered = nil
	Scalar(func(s string) string {
		if s == "boom" {
			panic("no " + s)
		}
		return strings.ToUpper(s)
	})
	if got, want := Signature(), "(STRING) RETURNS STRING RETURNS NULL ON NULL INPUT"; got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	var out Result
	var row uint32
	if err := Run(3, []Column{strCol("a", "", "héllo")}, &out, &row); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strResults(&out, 3), ","); got != "A,,HÉLLO" {
		t.Errorf("results %q", got)
	}
	err := Run(3, []Column{strCol("a", "boom", "c")}, &out, &row)
	if err == nil || err.Error() != "no boom" || row != 1 {
		t.Errorf("error %v at row %d, want no boom at row 1", err, row)
	}
}

// TestNullableScalar: a function called on NULL sees which arguments are
// NULL and says which results are.
func TestNullableScalar(t *testing.T) {
	registered = nil
	NullableScalar2(func(a Nullable[int64], b Nullable[bool]) Nullable[int64] {
		if !a.Valid {
			return Nullable[int64]{}
		}
		if b.Valid && b.V {
			return Of(-a.V)
		}
		return Of(a.V)
	})
	if got, want := Signature(), "(BIGINT, BOOLEAN) RETURNS BIGINT CALLED ON NULL INPUT"; got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	a := Column{Values: make([]byte, 24), Valid: []byte{1, 0, 1}}
	a.Values[0], a.Values[16] = 5, 7
	b := Column{Values: []byte{1, 1, 0}, Valid: []byte{1, 1, 0}}
	var out Result
	var row uint32
	if err := Run(3, []Column{a, b}, &out, &row); err != nil {
		t.Fatal(err)
	}
	vals := view[int64](&Column{Values: out.Values}, 3, nil)
	if out.Valid[0] != 1 || vals[0] != -5 || out.Valid[1] != 0 || out.Valid[2] != 1 || vals[2] != 7 {
		t.Errorf("results %v valid %v", vals, out.Valid)
	}
}

// TestOneFunction: a module registers one function.
func TestOneFunction(t *testing.T) {
	registered = nil
	Scalar(func(x int32) int32 { return x })
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "registers one function") {
			t.Errorf("a second function: %v", r)
		}
	}()
	Scalar(func(x float64) float64 { return x })
}
