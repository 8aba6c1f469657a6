package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkAggFold folds 4096 rows into one group's SUM and AVG
// accumulators (adds, then retractions) and appends the results: the
// group aggregate's per-row work, without the state cache.
func BenchmarkAggFold(b *testing.B) {
	const rows = 4096
	mem := memory.DefaultAllocator
	for _, tc := range []struct {
		name   string
		argT   types.T
		sum    types.T
		avg    types.T
		column func() (r colReader)
	}{
		{"decimal", types.DecimalOf(20, 2), types.DecimalOf(38, 2), types.DecimalOf(38, 6), func() (r colReader) {
			bd := array.NewDecimal128Builder(mem, types.DecimalOf(20, 2).ArrowType().(*arrow.Decimal128Type))
			defer bd.Release()
			for i := range rows {
				bd.Append(decimal128.FromI64(int64(i*7919%100000) - 50000))
			}
			a := bd.NewArray()
			r.reset(types.DecimalOf(20, 2), a)
			return r
		}},
		{"int", types.IntType, types.IntType, types.IntType, func() (r colReader) {
			bi := array.NewInt32Builder(mem)
			defer bi.Release()
			for i := range rows {
				bi.Append(int32(i*7919%1000) - 500)
			}
			r.reset(types.IntType, bi.NewArray())
			return r
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fold, err := newAggFold([]planner.AggCall{
				{Func: planner.AggSum, Arg: 0, ArgT: tc.argT, T: tc.sum, Text: "SUM(v)"},
				{Func: planner.AggAvg, Arg: 0, ArgT: tc.argT, T: tc.avg, Text: "AVG(v)"},
			}, aggMode{updating: true, spaces: true})
			if err != nil {
				b.Fatal(err)
			}
			r := tc.column()
			fold.argR = []colReader{r, r}
			accs := fold.newAccs(nil)
			var x foldCtx
			sb := array.NewBuilder(mem, tc.sum.ArrowType())
			ab := array.NewBuilder(mem, tc.avg.ArrowType())
			defer sb.Release()
			defer ab.Release()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, sign := range []int64{1, -1} {
					for i := range rows {
						if err := fold.add(accs, &x, i, sign); err != nil {
							b.Fatal(err)
						}
						if i%64 == 0 { // one emission per 64 rows
							fold.appendResults([]array.Builder{sb, ab}, accs)
						}
					}
				}
				sb.Release()
				ab.Release()
				sb = array.NewBuilder(mem, tc.sum.ArrowType())
				ab = array.NewBuilder(mem, tc.avg.ArrowType())
			}
		})
	}
}
