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

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestOverOperator drives one event-time OVER aggregation subtask by hand,
// so the files under over_testdata/ show what each batch and watermark
// emits. Input rows are (k VARCHAR, v BIGINT, ts TIMESTAMP), partitioned
// by k, ordered by ts; the aggregates are SUM(v), COUNT(*) and MAX(v).
// Commands:
//
//	init rows=N | range=S | unbounded [range]
//	             a new operator: ROWS BETWEEN N PRECEDING, RANGE BETWEEN
//	             INTERVAL 'S' SECOND PRECEDING, or UNBOUNDED PRECEDING
//	             (ROWS, or RANGE with the range flag), AND CURRENT ROW
//	batch        one batch, a row per line "k v ts" (v "null": NULL; ts in
//	             seconds); prints what is emitted
//	watermark S  the watermark moves to S seconds; prints what is emitted
//	end          the end of the input
//	checkpoint   a snapshot kept as the last checkpoint
//	restore      a new operator restored from the last checkpoint
//	state        the keys, retained and pending rows in the store
func TestOverOperator(t *testing.T) {
	datadriven.Walk(t, "over_testdata", func(t *testing.T, path string) {
		h := &overHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var overTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "ts", Type: types.TimestampOf(3)},
}

type overHarness struct {
	t    *testing.T
	dir  string
	spec *planner.OverSpec
	job  *Job
	op   *overOp
	recv *subtask
	em   *emitter
	out  types.Schema
	cp   string
	n    int
}

func (h *overHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func (h *overHarness) start(store state.Store, restored bool) {
	h.out = h.spec.Over.Schema()
	op := &planner.Operator{ID: "over", Parallelism: 1, Schema: h.out, Spec: h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	o, err := newOver(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, subtask: 0, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := o.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op = o
}

func (h *overHarness) emitted() string {
	var b strings.Builder
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.out {
					v := types.Format(c.Type, types.ValueAt(rec.Column(j), i))
					if j == 2 {
						v = strconv.FormatInt(int64(rec.Column(j).(*array.Timestamp).Value(i))/1e6, 10)
					}
					vals = append(vals, v)
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

func (h *overHarness) batch(input string) Batch {
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		kb.Append(f[0])
		if f[1] == "null" {
			vb.AppendNull()
		} else {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			vb.Append(v)
		}
		s, _ := strconv.ParseInt(f[2], 10, 64)
		tb.Append(arrow.Timestamp(s * 1e6))
		n++
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
	rec := array.NewRecordBatch(overTestInput.Arrow(), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return Batch{Rec: rec}
}

func (h *overHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		scan := &planner.Scan{Table: &catalog.Table{Name: "t", Columns: overTestInput}, Fields: []int{0, 1, 2}, Proctime: -1}
		o := &planner.Over{Input: scan, Partition: []int{0}, Order: []planner.SortKey{{Index: 2, NullsFirst: true}}, Rowtime: true}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "rows":
				o.Frame.Rows = true
				o.Frame.Start, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "range":
				if len(a.Vals) > 0 {
					s, _ := strconv.ParseInt(a.Vals[0], 10, 64)
					o.Frame.Start, o.Interval = s*1e6, true
				}
			case "unbounded":
				o.Frame.Rows, o.Frame.StartUnbounded = true, true
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		if d.HasArg("range") && d.HasArg("unbounded") {
			o.Frame.Rows = false
		}
		o.Aggs = []planner.AggCall{
			{Func: planner.AggSum, Arg: 1, ArgT: types.BigIntType, T: types.BigIntType.Nullable(), Name: "s"},
			{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "c"},
			{Func: planner.AggMax, Arg: 1, ArgT: types.BigIntType, T: types.BigIntType.Nullable(), Name: "mx"},
		}
		h.spec, h.job, h.n = &planner.OverSpec{Over: o}, nil, 0
		h.start(state.NewMemory(), false)
		return ""
	case "batch":
		b := h.batch(d.Input)
		err := h.op.process(0, b, h.em)
		b.Rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "watermark":
		s, _ := strconv.ParseInt(d.CmdArgs[0].Key, 10, 64)
		if err := h.op.watermark(s*1e6, h.em); err != nil {
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
		return fmt.Sprintf("ok, watermark %d\n", h.op.wm/1e6)
	case "state":
		if err := h.op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		codec := overCodec{fold: h.op.fold, owner: "test"}
		err := h.op.t.store.Scan(func(_ int, k, v []byte) error {
			if k[0] != spaceGroups {
				return nil
			}
			var p overPart
			if err := codec.Decode(v, &p); err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("key %q: retained %d, pending %d", k[len(k)-1:], p.done, len(p.rows)-p.done))
			return nil
		})
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return strings.Join(lines, "\n") + "\n"
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
