package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// evalRowLazy is the reference the guarded evaluation is checked against:
// one row at a time, CASE, IF, COALESCE, AND and OR short-circuit as SQL
// says, every other function gets its evaluated arguments.
func evalRowLazy(ctx *functions.Context, n node, row *rows) (types.Value, error) {
	switch x := n.(type) {
	case *guardNode:
		switch x.form {
		case formCase:
			i := 0
			for ; i+1 < len(x.args); i += 2 {
				cond, err := evalRowLazy(ctx, x.args[i], row)
				if err != nil {
					return nil, err
				}
				if cond == true {
					return evalRowLazy(ctx, x.args[i+1], row)
				}
			}
			if i < len(x.args) {
				return evalRowLazy(ctx, x.args[i], row)
			}
			return nil, nil
		case formCoalesce:
			for _, a := range x.args {
				v, err := evalRowLazy(ctx, a, row)
				if err != nil || v != nil {
					return v, err
				}
			}
			return nil, nil
		default:
			short := x.form == formOr // OR stops at TRUE, AND at FALSE
			sawNull := false
			for _, a := range x.args {
				v, err := evalRowLazy(ctx, a, row)
				if err != nil {
					return nil, err
				}
				if v == nil {
					sawNull = true
					continue
				}
				if v.(bool) == short {
					return short, nil
				}
			}
			if sawNull {
				return nil, nil
			}
			return !short, nil
		}
	case *callNode:
		args := make([]functions.Vec, len(x.args))
		for i, a := range x.args {
			v, err := evalRowLazy(ctx, a, row)
			if err != nil {
				return nil, err
			}
			args[i] = functions.ConstVec(argType(a), v)
		}
		out, err := x.kernel(ctx, args, 1)
		if err != nil {
			return nil, err
		}
		defer out.Release()
		return out.ValueAt(0), nil
	}
	v, _, err := n.eval(ctx, row)
	if err != nil {
		return nil, err
	}
	return v.ValueAt(0), nil
}

