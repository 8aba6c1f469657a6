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

// TestIntervalJoinOperator drives one interval join subtask by hand, so the
// files under interval_join_testdata/ show when rows join, expire and are
// padded, what a late row does and what watermark goes on. Both inputs are
// (k VARCHAR, v BIGINT, ts TIMESTAMP(3)), joined on k with
// R.ts + lower <= L.ts <= R.ts + upper. Times are hh:mm:ss on 2024-01-01;
// "null" is a NULL. Commands:
//
//	init [type=inner|left|right|full] lower=-10 upper=0 [residual] [cache=n]
//	                     a new operator (bounds in seconds; residual: L.v < R.v; cache: Options.StateCacheEntries)
//	left, right          one batch of that input, a row per line "k v time"; prints what is emitted
//	watermark time       a watermark advance; prints what is emitted and the watermark forwarded
//	end                  end of input; prints what is emitted
//	checkpoint, restore  snapshot into a checkpoint; a new operator restored from the last one
//	state                rows held per side in memory and in the store, keys with rows (and
//	                     those whose rows all expired, kept until the next write-back)
//	late                 the late rows counted so far
func TestIntervalJoinOperator(t *testing.T) {
	datadriven.Walk(t, "interval_join_testdata", func(t *testing.T, path string) {
		h := &ivHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

type ivHarness struct {
	t      *testing.T
	dir    string
	spec   *planner.IntervalJoinSpec
	job    *Job
	op     *intervalJoinOp
	sub    *subtask
	recv   *subtask
	em     *emitter
	outSch types.Schema
	cp     string
	n      int
}

func (h *ivHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func (h *ivHarness) start(store state.Store, restored bool) {
	out := (&planner.Join{Left: &planner.Values{Cols: windowTestInput}, Right: &planner.Values{Cols: windowTestInput}, Type: h.spec.Type}).Schema()
	op := &planner.Operator{ID: "ij", Parallelism: 1, Schema: out, Spec: h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	h.sub = &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = h.sub.emitter()
	j, err := newIntervalJoin(h.sub)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sub.impl = j
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := j.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op, h.outSch = j, out
}

func ivTime(t *testing.T, s string) int64 {
	tm, err := time.Parse("2006-01-02 15:04:05", "2024-01-01 "+s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMicro()
}

func (h *ivHarness) emitted() string {
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

func (h *ivHarness) batch(t *testing.T, input int, text string) string {
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if f[0] == "null" {
			kb.AppendNull()
		} else {
			kb.Append(f[0])
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		vb.Append(v)
		if f[2] == "null" {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(ivTime(t, f[2])))
		}
		rows++
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
	rec := array.NewRecordBatch(windowTestInput.Arrow(), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	err := h.op.process(input, Batch{Rec: rec}, h.em)
	rec.Release()
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return h.emitted()
}

func (h *ivHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		h.spec = &planner.IntervalJoinSpec{LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
			LeftTime: 2, RightTime: 2, LeftSchema: windowTestInput, RightSchema: windowTestInput}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "type":
				h.spec.Type = map[string]planner.JoinType{"inner": planner.InnerJoin, "left": planner.LeftJoin, "right": planner.RightJoin, "full": planner.FullJoin}[a.Vals[0]]
			case "lower", "upper":
				n, _ := strconv.Atoi(a.Vals[0])
				if a.Key == "lower" {
					h.spec.Lower = int64(n) * 1e6
				} else {
					h.spec.Upper = int64(n) * 1e6
				}
			case "residual":
				lt, _ := functions.Lookup("<")
				r, err := lt.Resolve([]types.T{types.BigIntType, types.BigIntType})
				if err != nil {
					t.Fatal(err)
				}
				h.spec.Residual = &planner.Call{Func: "<", Resolved: r, Args: []planner.Expr{
					&planner.ColumnRef{Index: 1, Name: "v", T: types.BigIntType}, &planner.ColumnRef{Index: 4, Name: "v0", T: types.BigIntType}}}
			}
		}
		h.job = nil
		h.start(state.NewMemory(), false)
		for _, a := range d.CmdArgs {
			if a.Key == "cache" {
				h.job.opts.StateCacheEntries, _ = strconv.Atoi(a.Vals[0])
			}
		}
		return ""
	case "left", "right":
		input := 0
		if d.Cmd == "right" {
			input = 1
		}
		return h.batch(t, input, d.Input)
	case "watermark":
		wm := ivTime(t, d.CmdArgs[0].Key)
		if err := h.op.watermark(wm, h.em); err != nil {
			return "error: " + err.Error() + "\n"
		}
		fwd := h.sub.outWatermark(wm)
		return h.emitted() + "forwards " + types.Format(types.TimestampOf(3), types.ValueAt(timestampArray(fwd), 0)) + "\n"
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
		var b strings.Builder
		stored := [2]int{}
		h.op.t.store.Scan(func(_ int, k, _ []byte) error {
			switch k[0] {
			case spaceJoinLeft:
				stored[0]++
			case spaceJoinRight:
				stored[1]++
			}
			return nil
		})
		for s, name := range []string{"left", "right"} {
			st := h.op.side[s].st
			keys, empty := 0, 0
			for _, k := range st.keys {
				if k.n > 0 {
					keys++
				} else {
					empty++
				}
			}
			fmt.Fprintf(&b, "%s: held=%d in-memory=%d stored=%d keys=%d", name, st.held, st.rows, stored[s], keys)
			if empty > 0 {
				fmt.Fprintf(&b, " empty-keys=%d", empty)
			}
			b.WriteString("\n")
		}
		return b.String()
	case "late":
		return fmt.Sprintf("%d\n", h.job.lateRecords.Load())
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func timestampArray(us int64) arrow.Array {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer b.Release()
	b.Append(arrow.Timestamp(us))
	return b.NewArray()
}
