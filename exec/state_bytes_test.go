package exec

import (
	"context"
	"encoding/binary"
	"fmt"
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
// state that would fit. A COUNT/SUM group with a BIGINT key (its
// aggregates' state in one block of words, aggGroup) takes at most 160
// bytes with its cache entry and map slot (about 300 when it held its key
// values and an object per aggregate); a group whose aggregates keep
// objects (FIRST_VALUE) is counted right too.
func TestGroupBytesMatchHeap(t *testing.T) {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, T: bigint, Name: "n", Text: "COUNT(*)"}
	for _, c := range []struct {
		name string
		agg  planner.AggCall
		most float64 // heap bytes a group may take; 0: not checked
	}{
		{"COUNT/SUM", planner.AggCall{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s", Text: "SUM(v)"}, 160},
		{"COUNT/FIRST_VALUE", planner.AggCall{Func: planner.AggFirstValue, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "f", Text: "FIRST_VALUE(v)"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			real, est := groupHeapBytes(t, []planner.AggCall{count, c.agg})
			checkHeapBytes(t, "a cached group", real, est, c.most)
		})
	}
}

// groupHeapBytes returns the heap bytes a cached group of a group
// aggregate computing aggs over (k BIGINT, v BIGINT) GROUP BY k takes,
// measured over 200,000 groups, and those its cache counts.
func groupHeapBytes(t *testing.T, aggs []planner.AggCall) (real, est float64) {
	return aggHeapBytes(t, aggs, false, func(i int) (int64, int64) { return int64(i) * 7919, int64(i % 1000) },
		func(a *groupAggOp) (int64, int) { return a.cache.Bytes(), a.cache.Len() })
}

// TestDistinctBytesMatchHeap: the bytes the shared DISTINCT sets report
// to the state memory budget (distinctSets.Bytes) are what their values
// hold on the heap, within a quarter, so that the sets of a few groups
// with millions of values each (q16's) are bounded by the budget too.
func TestDistinctBytesMatchHeap(t *testing.T) {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	for _, c := range []struct {
		name string
		str  bool // v is a STRING of 12 bytes
		aggs []planner.AggCall
	}{
		{"COUNT(DISTINCT)", false, []planner.AggCall{
			{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, T: bigint, Distinct: true, Name: "d", Text: "COUNT(DISTINCT v)"}}},
		{"COUNT and SUM of DISTINCT v", false, []planner.AggCall{
			{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, T: bigint, Distinct: true, Name: "d", Text: "COUNT(DISTINCT v)"},
			{Func: planner.AggSum, Arg: 1, ArgT: types.BigIntType, T: types.BigIntType, Distinct: true, Name: "s", Text: "SUM(DISTINCT v)"}}},
		{"COUNT(DISTINCT) of a STRING", true, []planner.AggCall{
			{Func: planner.AggCount, Arg: 1, ArgT: types.StringType, T: bigint, Distinct: true, Name: "d", Text: "COUNT(DISTINCT v)"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			real, est := aggHeapBytes(t, c.aggs, c.str, func(i int) (int64, int64) { return int64(i % 2), int64(i) * 7919 },
				func(a *groupAggOp) (int64, int) {
					n := 0
					for _, s := range a.dsets.sets {
						n += s.live
					}
					return a.dsets.Bytes(), n
				})
			checkHeapBytes(t, "a DISTINCT value", real, est, 0)
		})
	}
}

// aggHeapBytes returns the heap bytes an item of a group aggregate
// computing aggs over (k BIGINT, v BIGINT) GROUP BY k takes, measured
// over 200,000 rows, row i being kv(i), and those the aggregate counts
// for it; size returns the bytes counted and the items. With str, v is
// a STRING: kv's v in 12 digits.
func aggHeapBytes(t *testing.T, aggs []planner.AggCall, str bool, kv func(i int) (k, v int64), size func(*groupAggOp) (int64, int)) (real, est float64) {
	const rows = 200_000
	in := types.Schema{{Name: "k", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}}
	vType := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if str {
		in[1].Type, vType = types.StringType, arrow.BinaryTypes.String
	}
	agg := &planner.Aggregate{Input: &planner.Values{Cols: in}, Keys: []int{0}, Aggs: aggs}
	// The state stays in memory, never written to the store, so the heap
	// it adds is its own (and its place in the dirty lists).
	a, em, sink := openTestGroupAgg(t, agg, 10*rows)
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
	sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: vType}}, nil)
	batch := func(from int) Batch {
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewBuilder(memory.DefaultAllocator, vType)
		defer kb.Release()
		defer vb.Release()
		for i := from; i < from+1024; i++ {
			k, v := kv(i)
			kb.Append(k)
			if str {
				vb.(*array.StringBuilder).Append(fmt.Sprintf("%012d", v))
			} else {
				vb.(*array.Int64Builder).Append(v)
			}
		}
		kc, vc := kb.NewArray(), vb.NewArray()
		defer kc.Release()
		defer vc.Release()
		return Batch{Rec: array.NewRecordBatch(sch, []arrow.Array{kc, vc}, 1024)}
	}
	// Warm up the operator's buffers, then count what the items add.
	for i := 0; i < 4*1024; i += 1024 {
		b := batch(-1 - i - 1024)
		if err := a.process(0, b, em); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		drain()
	}
	before := liveHeap()
	beforeEst, beforeN := size(a)
	for i := 0; i < rows; i += 1024 {
		b := batch(i)
		if err := a.process(0, b, em); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		drain()
	}
	drain()
	after := liveHeap()
	afterEst, afterN := size(a)
	n := float64(afterN - beforeN)
	runtime.KeepAlive(a)
	return float64(after-before) / n, float64(afterEst-beforeEst) / n
}

