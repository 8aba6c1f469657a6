package exec

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// TestWindowJoinOperator drives one window join subtask by hand, so the
// files under window_join_testdata/ show exactly when windows fire. Each
// input's rows are (k VARCHAR, v BIGINT, window_start, window_end) of
// TUMBLE windows, joined on k (and the window). Times are written
// hh:mm:ss on 2024-01-01. Commands:
//
//	init type=inner|left|right|full|semi|anti size=60   a new operator (window size in seconds)
//	batch side=left|right    one batch, a row per line "k v time" (k "null": a NULL key); prints what is emitted
//	watermark time           a watermark advance; prints what is emitted
//	end                      end of input; prints what is emitted
//	checkpoint               snapshot into a checkpoint and keep it
//	restore                  a new operator restored from the last checkpoint
//	state                    rows in the store, open windows and rows held
//	late                     the late records counted so far
//	dump                     the stored rows: "kg key value" in hex, in key order
//	load                     a new operator restored from rows given as dump prints them (and this build's layout entry)
func TestWindowJoinOperator(t *testing.T) {
	datadriven.Walk(t, "window_join_testdata", func(t *testing.T, path string) {
		h := &wjHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var wjTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "window_start", Type: types.TimestampOf(3)},
	{Name: "window_end", Type: types.TimestampOf(3)},
}

type wjHarness struct {
	t      *testing.T
	dir    string
	typ    planner.WindowJoinType
	size   int64
	job    *Job
	op     *windowJoinOp
	recv   *subtask
	em     *emitter
	outSch types.Schema
	cp     string
	n      int
}

func (h *wjHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func (h *wjHarness) start(store state.Store, restored bool) {
	pair := append(types.Schema{}, wjTestInput...)
	for _, c := range wjTestInput {
		c.Name += "0"
		pair = append(pair, c)
	}
	out := pair
	if h.typ.LeftOnly() {
		out = wjTestInput
	}
	spec := &planner.WindowJoinSpec{
		Type: h.typ, Window: planner.WindowSpec{Kind: "TUMBLE", Size: h.size},
		LeftKeys: []int{0}, RightKeys: []int{0}, LeftHash: []int{0}, RightHash: []int{0},
		LeftStart: 2, LeftEnd: 3, RightStart: 2, RightEnd: 3,
		LeftWidth: 4, RightWidth: 4, LeftSchema: wjTestInput, RightSchema: wjTestInput, PairSchema: pair,
	}
	op := &planner.Operator{ID: "wj", Parallelism: 1, Schema: out, Spec: spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	j, err := newWindowJoin(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 2, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := j.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op, h.outSch = j, out
}

func (h *wjHarness) emitted() string {
	var lines []string
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.outSch {
					vals = append(vals, types.Format(c.Type, types.ValueAt(rec.Column(j), i)))
				}
				lines = append(lines, fmt.Sprintf("%s[%s]", el.Batch.Op(i), strings.Join(vals, ", ")))
			}
			rec.Release()
		default:
			if len(lines) == 0 {
				return "(nothing)\n"
			}
			return strings.Join(lines, "\n") + "\n"
		}
	}
}

func (h *wjHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		h.typ, h.size = planner.WindowInner, 60e6
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "type":
				h.typ = map[string]planner.WindowJoinType{"inner": planner.WindowInner, "left": planner.WindowLeft,
					"right": planner.WindowRight, "full": planner.WindowFull, "semi": planner.WindowSemi, "anti": planner.WindowAnti}[a.Vals[0]]
			case "size":
				n, _ := strconv.Atoi(a.Vals[0])
				h.size = int64(n) * 1e6
			}
		}
		h.job = nil
		h.start(state.NewMemory(), false)
		return ""
	case "batch":
		side := 0
		if d.CmdArgs[0].Vals[0] == "right" {
			side = 1
		}
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		ts := &arrow.TimestampType{Unit: arrow.Microsecond}
		sb := array.NewTimestampBuilder(memory.DefaultAllocator, ts)
		eb := array.NewTimestampBuilder(memory.DefaultAllocator, ts)
		rows := 0
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if f[0] == "null" {
				kb.AppendNull()
			} else {
				kb.Append(f[0])
			}
			v, _ := strconv.ParseInt(f[1], 10, 64)
			vb.Append(v)
			tm := windowTestTime(t, f[2])
			start := tm - floorMod(tm, h.size)
			sb.Append(arrow.Timestamp(start))
			eb.Append(arrow.Timestamp(start + h.size))
			rows++
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray(), sb.NewArray(), eb.NewArray()}
		rec := array.NewRecordBatch(wjTestInput.Arrow(), cols, int64(rows))
		for _, c := range cols {
			c.Release()
		}
		err := h.op.process(side, Batch{Rec: rec}, h.em)
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
		return fmt.Sprintf("stored left=%d right=%d; open windows=%d rows held=%d\n", stored[0], stored[1], len(h.op.ends), h.op.rows)
	case "late":
		return fmt.Sprintf("%d\n", h.job.lateRecords.Load())
	case "dump":
		var lines []string
		h.op.t.store.Scan(func(kg int, k, v []byte) error {
			if k[0] == spaceJoinLeft || k[0] == spaceJoinRight {
				lines = append(lines, fmt.Sprintf("%d %x %x", kg, k, v))
			}
			return nil
		})
		sort.Strings(lines)
		return strings.Join(lines, "\n") + "\n"
	case "load":
		h.close()
		store := state.NewMemory()
		var wb state.WriteBatch
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			kg, _ := strconv.Atoi(f[0])
			k, err1 := hex.DecodeString(f[1])
			v, err2 := hex.DecodeString(f[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: bad line %q", d.Pos, line)
			}
			wb.Put(kg, k, v)
		}
		if err := store.Apply(&wb); err != nil {
			t.Fatal(err)
		}
		h.start(store, false)
		if err := writeLayout(h.op.t, h.op.meta, h.op.maxPar, h.op.layout); err != nil {
			t.Fatal(err)
		}
		h.op = nil // its store is the one restored
		h.start(store, true)
		return "ok\n"
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
