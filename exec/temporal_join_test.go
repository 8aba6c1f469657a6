package exec

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

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
	runOpTests(t, "temporal_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		tjHarness(h)
		return func(t *testing.T, d *datadriven.TestData) string { return tjCommand(h, t, d) }
	})
}

var tjInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "ts", Type: types.TimestampOf(3)},
}

// tjHarness makes h a temporal join's harness (h.spec is set by init).
func tjHarness(h *opHarness) {
	h.id, h.out = "tj", tjOutSchema()
	h.newOp = func(s *subtask) (operator, error) { return newTemporalJoin(s) }
	h.cell = func(typ types.T, col arrow.Array, i int) string {
		v := types.Format(typ, types.ValueAt(col, i))
		if typ.Kind == types.Timestamp && len(v) > 19 {
			v = v[11:19] // hh:mm:ss
		}
		return v
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

func tjCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		h.spec = tjSpec(t, d.HasArg("left"), d.HasArg("residual"))
		h.job = nil
		h.open(state.NewMemory(), false)
		return ""
	case "probe", "version":
		// Rows "k v time" (the versions' after their kind), "-" a NULL.
		b := testBatch(t, tjInput, d.Input, d.Cmd == "version", func(b []array.Builder, f []string) {
			appendFields(t, b, f, "-")
		})
		input := 0
		if d.Cmd == "version" {
			input = 1
		}
		return h.process(input, b)
	case "state":
		op := h.op.(*temporalJoinOp)
		if err := op.flush(); err != nil {
			t.Fatal(err)
		}
		probes, versions := tjStoreEntries(op.t.store)
		return fmt.Sprintf("held: probes=%d versions=%d keys=%d; stored: probes=%d versions=%d\n",
			op.nProbes, op.nVersions, len(op.keys), probes, versions)
	}
	return h.command(t, d)
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
	h := &opHarness{t: t, dir: t.TempDir()}
	tjHarness(h)
	h.spec = tjSpec(t, true, false)
	h.open(state.NewMemory(), false)
	defer h.close()
	op := h.op.(*temporalJoinOp)
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
			if err := op.process(input, b, h.em); err != nil {
				t.Fatal(err)
			}
			b.Rec.Release()
		}
		wm := base + (int64(from+batch-1)-delay)*ms
		if err := op.watermark(wm, h.em); err != nil {
			t.Fatal(err)
		}
		drain()
		maxV, maxP = max(maxV, op.nVersions-keys), max(maxP, op.nProbes)
		if op.nVersions > keys+bound || op.nProbes > bound {
			t.Fatalf("after %d rows: %d versions and %d probe rows held, want at most %d and %d", from+batch, op.nVersions, op.nProbes, keys+bound, bound)
		}
		if n%100 == 99 {
			if err := op.flush(); err != nil {
				t.Fatal(err)
			}
			p, v := tjStoreEntries(op.t.store)
			maxStored = max(maxStored, p+v)
			if v > keys+bound || p > bound {
				t.Fatalf("after %d rows: %d versions and %d probe rows stored, want at most %d and %d", from+batch, v, p, keys+bound, bound)
			}
		}
	}
	if err := op.endInput(h.em); err != nil {
		t.Fatal(err)
	}
	drain()
	if want := (rows + batch - 1) / batch * batch; out != want {
		t.Fatalf("%d rows out, want one per probe row (%d)", out, want)
	}
	t.Logf("at most %d versions beyond one per key and %d probe rows held, %d entries stored; %d rows out", maxV, maxP, maxStored, out)
}