// TestSameResults: a group's old and new results are the same when they
// are equal bit for bit, as Flink compares them (NaN equals NaN, -0
// differs from 0), and a NULL is the same NULL whatever its fields hold.
func TestSameResults(t *testing.T) {
	same := func(x, y scalar) bool { return sameResults([]scalar{x}, []scalar{y}) }
	for _, c := range []struct {
		x, y scalar
		want bool
	}{
		{scalar{f: math.NaN()}, scalar{f: math.NaN()}, true},
		{scalar{}, scalar{f: math.Copysign(0, -1)}, false},
		{scalar{null: true}, scalar{}, false},
		{scalar{null: true, i: 3}, scalar{null: true}, true},
		{scalar{i: 1}, scalar{i: 2}, false},
		{scalar{d: decimal128.FromI64(-12345)}, scalar{d: decimal128.FromI64(-12345)}, true},
		{scalar{d: decimal128.FromI64(1)}, scalar{d: decimal128.FromI64(2)}, false},
		{scalar{b: []byte("héllo")}, scalar{b: []byte("héllo")}, true},
		{scalar{b: []byte("a")}, scalar{b: []byte("b")}, false},
	} {
		if got := same(c.x, c.y); got != c.want {
			t.Errorf("sameResults(%+v, %+v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	if sameResults([]scalar{{i: 1}, {i: 2}}, []scalar{{i: 1}, {i: 3}}) {
		t.Error("results differing in their second are the same")
	}
}

// TestWindowGroupBytesMatchHeap: the bytes a window aggregation's cache
// and its pending windows' lists report to the state memory budget
// (state.Cache.Bytes with windowGroupBytes, windowTimers.bytes) are what
// its groups hold on the heap, within a quarter. A COUNT(*) group keyed
// by a BIGINT (its row count in one word, aggGroup) takes at most 200
// bytes with its cache entry, map slot and place in its window's list
// (245 when it held its key values and an object per aggregate); a
// group whose aggregates keep objects (FIRST_VALUE) is counted right too.
func TestWindowGroupBytesMatchHeap(t *testing.T) {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	count := planner.AggCall{Func: planner.AggCount, Arg: -1, T: bigint, Name: "n", Text: "COUNT(*)"}
	for _, c := range []struct {
		name string
		aggs []planner.AggCall
		most float64 // heap bytes a group may take; 0: not checked
	}{
		{"COUNT", []planner.AggCall{count}, 200},
		{"COUNT/FIRST_VALUE", []planner.AggCall{count, {Func: planner.AggFirstValue, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "f", Text: "FIRST_VALUE(v)"}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			real, est := windowGroupHeapBytes(t, c.aggs)
			checkHeapBytes(t, "a cached window group", real, est, c.most)
		})
	}
}

// windowGroupHeapBytes returns the heap bytes a cached group of a window
// aggregation computing aggs over (k BIGINT, v BIGINT, ts TIMESTAMP(3))
// GROUP BY a one-hour tumbling window and k takes, measured over 200,000
// groups of one window, and those its cache and window lists count.
func windowGroupHeapBytes(t *testing.T, aggs []planner.AggCall) (real, est float64) {
	const keys = 200_000
	in := types.Schema{{Name: "k", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}, {Name: "ts", Type: types.TimestampOf(3)}}
	wa := &planner.WindowAggregate{
		Input:  &planner.Values{Cols: in},
		Window: planner.WindowSpec{Kind: "TUMBLE", TimeCol: 2, TimeName: "ts", Size: 3600e6},
		Keys:   []int{planner.WindowStartKey, planner.WindowEndKey, 0},
		Aggs:   aggs,
	}
	op := &planner.Operator{ID: "w", Parallelism: 1, Schema: wa.Schema(), Spec: &planner.WindowAggSpec{Agg: wa}}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	job.opts.StateCacheEntries = 10 * keys
	sender := &subtask{job: job, op: op}
	a, err := newWindowAgg(sender)
	if err != nil {
		t.Fatal(err)
	}
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: state.NewMemory()}
	if err := a.open(tc); err != nil {
		t.Fatal(err)
	}
	defer tc.closeOperator(a)
	sch := in.Arrow()
	batch := func(from int) Batch {
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, sch.Field(2).Type.(*arrow.TimestampType))
		defer kb.Release()
		defer vb.Release()
		defer tb.Release()
		for k := from; k < from+1024; k++ {
			kb.Append(int64(k) * 7919)
			vb.Append(int64(k % 1000))
			tb.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(k&1023)))
		}
		kc, vc, tcol := kb.NewArray(), vb.NewArray(), tb.NewArray()
		defer kc.Release()
		defer vc.Release()
		defer tcol.Release()
		return Batch{Rec: array.NewRecordBatch(sch, []arrow.Array{kc, vc, tcol}, 1024)}
	}
	est0 := func() int64 { return a.cache.Bytes() + a.timers.bytes }
	// Warm up the operator's buffers, then count what the groups add.
	for k := 0; k < 4*1024; k += 1024 {
		b := batch(-1 - k - 1024)
		if err := a.process(0, b, nil); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
	}
	before, beforeEst := liveHeap(), est0()
	for k := 0; k < keys; k += 1024 {
		b := batch(k)
		if err := a.process(0, b, nil); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
	}
	after, afterEst := liveHeap(), est0()
	n := float64(a.cache.Len() - 4*1024)
	runtime.KeepAlive(a)
	return float64(after-before) / n, float64(afterEst-beforeEst) / n
}

