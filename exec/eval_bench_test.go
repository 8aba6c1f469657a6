package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// bindCall resolves a function call over already bound arguments the way
// the binder does: the resolved argument types, implicit casts where they
// differ. It is for tests that build expressions without SQL text.
func bindCall(tb testing.TB, name string, args ...planner.Expr) planner.Expr {
	tb.Helper()
	f, ok := functions.Lookup(name)
	if !ok {
		tb.Fatalf("no function %s", name)
	}
	as := make([]functions.Arg, len(args))
	for i, a := range args {
		as[i].Type = a.Type()
		if l, ok := a.(*planner.Literal); ok {
			as[i].Const, as[i].Value = true, l.Value
		}
	}
	r, err := f.ResolveArgs(as)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	for i, a := range args {
		if a.Type().Equal(r.ArgTypes[i]) {
			continue
		}
		k, err := functions.Cast(a.Type(), r.ArgTypes[i])
		if err != nil {
			tb.Fatalf("%s argument %d: %v", name, i, err)
		}
		args[i] = &planner.Cast{Arg: a, T: r.ArgTypes[i], Kernel: k}
	}
	return &planner.Call{Func: name, Args: args, Resolved: r}
}

// BenchmarkGuardedCase evaluates CASE WHEN x <> 0 THEN 10 / x ELSE 0 END
// over 500K INT rows (1, 2, ..., 1000, 1, ...) in batches of
// DefaultBatchSize, without zeros and with one zero per batch: a row the
// guard does not let through must cost that row, not the batch. The
// "half-selected" case, CASE WHEN x > 500 THEN 10 / x ELSE 0 END without
// zeros, is a guard that selects part of each batch and never fails.
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench GuardedCase -benchtime 20x
func BenchmarkGuardedCase(b *testing.B) {
	const rows = 500_000
	mem := memory.DefaultAllocator
	x := &planner.ColumnRef{Index: 0, Name: "x", T: types.IntType}
	lit := func(v int64) planner.Expr {
		return &planner.Literal{Value: v, T: types.T{Kind: types.Int, NotNull: true}}
	}
	half := bindCall(b, "CASE", bindCall(b, ">", x, lit(500)), bindCall(b, "/", lit(10), x), lit(0))
	batches := func(zeros bool) []arrow.RecordBatch {
		var out []arrow.RecordBatch
		for start, k := 0, 0; start < rows; start, k = start+DefaultBatchSize, k+1 {
			n := min(DefaultBatchSize, rows-start)
			zeroAt := -1
			if zeros {
				zeroAt = k * 37 % n
			}
			out = append(out, intBatch(mem, n, zeroAt))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		e     planner.Expr
		zeros bool
	}{
		{"no-zeros", guardedDivision(b), false},
		{"one-zero-per-batch", guardedDivision(b), true},
		{"half-selected", half, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			recs := batches(tc.zeros)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			ev := compileExpr(tc.e)
			ctx := &functions.Context{Mem: mem}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, r := range recs {
					a, err := ev.evalArray(ctx, r)
					if err != nil {
						b.Fatal(err)
					}
					a.Release()
				}
			}
		})
	}
}
