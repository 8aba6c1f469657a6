package exec

import (
	"fmt"
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

// BenchmarkGroupAgg runs the group aggregate SELECT k, COUNT(*), SUM(v)
// GROUP BY k (BIGINT k and v) over batches of 1024 rows whose keys cycle
// through 1,000 or 200,000 groups, all cached, emitting each batch's
// changes: the per-row cost of the operator with its state cache (a
// lookup, the fold, an emitted update per group a batch changes).
func BenchmarkGroupAgg(b *testing.B) {
	for _, keys := range []int{1_000, 200_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			in := types.Schema{{Name: "k", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}}
			agg := &planner.Aggregate{Input: &planner.Values{Cols: in}, Keys: []int{0}, Aggs: []planner.AggCall{
				{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "n", Text: "COUNT(*)"},
				{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s", Text: "SUM(v)"},
			}}
			a, em, sink := openTestGroupAgg(b, agg, 10*keys)
			sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
			nb := max(64, keys/1024+1)
			batches := make([]Batch, nb)
			for j := range batches {
				kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
				for i := 0; i < 1024; i++ {
					r := j*1024 + i
					kb.Append(int64(r*7919%keys) * 31)
					vb.Append(int64(r % 1000))
				}
				kc, vc := kb.NewArray(), vb.NewArray()
				batches[j] = Batch{Rec: array.NewRecordBatch(sch, []arrow.Array{kc, vc}, 1024)}
				kc.Release()
				vc.Release()
				kb.Release()
				vb.Release()
			}
			defer func() {
				for _, bt := range batches {
					bt.Rec.Release()
				}
			}()
			run := func(j int) {
				if err := a.process(0, batches[j%nb], em); err != nil {
					b.Fatal(err)
				}
				for {
					select {
					case el := <-sink.inbox:
						el.Batch.Rec.Release()
						continue
					default:
					}
					break
				}
			}
			for j := 0; j < nb; j++ { // every group made
				run(j)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for j := range b.N {
				run(j)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/row")
		})
	}
}