// openTestGroupAgg opens a group aggregate subtask computing agg over an
// in-memory store, its cache bounded to cacheEntries keys and no bytes,
// emitting into sink's inbox; the test closes it at its end.
func openTestGroupAgg(tb testing.TB, agg *planner.Aggregate, cacheEntries int) (*groupAggOp, *emitter, *subtask) {
	tb.Helper()
	op := &planner.Operator{ID: "g", Parallelism: 1, Schema: agg.Schema(), Spec: &planner.GroupAggSpec{Agg: agg}}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	job.opts.StateCacheEntries = cacheEntries
	sink := &subtask{inbox: make(chan Element, 1<<12)}
	sender := &subtask{job: job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: sink}}}}}
	a, err := newGroupAgg(sender)
	if err != nil {
		tb.Fatal(err)
	}
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: state.NewMemory()}
	if err := a.open(tc); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tc.closeOperator(a) })
	return a, sender.emitter(), sink
}

// checkHeapBytes checks that what takes real bytes of heap, which its
// cache estimates at est (within a quarter), and at most most (0: not
// checked).
func checkHeapBytes(t *testing.T, what string, real, est, most float64) {
	t.Helper()
	t.Logf("%s: %.0f bytes on the heap, %.0f estimated", what, real, est)
	if est < 0.75*real || est > 1.25*real {
		t.Errorf("%s holds %.0f bytes of heap, the budget counts %.0f", what, real, est)
	}
	if most > 0 && real > most {
		t.Errorf("%s holds %.0f bytes of heap, more than %.0f", what, real, most)
	}
}

