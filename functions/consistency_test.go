package functions

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// randValue returns a random value of t (NULL about one time in six).
func randValue(r *rand.Rand, t types.T) types.Value {
	if r.Intn(6) == 0 {
		return nil
	}
	switch t.Kind {
	case types.Boolean:
		return r.Intn(2) == 0
	case types.TinyInt:
		return int64(r.Intn(256) - 128)
	case types.Int:
		switch r.Intn(10) {
		case 0:
			return int64(2147483647)
		case 1:
			return int64(-2147483648)
		case 2:
			return int64(0)
		}
		return int64(r.Intn(2001) - 1000)
	case types.BigInt:
		if r.Intn(10) == 0 {
			return int64(-9223372036854775808)
		}
		return r.Int63n(1<<40) - 1<<39
	case types.Double:
		return float64(r.Intn(20001)-10000) / 8
	case types.Decimal:
		return decimal128.FromI64(r.Int63n(2_000_000) - 1_000_000)
	case types.String:
		alphabet := []string{"a", "b", "%", "_", " ", "é", "Z", "1", "-"}
		n := r.Intn(6)
		s := ""
		for range n {
			s += alphabet[r.Intn(len(alphabet))]
		}
		return s
	case types.Date:
		return int32(r.Intn(40000) - 5000)
	case types.Timestamp:
		return r.Int63n(4e15) - 1e15
	}
	panic("randValue " + t.String())
}

type callCase struct {
	name  string
	types []string
	// consts marks arguments that are always constants (units, patterns).
	consts map[int]types.Value
}

func TestKernelsMatchRowByRow(t *testing.T) {
	cases := []callCase{
		{name: "+", types: []string{"INT", "INT"}},
		{name: "-", types: []string{"BIGINT", "BIGINT"}},
		{name: "*", types: []string{"INT", "INT"}},
		{name: "/", types: []string{"INT", "INT"}},
		{name: "%", types: []string{"BIGINT", "BIGINT"}},
		{name: "+", types: []string{"TINYINT", "TINYINT"}},
		{name: "*", types: []string{"DECIMAL(10, 2)", "DECIMAL(10, 2)"}},
		{name: "/", types: []string{"DECIMAL(10, 2)", "DECIMAL(10, 2)"}},
		{name: "-", types: []string{"DOUBLE", "DOUBLE"}},
		{name: "NEG", types: []string{"INT"}},
		{name: "<", types: []string{"INT", "INT"}},
		{name: "=", types: []string{"STRING", "STRING"}},
		{name: ">=", types: []string{"DECIMAL(10, 2)", "DECIMAL(10, 2)"}},
		{name: "<>", types: []string{"BOOLEAN", "BOOLEAN"}},
		{name: "<=", types: []string{"TIMESTAMP(3)", "TIMESTAMP(3)"}},
		{name: "IS DISTINCT FROM", types: []string{"INT", "INT"}},
		{name: "IS NOT DISTINCT FROM", types: []string{"STRING", "STRING"}},
		{name: "AND", types: []string{"BOOLEAN", "BOOLEAN", "BOOLEAN"}},
		{name: "OR", types: []string{"BOOLEAN", "BOOLEAN"}},
		{name: "NOT", types: []string{"BOOLEAN"}},
		{name: "IS NULL", types: []string{"STRING"}},
		{name: "IS NOT TRUE", types: []string{"BOOLEAN"}},
		{name: "IN", types: []string{"INT", "INT", "INT", "INT"}},
		{name: "IN", types: []string{"BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"},
			consts: map[int]types.Value{1: int64(1), 2: int64(2), 3: int64(3), 4: nil, 5: int64(5), 6: int64(6), 7: int64(7)}},
		{name: "NOT IN", types: []string{"STRING", "STRING", "STRING"}},
		{name: "LIKE", types: []string{"STRING", "STRING"}},
		{name: "LIKE", types: []string{"STRING", "STRING"}, consts: map[int]types.Value{1: "%a_%"}},
		{name: "CASE", types: []string{"BOOLEAN", "STRING", "BOOLEAN", "STRING", "STRING"}},
		{name: "IF", types: []string{"BOOLEAN", "DECIMAL(10, 2)", "DECIMAL(10, 2)"}},
		{name: "COALESCE", types: []string{"INT", "INT", "INT"}},
		{name: "NULLIF", types: []string{"STRING", "STRING"}},
		{name: "CASE", types: []string{"BOOLEAN", "BOOLEAN", "BOOLEAN"}},
		{name: "ABS", types: []string{"BIGINT"}},
		{name: "ROUND", types: []string{"DOUBLE", "INT"}, consts: map[int]types.Value{1: int64(1)}},
		{name: "ROUND", types: []string{"DECIMAL(10, 2)", "INT"}, consts: map[int]types.Value{1: int64(1)}},
		{name: "UPPER", types: []string{"STRING"}},
		{name: "SUBSTRING", types: []string{"STRING", "BIGINT", "BIGINT"}, consts: map[int]types.Value{2: int64(2)}},
		{name: "CONCAT", types: []string{"STRING", "STRING", "STRING"}},
		{name: "CONCAT_WS", types: []string{"STRING", "STRING", "STRING"}},
		{name: "TRIM", types: []string{"STRING"}},
		{name: "REPLACE", types: []string{"STRING", "STRING", "STRING"}},
		{name: "LPAD", types: []string{"STRING", "BIGINT", "STRING"}, consts: map[int]types.Value{1: int64(4)}},
		{name: "CHAR_LENGTH", types: []string{"STRING"}},
		{name: "EXTRACT", types: []string{"STRING", "TIMESTAMP(3)"}, consts: map[int]types.Value{0: "DOW"}},
		{name: "DATE_FORMAT", types: []string{"TIMESTAMP(3)", "STRING"}, consts: map[int]types.Value{1: "yyyy-MM-dd HH:mm:ss.SSS EEE"}},
		{name: "TIMESTAMPADD", types: []string{"STRING", "INT", "DATE"}, consts: map[int]types.Value{0: "MONTH"}},
		{name: "FLOOR", types: []string{"TIMESTAMP(3)", "STRING"}, consts: map[int]types.Value{1: "WEEK"}},
	}
	r := rand.New(rand.NewSource(1))
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s%v", c.name, c.types), func(t *testing.T) {
			for round := range 30 {
				checkRowByRow(t, r, c, 1+r.Intn(40), round)
			}
		})
	}
}

