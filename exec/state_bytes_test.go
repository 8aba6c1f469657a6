package exec

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestGroupBytesMatchHeap: the bytes a group aggregation's cache reports
// to the state memory budget (state.Cache.Bytes, groupBytes) are what its
// groups hold on the heap, within a quarter. An estimate below the heap
// lets the process outgrow its budget (and the Go runtime's soft limit,
// where the collector then runs without pause); one far above it evicts
// state that would fit.
func TestGroupBytesMatchHeap(t *testing.T) {
	const keys = 200_000
	in := types.Schema{{Name: "k", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}}
	agg := &planner.Aggregate{Input: &planner.Values{Cols: in}, Keys: []int{0}, Aggs: []planner.AggCall{
		{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "n", Text: "COUNT(*)"},
		{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s", Text: "SUM(v)"},
	}}
	op := &planner.Operator{ID: "g", Parallelism: 1, Schema: agg.Schema(), Spec: &planner.GroupAggSpec{Agg: agg}}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	job.opts.StateCacheEntries = 10 * keys
	sink := &subtask{inbox: make(chan Element, 1<<12)}
	sender := &subtask{job: job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: sink}}}}}
	em := sender.emitter()
	a, err := newGroupAgg(sender)
	if err != nil {
		t.Fatal(err)
	}
	// The groups stay in the cache, never written to the store, so the
	// heap they add is theirs (and their place in the dirty list).
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: state.NewMemory()}
	if err := a.open(tc); err != nil {
		t.Fatal(err)
	}
	defer tc.closeOperator(a)
	drain := func() {
		for {
			select {
			case el := <-sink.inbox:
				el.Batch.Rec.Release()
			default:
				return
			}
		}
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	batch := func(from int) Batch {
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		defer kb.Release()
		defer vb.Release()
		for k := from; k < from+1024; k++ {
			kb.Append(int64(k) * 7919)
			vb.Append(int64(k % 1000))
		}
		kc, vc := kb.NewArray(), vb.NewArray()
		defer kc.Release()
		defer vc.Release()
		return Batch{Rec: array.NewRecordBatch(sch, []arrow.Array{kc, vc}, 1024)}
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Warm up the operator's buffers, then count what the groups add.
	for k := 0; k < 4*1024; k += 1024 {
		b := batch(-1 - k - 1024)
		if err := a.process(0, b, em); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		drain()
	}
	before, beforeEst := heap(), a.cache.Bytes()
	for k := 0; k < keys; k += 1024 {
		b := batch(k)
		if err := a.process(0, b, em); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		drain()
	}
	drain()
	after, afterEst := heap(), a.cache.Bytes()
	n := float64(a.cache.Len() - 4*1024)
	real := float64(after-before) / n
	est := float64(afterEst-beforeEst) / n
	t.Logf("a cached group: %.0f bytes on the heap, %.0f estimated", real, est)
	if est < 0.75*real || est > 1.25*real {
		t.Fatalf("a cached group holds %.0f bytes of heap, the budget counts %.0f", real, est)
	}
	runtime.KeepAlive(a)
}

// TestResultsEncoding: the compact encoding of a group's last results
// round-trips every kind of result, and two results encode alike only
// when they are equal bit for bit (as Flink compares a group's old and new
// results: NaN equals NaN, -0 differs from 0).
func TestResultsEncoding(t *testing.T) {
	in := []scalar{
		{null: true}, {}, {i: -1}, {i: math.MaxInt64}, {f: 2.5}, {f: math.NaN()}, {f: math.Copysign(0, -1)},
		{d: decimal128.FromI64(-12345)}, {b: []byte("héllo")}, {i: 3, f: 1, d: decimal128.FromU64(7), b: []byte{0}},
	}
	enc := appendResults(nil, in)
	out := make([]scalar, len(in))
	if err := readResults(enc, out); err != nil {
		t.Fatal(err)
	}
	for j := range in {
		if in[j].null != out[j].null || in[j].i != out[j].i || math.Float64bits(in[j].f) != math.Float64bits(out[j].f) ||
			in[j].d != out[j].d || string(in[j].b) != string(out[j].b) {
			t.Errorf("result %d: %+v decoded as %+v", j, in[j], out[j])
		}
	}
	same := func(x, y scalar) bool {
		return string(appendResults(nil, []scalar{x})) == string(appendResults(nil, []scalar{y}))
	}
	if !same(scalar{f: math.NaN()}, scalar{f: math.NaN()}) || same(scalar{}, scalar{f: math.Copysign(0, -1)}) ||
		same(scalar{null: true}, scalar{}) || same(scalar{i: 1}, scalar{i: 2}) {
		t.Error("encodings equal where results differ, or differ where they are equal")
	}
	if err := readResults(enc[:len(enc)-1], out); err == nil {
		t.Error("a cut encoding decoded without an error")
	}
	if n := len(appendResults(nil, []scalar{{i: 5}})); n != 2 {
		t.Errorf("COUNT 5 takes %d bytes, want 2", n)
	}
}
