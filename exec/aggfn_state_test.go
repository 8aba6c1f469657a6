package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// groupHarness drives one global group aggregate subtask over one BIGINT
// column v by hand.
type groupHarness struct {
	t    *testing.T
	dir  string
	op   *groupAggOp
	tc   *taskContext
	recv *subtask
	em   *emitter
	n    int
	cp   string
}

var groupTestInput = types.Schema{{Name: "v", Type: types.BigIntType}}

func (h *groupHarness) start(aggs []planner.AggCall, store state.Store, restored bool) error {
	in := &planner.Values{Cols: groupTestInput}
	agg := &planner.Aggregate{Input: in, Aggs: aggs}
	op := &planner.Operator{ID: "g", Parallelism: 1, Schema: agg.Schema(), Spec: &planner.GroupAggSpec{Agg: agg, InputUpdating: true}}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	h.recv = &subtask{inbox: make(chan Element, 1<<12)}
	sender := &subtask{job: job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	a, err := newGroupAgg(sender)
	if err != nil {
		return err
	}
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := a.open(tc); err != nil {
		return err
	}
	h.op, h.tc = a, tc
	return nil
}

func (h *groupHarness) batch(op RowKind, vs ...int64) {
	h.t.Helper()
	b := int64Batch(vs, op)
	defer b.Rec.Release()
	if err := h.op.process(0, b, h.em); err != nil {
		h.t.Fatal(err)
	}
}

// last is the last row emitted (draining the rest).
func (h *groupHarness) last() string {
	var s string
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j := range rec.Columns() {
					vals = append(vals, fmt.Sprint(types.ValueAt(rec.Column(j), i)))
				}
				s = fmt.Sprintf("%s[%s]", el.Batch.Op(i), strings.Join(vals, ", "))
			}
			rec.Release()
		default:
			return s
		}
	}
}

func (h *groupHarness) checkpoint() {
	h.t.Helper()
	h.n++
	rel := fmt.Sprintf("chk-%d", h.n)
	if err := snapshotNow(h.tc, h.op, &snapshotContext{id: int64(h.n), dir: h.dir, rel: rel}); err != nil {
		h.t.Fatal(err)
	}
	h.cp = filepath.Join(h.dir, rel)
}

func (h *groupHarness) restore(aggs []planner.AggCall) error {
	h.tc.closeOperator(h.op)
	work := filepath.Join(h.dir, fmt.Sprintf("work-%d", h.n))
	if err := os.MkdirAll(work, 0o755); err != nil {
		h.t.Fatal(err)
	}
	s, err := state.MemoryBackend{}.Restore(work, []string{h.cp}, 0, 127)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.start(aggs, s, true)
}

func aggCall(f planner.AggFunc, distinct bool, t types.T) planner.AggCall {
	return planner.AggCall{Func: f, Arg: 0, ArgT: types.BigIntType, T: t, Distinct: distinct, Text: string(f) + "(v)"}
}

var minMaxDistinct = []planner.AggCall{
	aggCall(planner.AggMax, false, types.BigIntType),
	aggCall(planner.AggMin, false, types.BigIntType),
	aggCall(planner.AggCount, true, types.T{Kind: types.BigInt, NotNull: true}),
}

// MIN, MAX and COUNT(DISTINCT) over an updating input keep their values in
// key spaces of their own, not in the group's entry, and survive a restore:
// retracting the extremes after it finds the next ones from the restored
// sets.
func TestGroupAggValueSetsRestore(t *testing.T) {
	h := &groupHarness{t: t, dir: t.TempDir()}
	if err := h.start(minMaxDistinct, state.NewMemory(), false); err != nil {
		t.Fatal(err)
	}
	defer func() { h.tc.closeOperator(h.op) }()
	var vs []int64
	for v := int64(1); v <= 1000; v++ {
		vs = append(vs, v, v)
	}
	h.batch(Insert, vs...)
	if got := h.last(); got != "+I[1000, 1, 1000]" {
		t.Fatalf("after inserts: %s", got)
	}
	h.checkpoint()
	groups, values, distinct, entryBytes := 0, 0, 0, 0
	h.op.t.store.Scan(func(_ int, k, v []byte) error {
		switch k[0] {
		case spaceGroups:
			groups++
			entryBytes += len(v)
		case spaceValues:
			values++
		case spaceDistinct:
			distinct++
		}
		return nil
	})
	if groups != 1 || values != 2000 || distinct != 1000 || entryBytes > 300 {
		t.Fatalf("state: %d groups (%d bytes), %d set values, %d DISTINCT values; want 1 small group, 2 sets of 1000 values and 1000 DISTINCT values", groups, entryBytes, values, distinct)
	}
	if err := h.restore(minMaxDistinct); err != nil {
		t.Fatal(err)
	}
	h.batch(Delete, 1000, 1)
	if got := h.last(); got != "" {
		t.Fatalf("after retracting one 1000 and one 1 (results unchanged): %s", got)
	}
	h.batch(Delete, 1000, 1, 999)
	if got := h.last(); got != "+U[999, 2, 998]" {
		t.Fatalf("after retracting the other 1000 and 1 and one 999: %s", got)
	}
	h.checkpoint()
	if err := h.restore(minMaxDistinct); err != nil {
		t.Fatal(err)
	}
	h.batch(Delete, 999, 2, 2)
	if got := h.last(); got != "+U[998, 3, 996]" {
		t.Fatalf("after a second restore: %s", got)
	}
}