// TestGuardedEvaluation evaluates guarded expressions over random batches
// (NULLs, zeros, values that overflow, sliced batches) with one evaluator,
// batch after batch, and checks each batch against the row-at-a-time
// reference: the same values when no row evaluates a failing expression,
// else the error of the first row that does, as row-by-row evaluation
// reports it. A batch with an erroring
// row under a guard that does not select it evaluates fine.
func TestGuardedEvaluation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	col := func(i int, name string, ty types.T) planner.Expr {
		return &planner.ColumnRef{Index: i, Name: name, T: ty}
	}
	x, y, b := col(0, "x", types.IntType), col(1, "y", types.IntType), col(2, "b", types.BooleanType)
	s := col(3, "s", types.StringType)
	lit := func(v int64) planner.Expr {
		return &planner.Literal{Value: v, T: types.T{Kind: types.Int, NotNull: true}}
	}
	null := &planner.Literal{T: types.NullType}
	c := func(name string, args ...planner.Expr) planner.Expr { return bindCall(t, name, args...) }
	exprs := []planner.Expr{
		c("CASE", c("<>", x, lit(0)), c("/", lit(10), x), lit(0)),
		c("CASE", c("=", x, lit(0)), null, c("<>", y, lit(0)), c("/", x, y)),
		// Each branch fails on the rows of the other.
		c("CASE", c(">", x, lit(5)), c("/", lit(100), c("-", x, lit(3))), c("/", lit(100), c("-", x, lit(7)))),
		c("IF", c("<>", x, lit(0)), c("/", lit(100), x), c("%", y, lit(3))),
		c("COALESCE", y, c("/", lit(10), x), lit(7)),
		c("IFNULL", y, c("/", lit(10), x)),
		c("AND", c("<>", x, lit(0)), c(">", c("/", lit(10), x), lit(1))),
		c("OR", c("=", x, lit(0)), c(">", c("/", lit(10), x), lit(1))),
		c("AND", b, c(">", c("/", lit(10), x), lit(0))),
		c("OR", b, c("IS NULL", y), c("<", c("/", y, x), lit(2))),
		c("CASE", c("IS NULL", y), c("COALESCE", x, lit(1)),
			c("<>", y, lit(0)), c("CASE", c("<>", x, lit(0)), c("/", y, x), lit(-1)),
			lit(0)),
		// INT overflow under a guard.
		c("CASE", c("<", x, lit(1000)), c("*", x, lit(2147483)), lit(0)),
		// A failing WHEN after an earlier one decided the row.
		c("CASE", c("=", x, lit(0)), lit(-1), c(">", c("/", lit(10), x), lit(2)), lit(1), lit(0)),
		// Rows failing in both branches, with messages that differ by row:
		// the first failing row in row order is the one reported.
		c("CASE", c(">", x, lit(10)), c("/", y, c("-", x, lit(15))), c("/", y, c("-", x, lit(4)))),
		// A string result, gathered and scattered.
		c("CASE", c("<>", x, lit(0)), c("CONCAT", s, c("/", lit(10), x)), s),
		// Conditionals of columns, literals and comparisons, which cannot
		// fail: plain calls over every row (TestInfallibleConditionals).
		c("CASE", c("=", x, lit(3)), y, c(">", x, lit(10)), x, c("=", x, lit(4)), lit(-7), y),
		c("CASE", c("=", x, lit(3)), y, b, x),
		c("CASE", c("IS NULL", y), lit(1), c("<", y, lit(0)), x),
		c("IF", b, x, y),
		c("CASE", b, s, c(">", x, lit(10)), null, s),
		c("CASE", c("=", x, lit(3)), b, c("IS NOT NULL", y), c("<", y, x)),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	batch := func(n int, zeros bool) arrow.RecordBatch {
		xb, yb := array.NewInt32Builder(mem), array.NewInt32Builder(mem)
		bb, sb := array.NewBooleanBuilder(mem), array.NewStringBuilder(mem)
		defer xb.Release()
		defer yb.Release()
		defer bb.Release()
		defer sb.Release()
		for range n {
			switch r := rng.IntN(200); {
			case r < 10:
				xb.AppendNull()
			case r == 10 && zeros:
				xb.Append(0)
			case r == 11:
				xb.Append(1_000_000)
			default:
				xb.Append(int32(rng.IntN(20) + 1))
			}
			switch r := rng.IntN(10); {
			case r == 0:
				yb.AppendNull()
			case r == 1:
				yb.Append(0)
			default:
				yb.Append(int32(rng.IntN(9) - 4))
			}
			if r := rng.IntN(3); r == 0 {
				bb.AppendNull()
			} else {
				bb.Append(r == 1)
			}
			if rng.IntN(8) == 0 {
				sb.AppendNull()
			} else {
				sb.Append(fmt.Sprintf("s%d", rng.IntN(100)))
			}
		}
		cols := []arrow.Array{xb.NewArray(), yb.NewArray(), bb.NewArray(), sb.NewArray()}
		rec := array.NewRecordBatch(schema, cols, int64(n))
		for _, a := range cols {
			a.Release()
		}
		return rec
	}
	ctx := &functions.Context{Mem: mem}
	for ei, e := range exprs {
		ev := compileExpr(e)
		var oks, fails int
		for bi := range 40 {
			n := 1 + rng.IntN(200)
			rec := batch(n, bi%3 != 0)
			if bi%4 == 1 && n > 10 { // a slice at an odd offset
				s := rec.NewSlice(3, int64(n-2))
				rec.Release()
				rec = s
			}
			var want []types.Value
			var rowErrs []string
			for i := range int(rec.NumRows()) {
				r := rec.NewSlice(int64(i), int64(i+1))
				v, err := evalRowLazy(ctx, ev.root, &rows{cols: r.Columns(), n: 1})
				r.Release()
				if err != nil {
					rowErrs = append(rowErrs, err.Error())
				}
				want = append(want, v)
			}
			got, err := ev.evalArray(ctx, rec)
			rec.Release()
			switch {
			case len(rowErrs) > 0:
				fails++
				if err == nil {
					got.Release()
					t.Fatalf("%s, batch %d: no error, want one of %q", e, bi, rowErrs)
				}
				if err.Error() != rowErrs[0] {
					t.Fatalf("%s, batch %d: error %q, want the first failing row's %q", e, bi, err, rowErrs[0])
				}
			case err != nil:
				t.Fatalf("%s, batch %d: %v; no row fails evaluated one at a time", e, bi, err)
			default:
				oks++
				for i, w := range want {
					if g := types.ValueAt(got, i); fmt.Sprint(g) != fmt.Sprint(w) {
						t.Fatalf("%s, batch %d row %d: got %v, want %v", e, bi, i, g, w)
					}
				}
				got.Release()
			}
		}
		if oks == 0 {
			t.Errorf("expression %d %s: no batch evaluated without error: the test proves nothing", ei, e)
		}
		t.Logf("%s: %d batches fine, %d failing", e, oks, fails)
	}
}