// TestJoinSideBytesMatchHeap: the bytes a regular join's side reports to
// the state memory budget (joinSideState.bytes) are what its keys and
// rows hold on the heap, within a quarter, for keys of one row each (a
// join on a near-unique column, as q7's bids by price), of a few, and of
// many: the slices' room as allocated, not only what they hold.
func TestJoinSideBytesMatchHeap(t *testing.T) {
	for _, c := range []struct {
		name       string
		appendOnly bool
		perKey     int
	}{
		{"append-only, one row a key", true, 1},
		{"append-only, three rows a key", true, 3},
		{"append-only, fifty rows a key", true, 50},
		{"updating, one row a key", false, 1},
		{"updating, twenty rows a key", false, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			const rows = 200_000
			space := state.NewKeySpace(state.NewMemory(), 1, "join")
			s := newJoinSideState(space, planner.NoUniqueKey, c.appendOnly, false, "test", true)
			var key, row, id []byte
			before, beforeEst := liveHeap(), s.bytes()
			for i := 0; i < rows; i++ {
				key = binary.BigEndian.AppendUint64(append(key[:0], 1), uint64(i/c.perKey)*7919)
				k, err := s.lookup(i%128, key, true)
				if err != nil {
					t.Fatal(err)
				}
				// A bid's row: auction, price, bidder, time, a short extra.
				row = binary.BigEndian.AppendUint64(append(row[:0], 1), uint64(i))
				row = binary.BigEndian.AppendUint64(append(row, 1), uint64(i%5000))
				row = binary.BigEndian.AppendUint64(append(row, 1), uint64(i%777))
				row = binary.BigEndian.AppendUint64(append(row, 1), uint64(i)*1000)
				row = append(row, 1, 12, 0, 0, 0)
				row = append(row, "abcdefghijkl"...)
				id = row
				if c.appendOnly {
					id = s.nextID(id[:0:0])
				}
				s.add(k, id, row, 0)
			}
			after, afterEst := liveHeap(), s.bytes()
			runtime.KeepAlive(s)
			checkHeapBytes(t, "a join row", float64(after-before)/rows, float64(afterEst-beforeEst)/rows, 0)
		})
	}
}

// liveHeap is the heap's live bytes: allocated after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestWindowJoinBytesMatchHeap: the bytes a window join reports to the
// state memory budget for the rows of its open windows (windowJoinOp.bytes)
// are what they hold on the heap, within a quarter, whether a window's
// rows are under many keys or one (Nexmark q5's join of each auction's
// count with the window's largest: every row of a window under one key,
// whose list grows by doubling): the lists' room as allocated, not only
// what they hold.
func TestWindowJoinBytesMatchHeap(t *testing.T) {
	for _, keys := range []int{1, 50_000, 200_000} {
		t.Run(fmt.Sprintf("%d keys", keys), func(t *testing.T) {
			const rows = 200_000
			h := &opHarness{t: t, dir: t.TempDir()}
			defer h.close()
			wj := &wjHarness{opHarness: h, size: 3600e6}
			h.id, h.batchSize = "wj", 1024
			h.newOp = func(s *subtask) (operator, error) { return newWindowJoin(s) }
			wj.setSpec(planner.WindowInner)
			h.job = nil
			h.open(state.NewMemory(), false)
			j := h.op.(*windowJoinOp) // without a share of a budget: nothing spills
			sch := wjTestInput.Arrow()
			batch := func(from int) Batch {
				rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				defer rb.Release()
				for i := from; i < from+1024; i++ {
					rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%d", i%keys))
					rb.Field(1).(*array.Int64Builder).Append(int64(i))
					rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000))
					rb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_003_600_000_000))
				}
				return Batch{Rec: rb.NewRecordBatch()}
			}
			before, beforeEst := liveHeap(), j.bytes
			for i := 0; i < rows; i += 1024 {
				b := batch(i)
				if err := j.process(0, b, h.em); err != nil {
					t.Fatal(err)
				}
				b.Rec.Release()
			}
			after, afterEst := liveHeap(), j.bytes
			n := float64(j.rows)
			runtime.KeepAlive(j)
			checkHeapBytes(t, "a window join row", float64(after-before)/n, float64(afterEst-beforeEst)/n, 0)
		})
	}
}
