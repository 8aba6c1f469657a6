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

// TestWindowOperator drives one window aggregation subtask by hand, so the
// files under window_testdata/ show exactly when windows fire. Its input
// rows are (k VARCHAR, v BIGINT, ts TIMESTAMP(3)) and it computes
// GROUP BY window_start, window_end, k with COUNT(*) and SUM(v). Times are
// written hh:mm:ss[.fff] on 2024-01-01. Commands:
//
//	init kind=TUMBLE size=60 [slide=10]   a new operator (seconds); prints nothing
//	batch                                 one input batch, a row per line "k v time"; prints what is emitted
//	watermark time                        a watermark advance; prints what is emitted
//	end                                   end of input; prints what is emitted
//	checkpoint                            snapshot into a checkpoint and keep it
//	restore                               a new operator restored from the last checkpoint
//	state                                 entries in the store (groups, watermark entries) and pending windows
//	late                                  the late records counted so far
func TestWindowOperator(t *testing.T) {
	datadriven.Walk(t, "window_testdata", func(t *testing.T, path string) {
		h := &aggHarness{t: t, dir: t.TempDir(), aggs: windowTestAggs[:2],
			init: func(h *aggHarness, d *datadriven.TestData) {
				for _, a := range d.CmdArgs {
					switch a.Key {
					case "kind":
						h.spec.Kind = a.Vals[0]
					case "size", "slide":
						n, _ := strconv.Atoi(a.Vals[0])
						if a.Key == "size" {
							h.spec.Size = int64(n) * 1e6
						} else {
							h.spec.Slide = int64(n) * 1e6
						}
					}
				}
			},
			newOp: func(t *subtask) (aggTestOp, error) { return newWindowAgg(t) },
			state: func(h *aggHarness) string {
				op := h.op.(*windowAggOp)
				if err := op.cache.Flush(); err != nil {
					h.t.Fatal(err)
				}
				groups, wms := countStateKeys(op.t.store)
				return fmt.Sprintf("groups=%d watermark-entries=%d pending-windows=%d cached=%d\n", groups, wms, len(op.timers.ends), op.cache.Len())
			},
		}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var windowTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "ts", Type: types.TimestampOf(3)},
}

// windowTestAggs are COUNT(*), SUM(v) and MAX(v) over windowTestInput.
var windowTestAggs = []planner.AggCall{
	{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "n"},
	{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s"},
	{Func: planner.AggMax, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "m"},
}

func windowTestTime(t *testing.T, s string) int64 {
	tm, err := time.Parse("2006-01-02 15:04:05", "2024-01-01 "+s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMicro()
}

// countStateKeys counts the entries of store's groups key space and its
// watermark entries.
func countStateKeys(store state.Store) (keys, wms int) {
	store.Scan(func(_ int, k, _ []byte) error {
		switch {
		case string(k) == string(windowWatermarkKey):
			wms++
		case k[0] == spaceGroups:
			keys++
		}
		return nil
	})
	return keys, wms
}

// aggTestOp is a window or session aggregation operator under test.
type aggTestOp interface {
	operator
	watermarkOperator
}

// aggHarness drives one window or session aggregation subtask by hand, over
// windowTestInput, grouping by window_start, window_end and k; what differs
// between the two tests is how init reads the window, the operator, and
// what state prints.
type aggHarness struct {
	t      *testing.T
	dir    string
	aggs   []planner.AggCall
	init   func(h *aggHarness, d *datadriven.TestData)
	newOp  func(t *subtask) (aggTestOp, error)
	state  func(h *aggHarness) string
	spec   planner.WindowSpec
	job    *Job
	op     aggTestOp
	recv   *subtask
	em     *emitter
	outSch types.Schema
	cp     string // last checkpoint directory
	n      int
}

func (h *aggHarness) close() {
	if h.op != nil {
		h.op.close()
	}
}

// start builds the operator over store (restored says it holds a checkpoint).
func (h *aggHarness) start(store state.Store, restored bool) {
	wa := &planner.WindowAggregate{
		Input:  &planner.Values{Cols: windowTestInput},
		Window: h.spec,
		Keys:   []int{planner.WindowStartKey, planner.WindowEndKey, 0},
		Aggs:   h.aggs,
	}
	op := &planner.Operator{ID: "w", Parallelism: 1, Schema: wa.Schema(), Spec: &planner.WindowAggSpec{Agg: wa}}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	a, err := h.newOp(sender)
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
	h.op, h.outSch = a, op.Schema
}

func (h *aggHarness) emitted() string {
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

func (h *aggHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		h.spec = planner.WindowSpec{TimeCol: 2, TimeName: "ts"}
		h.init(h, d)
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
		return h.state(h)
	case "late":
		return fmt.Sprintf("%d\n", h.job.lateRecords.Load())
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