// guardedDivision is CASE WHEN x <> 0 THEN 10 / x ELSE 0 END over column
// 0 (INT), and intBatch a batch of n rows of x = 1, 2, ... with a zero at
// row zeroAt (none when < 0).
func guardedDivision(tb testing.TB) planner.Expr {
	x := &planner.ColumnRef{Index: 0, Name: "x", T: types.IntType}
	lit := func(v int64) planner.Expr {
		return &planner.Literal{Value: v, T: types.T{Kind: types.Int, NotNull: true}}
	}
	return bindCall(tb, "CASE", bindCall(tb, "<>", x, lit(0)), bindCall(tb, "/", lit(10), x), lit(0))
}

func intBatch(mem memory.Allocator, n, zeroAt int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	bd := array.NewInt32Builder(mem)
	defer bd.Release()
	for i := range n {
		v := int32(i%1000 + 1)
		if i == zeroAt {
			v = 0
		}
		bd.Append(v)
	}
	col := bd.NewArray()
	defer col.Release()
	return array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
}

// TestGuardedEvaluationCost checks that a row a guard does not select
// costs that row, not the batch: with one zero under WHEN x <> 0, a batch
// of 4096 rows allocates no more than one of 256 rows (work per batch,
// nothing per row), and no more than a few dozen objects more than the
// same batch without the zero. Evaluating such a batch row by row
// allocates per row.
func TestGuardedEvaluationCost(t *testing.T) {
	mem := memory.DefaultAllocator
	ctx := &functions.Context{Mem: mem}
	ev := compileExpr(guardedDivision(t))
	allocs := func(n, zeroAt int) float64 {
		rec := intBatch(mem, n, zeroAt)
		defer rec.Release()
		return testing.AllocsPerRun(20, func() {
			a, err := ev.evalArray(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			a.Release()
		})
	}
	clean, small, large := allocs(4096, -1), allocs(256, 100), allocs(4096, 1000)
	t.Logf("allocations per batch: 4096 rows without a zero %.0f, 256 rows with one %.0f, 4096 rows with one %.0f", clean, small, large)
	if large > small+4 {
		t.Errorf("a batch of 4096 rows with one unselected failing row allocates %.0f objects, one of 256 rows %.0f: the cost grows with the rows", large, small)
	}
	if large > clean+20 {
		t.Errorf("a batch with one unselected failing row allocates %.0f objects, %.0f without it", large, clean)
	}
}

// TestInfallibleConditionals: a conditional whose arguments cannot fail
// (columns, literals, comparisons, logic, nested such conditionals) is
// compiled as a plain call over every row; one with an argument that can
// fail, anywhere below it, stays a guard.
func TestInfallibleConditionals(t *testing.T) {
	x := &planner.ColumnRef{Index: 0, Name: "x", T: types.IntType}
	y := &planner.ColumnRef{Index: 1, Name: "y", T: types.IntType}
	lit := func(v int64) planner.Expr {
		return &planner.Literal{Value: v, T: types.T{Kind: types.Int, NotNull: true}}
	}
	c := func(name string, args ...planner.Expr) planner.Expr { return bindCall(t, name, args...) }
	for _, tc := range []struct {
		e     planner.Expr
		guard bool
	}{
		{c("CASE", c("=", x, lit(0)), y, c("=", x, lit(1)), x, y), false},
		{c("IF", c("IS NULL", y), x, c("CASE", c("<", x, y), x, y)), false},
		{c("AND", c(">", x, lit(0)), c("OR", c("<", y, lit(3)), c("IS NULL", x))), false},
		{c("COALESCE", y, x, lit(0)), false},
		{c("CASE", c("=", x, lit(0)), y, c("+", x, lit(1))), true},
		{c("IF", c("IS NULL", y), x, c("CASE", c("<", x, y), c("/", x, y), y)), true},
		{c("AND", c(">", c("%", x, lit(3)), lit(0)), c("<", y, lit(3))), true},
	} {
		ev := compileExpr(tc.e)
		_, isGuard := ev.root.(*guardNode)
		if isGuard != tc.guard || ev.guards != tc.guard {
			t.Errorf("%s: root is a guard %v (evaluator has guards %v), want %v", tc.e, isGuard, ev.guards, tc.guard)
		}
	}
}
