package functions

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

func mustParse(t *testing.T, s string) types.T {
	t.Helper()
	ty, err := types.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

func TestCommonType(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // "" = none
	}{
		{[]string{"INT", "BIGINT"}, "BIGINT"},
		{[]string{"TINYINT", "SMALLINT"}, "SMALLINT"},
		{[]string{"INT", "NULL"}, "INT"},
		{[]string{"NULL", "NULL"}, "NULL"},
		{[]string{"INT", "DECIMAL(5, 2)"}, "DECIMAL(12, 2)"},
		{[]string{"BIGINT", "DECIMAL(38, 10)"}, "DECIMAL(38, 10)"},
		{[]string{"DECIMAL(10, 2)", "DECIMAL(5, 4)"}, "DECIMAL(12, 4)"},
		{[]string{"DECIMAL(38, 0)", "DECIMAL(38, 38)"}, "DECIMAL(38, 0)"},
		{[]string{"INT", "FLOAT"}, "FLOAT"},
		{[]string{"DECIMAL(5, 2)", "FLOAT"}, "DOUBLE"},
		{[]string{"BIGINT", "DOUBLE"}, "DOUBLE"},
		{[]string{"STRING", "VARCHAR(10)"}, "STRING"},
		{[]string{"STRING", "INT"}, ""},
		{[]string{"BOOLEAN", "INT"}, ""},
		{[]string{"TIMESTAMP(3)", "TIMESTAMP(6)"}, "TIMESTAMP(6)"},
		{[]string{"DATE", "TIMESTAMP(3)"}, "TIMESTAMP(3)"},
		{[]string{"DATE", "TIME"}, ""},
		{[]string{"INTERVAL DAY TO SECOND", "INTERVAL YEAR TO MONTH"}, ""},
		{[]string{"INT NOT NULL", "BIGINT NOT NULL"}, "BIGINT NOT NULL"},
		{[]string{"INT NOT NULL", "BIGINT"}, "BIGINT"},
	} {
		ts := make([]types.T, len(c.in))
		for i, s := range c.in {
			ts[i] = mustParse(t, s)
		}
		got, ok := CommonType(ts...)
		switch {
		case c.want == "" && ok:
			t.Errorf("CommonType(%v) = %s, want none", c.in, got)
		case c.want != "" && !ok:
			t.Errorf("CommonType(%v) = none, want %s", c.in, c.want)
		case ok && got.String() != c.want:
			t.Errorf("CommonType(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestImplicitCast(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"TINYINT", "INT", true},
		{"INT", "BIGINT", true},
		{"BIGINT", "INT", false},
		{"INT", "DECIMAL(10, 0)", true},
		{"BIGINT", "DOUBLE", true},
		{"DECIMAL(5, 2)", "DOUBLE", true},
		{"DOUBLE", "DECIMAL(5, 2)", false},
		{"FLOAT", "DOUBLE", true},
		{"DOUBLE", "FLOAT", false},
		{"DECIMAL(5, 2)", "DECIMAL(3, 1)", true},
		{"NULL", "DATE", true},
		{"INT", "STRING", false},
		{"STRING", "INT", false},
		{"VARCHAR(3)", "STRING", true},
		{"DATE", "TIMESTAMP(3)", false},
		{"TIMESTAMP(6)", "TIMESTAMP(3)", true},
		{"BOOLEAN", "INT", false},
		{"INT NOT NULL", "INT", true},
	} {
		if got := ImplicitCast(mustParse(t, c.from), mustParse(t, c.to)); got != c.want {
			t.Errorf("ImplicitCast(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestCanCast(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"INT", "STRING", true},
		{"STRING", "TIMESTAMP(3)", true},
		{"TIMESTAMP(3)", "DATE", true},
		{"DATE", "TIMESTAMP(3)", true},
		{"DATE", "INT", false},
		{"BOOLEAN", "DOUBLE", true},
		{"BYTES", "INT", false},
		{"INTERVAL DAY TO SECOND", "STRING", true},
		{"NULL", "BOOLEAN", true},
		{"TIME", "DATE", false},
	} {
		if got := CanCast(mustParse(t, c.from), mustParse(t, c.to)); got != c.want {
			t.Errorf("CanCast(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestLookup(t *testing.T) {
	if f, ok := Lookup("upper"); !ok || f.Name != "UPPER" {
		t.Fatalf("Lookup(upper) = %v, %v", f, ok)
	}
	if f, ok := Lookup("substr"); !ok || f.Name != "SUBSTR" {
		t.Fatalf("Lookup(substr) = %v, %v", f, ok)
	}
	if _, ok := Lookup("no_such"); ok {
		t.Fatal("Lookup(no_such) found something")
	}
	names := Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("Names not sorted at %q", names[i])
		}
	}
}

func TestHashColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	// INT column [1, NULL, 3] sliced out of a longer one, with garbage
	// under the NULL.
	b := array.NewInt32Builder(mem)
	b.AppendValues([]int32{9, 1, 77, 3}, []bool{true, true, false, true})
	full := b.NewArray()
	b.Release()
	ints := array.NewSlice(full, 1, 4)
	full.Release()
	defer ints.Release()

	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"a", "", "c"}, []bool{true, false, true})
	strs := sb.NewArray()
	sb.Release()
	defer strs.Release()

	out := make([]uint64, 3)
	HashColumn(ArrayVec(types.IntType, ints), 3, out)
	HashColumn(ArrayVec(types.StringType, strs), 3, out)

	// The same rows from constants, one at a time, and from BIGINT.
	rows := []struct {
		i int64
		s any
	}{{1, "a"}, {0, nil}, {3, "c"}}
	for r, row := range rows {
		var iv any = row.i
		if r == 1 {
			iv = nil
		}
		h := make([]uint64, 1)
		HashColumn(ConstVec(types.BigIntType, iv), 1, h)
		HashColumn(ConstVec(types.StringType, row.s), 1, h)
		if h[0] != out[r] {
			t.Errorf("row %d: column hash %x, constant hash %x", r, out[r], h[0])
		}
	}
	if out[0] == out[2] || out[0] == out[1] {
		t.Errorf("distinct rows collide: %x", out)
	}

	// -0.0 and 0.0, and every NaN, hash alike.
	h1, h2 := make([]uint64, 1), make([]uint64, 1)
	HashColumn(ConstVec(types.DoubleType, 0.0), 1, h1)
	negZero := 0.0
	negZero = -negZero
	HashColumn(ConstVec(types.DoubleType, negZero), 1, h2)
	if h1[0] != h2[0] {
		t.Error("-0.0 and 0.0 hash differently")
	}
	// Stable across processes: a fixed known value.
	h := make([]uint64, 1)
	HashColumn(ConstVec(types.StringType, "key"), 1, h)
	if h[0] != HashValueMixed(0, types.StringType, "key") {
		t.Error("HashValue disagrees with HashColumn")
	}
}

// HashValueMixed mixes one value into acc as HashColumn does.
func HashValueMixed(acc uint64, t types.T, v types.Value) uint64 {
	return combine(acc, HashValue(t, v))
}

func TestTryCastColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"1", "x", "", "40000"}, []bool{true, true, false, true})
	arr := sb.NewArray()
	sb.Release()
	defer arr.Release()
	ctx := &Context{Mem: mem}
	k, err := TryCast(types.StringType, types.SmallIntType)
	if err != nil {
		t.Fatal(err)
	}
	res, err := k(ctx, []Vec{ArrayVec(types.StringType, arr)}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	want := []any{int64(1), nil, nil, nil}
	for i, w := range want {
		if got := types.ValueAt(res.Array, i); got != w {
			t.Errorf("row %d: %v, want %v", i, got, w)
		}
	}
	k, _ = Cast(types.StringType, types.SmallIntType)
	if _, err := k(ctx, []Vec{ArrayVec(types.StringType, arr)}, 4); err == nil || err.Error() != "cannot cast 'x' to SMALLINT" {
		t.Errorf("Cast error = %v", err)
	}
}

func TestVolatile(t *testing.T) {
	for _, n := range []string{"NOW", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME", "UNIX_TIMESTAMP", "CURRENT_ROW_TIMESTAMP"} {
		if f, ok := Lookup(n); !ok || !f.Volatile {
			t.Errorf("%s is not volatile", n)
		}
	}
	if f, _ := Lookup("UPPER"); f.Volatile {
		t.Error("UPPER is volatile")
	}
}