func checkRowByRow(t *testing.T, r *rand.Rand, c callCase, n, round int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := &Context{Mem: mem, Now: testNow}
	ts := make([]types.T, len(c.types))
	for i, s := range c.types {
		ts[i] = mustParse(t, s)
	}
	// Columns: random values, built with a random offset, or a constant.
	vals := make([][]types.Value, len(ts))
	args := make([]Vec, len(ts))
	for i, ty := range ts {
		if v, ok := c.consts[i]; ok {
			args[i] = ConstVec(ty, v)
			vals[i] = make([]types.Value, n)
			for j := range vals[i] {
				vals[i][j] = v
			}
			continue
		}
		if r.Intn(5) == 0 {
			v := randValue(r, ty)
			args[i] = ConstVec(ty, v)
			vals[i] = make([]types.Value, n)
			for j := range vals[i] {
				vals[i][j] = v
			}
			continue
		}
		off := r.Intn(11)
		b := array.NewBuilder(mem, ty.ArrowType())
		for range off {
			types.AppendValue(b, randValue(r, ty))
		}
		vals[i] = make([]types.Value, n)
		for j := range n {
			vals[i][j] = randValue(r, ty)
			types.AppendValue(b, vals[i][j])
		}
		full := b.NewArray()
		b.Release()
		args[i] = ArrayVec(ty, array.NewSlice(full, int64(off), int64(off+n)))
		full.Release()
	}
	defer releaseAll(args)
	f, _ := Lookup(c.name)
	as := make([]Arg, len(ts))
	for i, ty := range ts {
		as[i] = Arg{Type: ty}
		if v, ok := c.consts[i]; ok {
			as[i].Const, as[i].Value = true, v
		}
	}
	res, err := f.ResolveArgs(as)
	if err != nil {
		t.Fatal(err)
	}
	got, gotErr := Eval(ctx, res, args, n)
	if gotErr == nil {
		defer got.Release()
	}
	var rowErr error
	for j := range n {
		row := make([]Vec, len(ts))
		for i, ty := range ts {
			row[i] = ConstVec(ty, vals[i][j])
		}
		want, err := Eval(ctx, res, row, 1)
		if err != nil {
			rowErr = err
			continue
		}
		if !want.Const {
			t.Fatalf("constant arguments gave an array")
		}
		if gotErr != nil {
			continue
		}
		var g types.Value
		if got.Const {
			g = got.Value
		} else {
			if got.Array.Len() != n {
				t.Fatalf("result has %d rows, want %d", got.Array.Len(), n)
			}
			if !arrow.TypeEqual(got.Array.DataType(), res.Ret.ArrowType()) {
				t.Fatalf("result type %s, want %s", got.Array.DataType(), res.Ret)
			}
			g = types.ValueAt(got.Array, j)
		}
		if formatValue(res.Ret, g) != formatValue(res.Ret, want.Value) {
			t.Fatalf("round %d row %d of %d: args %v: column gives %s, row gives %s", round, j, n, rowVals(vals, j), formatValue(res.Ret, g), formatValue(res.Ret, want.Value))
		}
	}
	if (gotErr == nil) != (rowErr == nil) {
		t.Fatalf("round %d: column error %v, row error %v", round, gotErr, rowErr)
	}
}

func rowVals(vals [][]types.Value, j int) []any {
	out := make([]any, len(vals))
	for i := range vals {
		out[i] = vals[i][j]
	}
	return out
}
