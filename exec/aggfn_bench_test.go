package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// benchGroupAgg is a global group aggregate over one BIGINT column, opened
// on an in-memory store, emitting nowhere.
func benchGroupAgg(b *testing.B, updating bool, aggs ...planner.AggCall) (*groupAggOp, *emitter) {
	job := &Job{opts: Options{StateCacheEntries: 1_000_000}, ctx: context.Background(), graph: &planner.Graph{MaxParallelism: 128}}
	a := &groupAggOp{
		spec:     &planner.Aggregate{Aggs: aggs},
		updating: updating,
		outSch:   types.Schema{{Name: "m", Type: types.BigIntType.Nullable()}},
		maxPar:   128,
	}
	a.arrowSch = a.outSch.Arrow()
	if err := a.init(); err != nil {
		b.Fatal(err)
	}
	t := &taskContext{ctx: context.Background(), job: job, mem: memory.DefaultAllocator, batchSize: DefaultBatchSize, store: state.NewMemory()}
	if err := a.open(t); err != nil {
		b.Fatal(err)
	}
	return a, &emitter{task: &subtask{job: job}}
}

// int64Batch is a batch of one BIGINT column holding vs, all with op.
func int64Batch(vs []int64, op RowKind) Batch {
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	bld.AppendValues(vs, nil)
	col := bld.NewArray()
	defer col.Release()
	sch := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sch, []arrow.Array{col}, int64(len(vs)))
	var ops []RowKind
	if op != Insert {
		ops = make([]RowKind, len(vs))
		for i := range ops {
			ops[i] = op
		}
	}
	return Batch{Rec: rec, Ops: ops}
}

// BenchmarkMinMaxRetract: MAX over an updating input holding 100,000
// distinct values in one group, then the current maximum retracted 10,000
// times (100 retractions per batch); ns/retraction is the cost of one.
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench MinMaxRetract -benchtime 1x -count 3
func BenchmarkMinMaxRetract(b *testing.B) {
	const distinct, retractions, perBatch = 100_000, 10_000, 100
	var total float64
	for range b.N {
		b.StopTimer()
		a, out := benchGroupAgg(b, true, planner.AggCall{Func: planner.AggMax, Arg: 0, ArgT: types.BigIntType, T: types.BigIntType.Nullable(), Text: "MAX(v)"})
		vs := make([]int64, 0, DefaultBatchSize)
		for v := int64(0); v < distinct; v++ {
			vs = append(vs, v)
			if len(vs) == cap(vs) || v == distinct-1 {
				bt := int64Batch(vs, Insert)
				if err := a.process(0, bt, out); err != nil {
					b.Fatal(err)
				}
				bt.Rec.Release()
				vs = vs[:0]
			}
		}
		batches := make([]Batch, 0, retractions/perBatch)
		top := int64(distinct - 1)
		for range retractions / perBatch {
			vs = vs[:0]
			for range perBatch {
				vs = append(vs, top)
				top--
			}
			batches = append(batches, int64Batch(vs, Delete))
		}
		b.StartTimer()
		start := time.Now()
		for _, bt := range batches {
			if err := a.process(0, bt, out); err != nil {
				b.Fatal(err)
			}
		}
		total += float64(time.Since(start))
		b.StopTimer()
		for _, bt := range batches {
			bt.Rec.Release()
		}
		a.close()
		b.StartTimer()
	}
	b.ReportMetric(total/float64(b.N*retractions), "ns/retraction")
}

// BenchmarkDistinctFilters: Nexmark q16's shape in one global group: four
// COUNT(DISTINCT v), three with a FILTER, over 200,000 rows of 50,000
// values, then a flush of the sets to the store; the aggregates sharing
// one value set and, as state written before sharing has, each keeping
// its own. ns/row is the cost of one row.
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench DistinctFilters -benchtime 5x
func BenchmarkDistinctFilters(b *testing.B) {
	const rows, distinct = 200_000, 50_000
	count := types.T{Kind: types.BigInt, NotNull: true}
	aggs := []planner.AggCall{{Func: planner.AggCount, Arg: 0, ArgT: types.BigIntType, Distinct: true, T: count, Text: "COUNT(DISTINCT v)"}}
	for f := 1; f <= 3; f++ {
		aggs = append(aggs, planner.AggCall{Func: planner.AggCount, Arg: 0, ArgT: types.BigIntType, Distinct: true, T: count,
			HasFilter: true, Filter: f, Text: fmt.Sprintf("COUNT(DISTINCT v) FILTER (WHERE f%d)", f)})
	}
	mem := memory.DefaultAllocator
	var batches []Batch
	for start := 0; start < rows; start += DefaultBatchSize {
		vb := array.NewInt64Builder(mem)
		fbs := []*array.BooleanBuilder{array.NewBooleanBuilder(mem), array.NewBooleanBuilder(mem), array.NewBooleanBuilder(mem)}
		for i := start; i < min(start+DefaultBatchSize, rows); i++ {
			vb.Append(int64(i * 7919 % distinct))
			for f, fb := range fbs {
				fb.Append(i%3 == f)
			}
		}
		cols := []arrow.Array{vb.NewArray()}
		fields := []arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}
		for f, fb := range fbs {
			cols = append(cols, fb.NewArray())
			fields = append(fields, arrow.Field{Name: fmt.Sprintf("f%d", f+1), Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
		}
		batches = append(batches, Batch{Rec: array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))})
	}
	for _, shared := range []bool{true, false} {
		name := "shared"
		if !shared {
			name = "per-aggregate"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var total time.Duration
			for range b.N {
				b.StopTimer()
				job := &Job{opts: Options{StateCacheEntries: 1_000_000}, ctx: context.Background(), graph: &planner.Graph{MaxParallelism: 128}}
				a := &groupAggOp{spec: &planner.Aggregate{Aggs: aggs}, updating: true,
					outSch: types.Schema{{Name: "c", Type: count}, {Name: "c1", Type: count}, {Name: "c2", Type: count}, {Name: "c3", Type: count}}, maxPar: 128}
				a.arrowSch = a.outSch.Arrow()
				if err := a.initFold(shared); err != nil {
					b.Fatal(err)
				}
				t := &taskContext{ctx: context.Background(), job: job, mem: mem, batchSize: DefaultBatchSize, store: state.NewMemory()}
				if err := a.open(t); err != nil {
					b.Fatal(err)
				}
				out := &emitter{task: &subtask{job: job}}
				b.StartTimer()
				start := time.Now()
				for _, bt := range batches {
					if err := a.process(0, bt, out); err != nil {
						b.Fatal(err)
					}
				}
				if err := a.sets.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := a.dsets.Flush(); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				b.StopTimer()
				a.close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total)/float64(b.N*rows), "ns/row")
		})
	}
}
