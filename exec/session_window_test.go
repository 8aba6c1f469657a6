package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestSessionWindowOperator drives one session window aggregation subtask
// by hand, as TestWindowOperator does, so the files under
// session_window_testdata/ show exactly when sessions merge and fire. Input
// rows are (k VARCHAR, v BIGINT, ts TIMESTAMP(3)); it computes GROUP BY
// window_start, window_end, k with COUNT(*), SUM(v) and MAX(v). Commands:
//
//	init gap=10                           a new operator (gap in seconds); prints nothing
//	batch                                 one input batch, a row per line "k v time"; prints what is emitted
//	watermark time                        a watermark advance; prints what is emitted
//	end                                   end of input; prints what is emitted
//	checkpoint                            snapshot into a checkpoint and keep it
//	restore                               a new operator restored from the last checkpoint
//	state                                 entries in the store (keys with open sessions, watermark entries), timers
//	late                                  the late records counted so far
func TestSessionWindowOperator(t *testing.T) {
	datadriven.Walk(t, "session_window_testdata", func(t *testing.T, path string) {
		h := &sessionHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

type sessionHarness struct {
	t      *testing.T
	dir    string
	spec   planner.WindowSpec
	job    *Job
	op     *sessionAggOp
	recv   *subtask
	em     *emitter
	cp     string // last checkpoint directory
	outSch types.Schema
	n      int
}

func (h *sessionHarness) close() {
	if h.op != nil {
		h.op.close()
	}
}

// start builds the operator over store (restored says it holds a checkpoint).
func (h *sessionHarness) start(store state.Store, restored bool) {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	wa := &planner.WindowAggregate{
		Input:  &planner.Values{Cols: windowTestInput},
		Window: h.spec,
		Keys:   []int{planner.WindowStartKey, planner.WindowEndKey, 0},
		Aggs: []planner.AggCall{
			{Func: planner.AggCount, Arg: -1, T: bigint, Name: "n"},
			{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s"},
			{Func: planner.AggMax, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "m"},
		},
	}
	op := &planner.Operator{ID: "w", Kind: planner.OpWindowAggregate, Parallelism: 1, Schema: wa.Schema(), WindowAgg: wa}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	a, err := newSessionAgg(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := a.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op = a
	h.outSch = op.Schema
}

func (h *sessionHarness) emitted() string {
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

func (h *sessionHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		h.spec = planner.WindowSpec{Kind: "SESSION", TimeCol: 2, TimeName: "ts"}
		for _, a := range d.CmdArgs {
			if a.Key == "gap" {
				n, _ := strconv.Atoi(a.Vals[0])
				h.spec.Size = int64(n) * 1e6
			}
		}
		h.job = nil
		h.start(state.NewMemory(), false)
		return ""
	case "batch":
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
		rows := 0
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			kb.Append(f[0])
			v, _ := strconv.ParseInt(f[1], 10, 64)
			vb.Append(v)
			tb.Append(arrow.Timestamp(windowTestTime(t, f[2])))
			rows++
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
		rec := array.NewRecordBatch(windowTestInput.Arrow(), cols, int64(rows))
		for _, c := range cols {
			c.Release()
		}
		err := h.op.process(0, Batch{Rec: rec}, h.em)
		rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "watermark":
		if err := h.op.watermark(windowTestTime(t, d.CmdArgs[0].Key), h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "end":
		if err := h.op.endInput(h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "checkpoint":
		h.n++
		rel := fmt.Sprintf("chk-%d", h.n)
		if _, err := h.op.snapshot(&snapshotContext{id: int64(h.n), dir: h.dir, rel: rel}); err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.cp = filepath.Join(h.dir, rel)
		return "ok\n"
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
	case "state":
		if err := h.op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		groups, wms := 0, 0
		h.op.t.store.Scan(func(_ int, k, _ []byte) error {
			if k[0] == 0 {
				wms++
			} else {
				groups++
			}
			return nil
		})
		return fmt.Sprintf("keys=%d watermark-entries=%d timers=%d cached=%d\n", groups, wms, len(h.op.timers.ends), h.op.cache.Len())
	case "late":
		return fmt.Sprintf("%d\n", h.job.lateRecords.Load())
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
