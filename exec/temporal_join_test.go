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

// TestTemporalJoinOperator drives one temporal join subtask by hand, so the
// files under temporal_testdata/ show exactly when probe rows are joined and
// which versions are kept. Both inputs are (k VARCHAR, v BIGINT, ts
// TIMESTAMP(3)), joined on k, with the time attributes ts. Times are
// written hh:mm:ss on 2024-01-01. Commands:
//
//	init [left] [residual]  a new operator (inner, or left with left); residual adds ON r.v > 100
//	probe                   a batch of the probe input, a row per line "k v time" (k - is NULL)
//	version                 a batch of the versioned input, "op k v time" (op +I, +U, -U or -D)
//	watermark time          a watermark advance; prints what is emitted
//	end                     end of input; prints what is emitted
//	checkpoint              snapshot into a checkpoint and keep it
//	restore                 a new operator restored from the last checkpoint
//	state                   what is held in memory and in the store
func TestTemporalJoinOperator(t *testing.T) {
	datadriven.Walk(t, "temporal_testdata", func(t *testing.T, path string) {
		h := &tjHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var tjInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "ts", Type: types.TimestampOf(3)},
}

type tjHarness struct {
	t      *testing.T
	dir    string
	spec   *planner.TemporalJoinSpec
	job    *Job
	op     *temporalJoinOp
	recv   *subtask
	em     *emitter
	outSch types.Schema
	cp     string
	n      int
}

func (h *tjHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func tjSpec(tb testing.TB, left, residual bool) *planner.TemporalJoinSpec {
	sp := &planner.TemporalJoinSpec{Type: planner.InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0},
		LeftWidth: 3, RightWidth: 3, LeftTime: 2, RightTime: 2, LeftSchema: tjInput, RightSchema: tjInput, RightUpdating: true}
	if left {
		sp.Type = planner.LeftJoin
	}
	if residual {
		v := &planner.ColumnRef{Index: 4, Name: "v0", T: types.BigIntType}
		sp.Residual = bindCall(tb, ">", v, &planner.Literal{Value: int64(100), T: types.T{Kind: types.BigInt, NotNull: true}})
	}
	return sp
}

func tjOutSchema() types.Schema {
	var out types.Schema
	out = append(out, tjInput...)
	for _, c := range tjInput {
		c.Name += "0"
		c.Type = c.Type.Nullable()
		out = append(out, c)
	}
	return out
}

// start builds the operator over store (restored says it holds a checkpoint).
func (h *tjHarness) start(store state.Store, restored bool) {
	op := &planner.Operator{ID: "tj", Parallelism: 1, Schema: tjOutSchema(), Spec: h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	j, err := newTemporalJoin(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := j.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op, h.outSch = j, op.Schema
}

func (h *tjHarness) emitted() string {
	var b strings.Builder
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.outSch {
					v := types.Format(c.Type, types.ValueAt(rec.Column(j), i))
					if c.Type.Kind == types.Timestamp && len(v) > 19 {
						v = v[11:19] // hh:mm:ss
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

// tjBatch builds a batch of tjInput rows from lines "k v time", each after
// op fields (ops > 0: the first field is the row's kind).
func tjBatch(t *testing.T, input string, withOps bool) Batch {
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	var ops []RowKind
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if withOps {
			ops = append(ops, map[string]RowKind{"+I": Insert, "+U": UpdateAfter, "-U": UpdateBefore, "-D": Delete}[f[0]])
			f = f[1:]
		}
		if f[0] == "-" {
			kb.AppendNull()
		} else {
			kb.Append(f[0])
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		vb.Append(v)
		if f[2] == "-" {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(windowTestTime(t, f[2])))
		}
		rows++
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
	rec := array.NewRecordBatch(tjInput.Arrow(), cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return Batch{Rec: rec, Ops: ops}
}

func (h *tjHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
	switch d.Cmd {
	case "init":
		h.close()
		h.spec = tjSpec(t, d.HasArg("left"), d.HasArg("residual"))
		h.job = nil
		h.start(state.NewMemory(), false)
		return ""
	case "probe", "version":
		b := tjBatch(t, d.Input, d.Cmd == "version")
		input := 0
		if d.Cmd == "version" {
			input = 1
		}
		err := h.op.process(input, b, h.em)
		b.Rec.Release()
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
		if err := h.op.flush(); err != nil {
			t.Fatal(err)
		}
		probes, versions := tjStoreEntries(h.op.t.store)
		return fmt.Sprintf("held: probes=%d versions=%d keys=%d; stored: probes=%d versions=%d\n",
			h.op.nProbes, h.op.nVersions, len(h.op.keys), probes, versions)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// tjStoreEntries counts the probe rows and versions in a temporal join's store.
func tjStoreEntries(store state.Store) (probes, versions int) {
	store.Scan(func(_ int, k, _ []byte) error {
		switch k[0] {
		case spaceTemporalProbes:
			probes++
		case spaceTemporalVersions:
			versions++
		}
		return nil
	})
	return probes, versions
}

// TestTemporalJoinStateStaysFlat runs one LEFT temporal join subtask over
// 1M versions of 1000 keys (a version of some key every ms of event time,
// about 1000 per key) and 1M probe rows (up to 1 s out of order, the
// watermark 1 s behind), in batches of 1024 rows of each input with a
// watermark after each pair, flushing to the store every 100 batches (a
// checkpoint's write-back). After every watermark the state must be what
// the watermark allows: at most one version per key plus the versions
// after the watermark (at most the 2 batches of event time the watermark
// trails the versions by, plus the 1 s of probe delay), and the probe rows
// after the watermark (at most 2 batches plus 1 s of event time) — in
// memory and in the store. Every probe row is emitted once. If old
// versions were kept, the state would grow by a version per ms.
func TestTemporalJoinStateStaysFlat(t *testing.T) {
	const (
		rows  = 1_000_000
		keys  = 1000
		batch = 1024
		delay = 1000 // ms: the probe rows' out-of-orderness and watermark delay
		// bound is the most versions (beyond one per key) and probe rows
		// the watermark allows.
		bound = 2*batch + delay + batch
	)
	h := &tjHarness{t: t, dir: t.TempDir(), spec: tjSpec(t, true, false)}
	h.start(state.NewMemory(), false)
	defer h.close()
	base := windowTestTime(t, "00:00:00")
	ms := int64(1000)
	mk := func(from int, probe bool) Batch {
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
		for i := from; i < from+batch; i++ {
			tm := int64(i)
			k := (i * 7919) % keys
			if probe {
				k = (i * 104729) % keys
				tm -= int64((i * 31) % delay) // up to 1 s in the past
			}
			kb.Append(strconv.Itoa(k))
			vb.Append(int64(i))
			tb.Append(arrow.Timestamp(base + tm*ms))
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
		rec := array.NewRecordBatch(tjInput.Arrow(), cols, batch)
		for _, c := range cols {
			c.Release()
		}
		return Batch{Rec: rec}
	}
	out, maxV, maxP, maxStored := 0, 0, 0, 0
	drain := func() {
		for {
			select {
			case el := <-h.recv.inbox:
				out += int(el.Batch.Rec.NumRows())
				el.Batch.Rec.Release()
			default:
				return
			}
		}
	}
	for n, from := 0, 0; from < rows; n, from = n+1, from+batch {
		for input, probe := range []bool{true, false} {
			b := mk(from, probe)
			if err := h.op.process(input, b, h.em); err != nil {
				t.Fatal(err)
			}
			b.Rec.Release()
		}
		wm := base + (int64(from+batch-1)-delay)*ms
		if err := h.op.watermark(wm, h.em); err != nil {
			t.Fatal(err)
		}
		drain()
		maxV, maxP = max(maxV, h.op.nVersions-keys), max(maxP, h.op.nProbes)
		if h.op.nVersions > keys+bound || h.op.nProbes > bound {
			t.Fatalf("after %d rows: %d versions and %d probe rows held, want at most %d and %d", from+batch, h.op.nVersions, h.op.nProbes, keys+bound, bound)
		}
		if n%100 == 99 {
			if err := h.op.flush(); err != nil {
				t.Fatal(err)
			}
			p, v := tjStoreEntries(h.op.t.store)
			maxStored = max(maxStored, p+v)
			if v > keys+bound || p > bound {
				t.Fatalf("after %d rows: %d versions and %d probe rows stored, want at most %d and %d", from+batch, v, p, keys+bound, bound)
			}
		}
	}
	if err := h.op.endInput(h.em); err != nil {
		t.Fatal(err)
	}
	drain()
	if want := (rows + batch - 1) / batch * batch; out != want {
		t.Fatalf("%d rows out, want one per probe row (%d)", out, want)
	}
	t.Logf("at most %d versions beyond one per key and %d probe rows held, %d entries stored; %d rows out", maxV, maxP, maxStored, out)
}
