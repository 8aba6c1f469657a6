package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestGroupAggOperator drives one group aggregation subtask by hand with
// a clock of its own, so the files under agg_testdata/ show what a state
// TTL and mini-batches do to the changelog. Its input rows are
// (k VARCHAR, v BIGINT) with a changelog op, and it computes GROUP BY k
// with COUNT(*), SUM(v), MAX(v) and COUNT(DISTINCT v) (MAX and the
// DISTINCT count keep value sets). Commands:
//
//	init [ttl=SECONDS] [minibatch=ROWS latency=SECONDS]  a new operator at clock 0; prints nothing
//	clock SECONDS                  set the processing-time clock
//	batch                          one input batch, a row per line "op k v"; prints what is emitted
//	timer                          the mini-batch timer, if due; prints what is emitted
//	checkpoint                     what the operator emits before the barrier, then a snapshot kept as the last checkpoint
//	restore                        a new operator restored from the last checkpoint
//	end                            end of input; prints what is emitted
//	state                          groups and set values in the store, cached groups, expired count
func TestGroupAggOperator(t *testing.T) {
	datadriven.Walk(t, "agg_testdata", func(t *testing.T, path string) {
		h := &groupAggHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var gaTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
}

var gaTestAggs = []planner.AggCall{
	{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "n", Text: "COUNT(*)"},
	{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s", Text: "SUM(v)"},
	{Func: planner.AggMax, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "m", Text: "MAX(v)"},
	{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, Distinct: true, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "d", Text: "COUNT(DISTINCT v)"},
}

// clockBase is the harness clock's 0 s (2023-11-14 22:13:20 UTC): a
// group's write time is never 0, which the state reads as unknown.
const clockBase = 1_700_000_000_000

type groupAggHarness struct {
	t      *testing.T
	dir    string
	spec   planner.GroupAggSpec
	clock  int64 // milliseconds
	job    *Job
	op     *groupAggOp
	recv   *subtask
	em     *emitter
	outSch types.Schema
	cp     string
	n      int
}

func (h *groupAggHarness) close() {
	if h.op != nil {
		h.op.close()
	}
}

func (h *groupAggHarness) start(store state.Store, restored bool) {
	op := &planner.Operator{ID: "g", Parallelism: 1, Schema: h.spec.Agg.Schema(), Spec: &h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	a, err := newGroupAgg(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	a.clock = func() int64 { return h.clock }
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := a.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op, h.outSch = a, op.Schema
}

func (h *groupAggHarness) emitted() string {
	var b strings.Builder
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.outSch {
					vals = append(vals, types.Format(c.Type, types.ValueAt(rec.Column(j), i)))
				}
				fmt.Fprintf(&b, "%s[%s]\n", el.Batch.Op(i), strings.Join(vals, ", "))
			}
			rec.Release()
		default:
			if b.Len() == 0 {
				return "(nothing)\n"
			}
			return b.String()
		}
	}
}

func seconds(t *testing.T, s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(f * float64(time.Second))
}

func (h *groupAggHarness) batch(t *testing.T, input string) Batch {
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	var ops []RowKind
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		ops = append(ops, map[string]RowKind{"+I": Insert, "+U": UpdateAfter, "-U": UpdateBefore, "-D": Delete}[f[0]])
		kb.Append(f[1])
		v, _ := strconv.ParseInt(f[2], 10, 64)
		vb.Append(v)
		rows++
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
	rec := array.NewRecordBatch(gaTestInput.Arrow(), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return Batch{Rec: rec, Ops: ops}
}

func (h *groupAggHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		agg := &planner.Aggregate{Input: &planner.Values{Cols: gaTestInput}, Keys: []int{0}, Aggs: gaTestAggs}
		h.spec = planner.GroupAggSpec{Agg: agg, InputUpdating: true}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "ttl":
				h.spec.TTL = seconds(t, a.Vals[0])
			case "minibatch":
				h.spec.MiniBatchSize, _ = strconv.Atoi(a.Vals[0])
			case "latency":
				h.spec.MiniBatchLatency = seconds(t, a.Vals[0])
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		h.job, h.clock, h.n = nil, clockBase, 0
		h.start(state.NewMemory(), false)
		return ""
	case "clock":
		h.clock = clockBase + seconds(t, d.CmdArgs[0].Key).Milliseconds()
		return ""
	case "batch":
		b := h.batch(t, d.Input)
		err := h.op.process(0, b, h.em)
		b.Rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "timer":
		if at, ok := h.op.deadline(); ok && h.clock < at.UnixMilli() {
			return fmt.Sprintf("(not due: the mini-batch ends at %s s)\n", strconv.FormatFloat(float64(at.UnixMilli()-clockBase)/1000, 'f', -1, 64))
		}
		if err := h.op.onTimer(h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "checkpoint":
		// As the subtask does: what the operator holds back goes
		// downstream before the barrier, then the snapshot.
		if err := h.op.flushBuffered(h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.n++
		rel := fmt.Sprintf("chk-%d", h.n)
		if _, err := h.op.snapshot(&snapshotContext{id: int64(h.n), dir: h.dir, rel: rel}); err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.cp = filepath.Join(h.dir, rel)
		return h.emitted()
	case "restore":
		h.close()
		work := filepath.Join(h.dir, fmt.Sprintf("work-%d", h.n))
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := state.MemoryBackend{}.Restore(work, []string{h.cp}, 0, 127)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.start(s, true)
		return "ok\n"
	case "end":
		if err := h.op.endInput(h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "state":
		if err := h.op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := h.op.sets.Flush(); err != nil {
			t.Fatal(err)
		}
		groups, values := 0, 0
		h.op.t.store.Scan(func(_ int, k, _ []byte) error {
			switch k[0] {
			case spaceGroups:
				groups++
			case spaceValues:
				values++
			}
			return nil
		})
		return fmt.Sprintf("groups=%d set-values=%d cached=%d expired=%d\n", groups, values, h.op.cache.Len(), h.job.stateExpired.Load())
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