// A restore into a query with another list of aggregates, or another
// argument type, fails with ErrIncompatibleState naming the operator and
// both layouts.
func TestGroupAggIncompatibleRestore(t *testing.T) {
	h := &groupHarness{t: t, dir: t.TempDir()}
	if err := h.start(minMaxDistinct, state.NewMemory(), false); err != nil {
		t.Fatal(err)
	}
	h.batch(Insert, 1, 2, 3)
	h.checkpoint()
	for _, aggs := range [][]planner.AggCall{
		append(minMaxDistinct[:3:3], aggCall(planner.AggSum, false, types.BigIntType)),
		minMaxDistinct[:2],
		{minMaxDistinct[1], minMaxDistinct[0], minMaxDistinct[2]},
	} {
		err := h.restore(aggs)
		if !errors.Is(err, checkpoint.ErrIncompatibleState) || !strings.Contains(err.Error(), "operator g") ||
			!strings.Contains(err.Error(), "the query computes") {
			t.Fatalf("restore into %d aggregates: %v", len(aggs), err)
		}
		h.op = &groupAggOp{} // nothing opened
	}
}

// An entry whose accumulators are of other aggregates is
// ErrIncompatibleState when decoded, even without the layout record.
func TestGroupCodecChecksTags(t *testing.T) {
	mk := func(aggs []planner.AggCall) *groupAggOp {
		a := &groupAggOp{spec: &planner.Aggregate{Aggs: aggs}, updating: true}
		if err := a.init(); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := mk([]planner.AggCall{aggCall(planner.AggSum, false, types.BigIntType)})
	var g aggGroup
	a.initGroup(&g)[0] = 1
	enc := groupCodec{a: a, owner: "operator g"}.EncodeKeyed(nil, "", &g)
	b := mk([]planner.AggCall{aggCall(planner.AggCount, false, types.BigIntType)})
	var out aggGroup
	err := groupCodec{a: b, owner: "operator g"}.DecodeKeyed(enc, "", &out)
	if !errors.Is(err, checkpoint.ErrIncompatibleState) || !strings.Contains(err.Error(), "COUNT(v)") {
		t.Fatalf("decoding SUM state as COUNT: %v", err)
	}
	if err := (groupCodec{a: b, owner: "operator g"}).DecodeKeyed(enc[2:], "", &out); !errors.Is(err, checkpoint.ErrIncompatibleState) {
		t.Fatalf("decoding state without a header: %v", err)
	}
}

// A COUNT(*) reads its group's row count (it keeps no count of its own):
// a stored count that differs from the stored row count is corrupt state.
func TestGroupCodecCountStar(t *testing.T) {
	a := &groupAggOp{spec: &planner.Aggregate{Aggs: []planner.AggCall{
		{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Text: "COUNT(*)"},
		aggCall(planner.AggSum, false, types.BigIntType),
	}}}
	if err := a.init(); err != nil {
		t.Fatal(err)
	}
	if !a.flat || a.nw != 3 {
		t.Fatalf("COUNT(*), SUM: flat %v in %d words, want flat in 3 (rows, SUM's count and sum)", a.flat, a.nw)
	}
	var g aggGroup
	a.initGroup(&g)[0] = 3
	enc := groupCodec{a: a, owner: "operator g"}.EncodeKeyed(nil, "", &g)
	var out aggGroup
	if err := (groupCodec{a: a, owner: "operator g"}).DecodeKeyed(enc, "", &out); err != nil || a.words(&out)[0] != 3 {
		t.Fatalf("decoded %v, %v", a.words(&out), err)
	}
	i := bytes.Index(enc, []byte{2, 'C', 6}) // two aggregates, COUNT(*) = 3
	if i < 0 {
		t.Fatalf("no COUNT(*) of 3 in %x", enc)
	}
	enc[i+2] = 8
	if err := (groupCodec{a: a, owner: "operator g"}).DecodeKeyed(enc, "", &out); !errors.Is(err, errCorrupt) {
		t.Fatalf("COUNT(*) 4 of a group of 3 rows decoded: %v", err)
	}
}
