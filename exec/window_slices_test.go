package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// TestWindowSlicesMatchReference drives a HOP window aggregation kept in
// slices (COUNT(*), SUM(v), MAX(v) merge exactly) with random rows out of
// order, random watermarks, checkpoints and restores, the cache trimmed
// and the pending slices' lists dropped (so windows fire from the store),
// and checks every window it emits against the rows a window holds by
// definition: those in its bounds that arrived before the watermark
// passed its end, the late rows (whose every window had fired) left out;
// and the open windows it reports against the windows holding rows.
func TestWindowSlicesMatchReference(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testWindowSlices(t, seed) })
	}
}

type sliceTestRow struct {
	k  string
	v  int64
	ts int64
}

func testWindowSlices(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const sec = int64(1e6)
	slide := (1 + rng.Int64N(3)) * sec
	size := slide * (1 + rng.Int64N(4))
	offset := rng.Int64N(slide/sec) * sec
	h := &opHarness{t: t, dir: t.TempDir(), id: "w"}
	defer h.close()
	h.batchSize = 1 + rng.IntN(8)
	window := planner.WindowSpec{Kind: "HOP", TimeCol: 2, TimeName: "ts", Size: size, Slide: slide, Offset: offset}
	wa := &planner.WindowAggregate{
		Input:  &planner.Values{Cols: windowTestInput},
		Window: window,
		Keys:   []int{planner.WindowStartKey, planner.WindowEndKey, 0},
		Aggs:   windowTestAggs,
	}
	h.spec, h.out = &planner.WindowAggSpec{Agg: wa}, wa.Schema()
	h.newOp = func(t *subtask) (operator, error) { return newWindowAgg(t) }
	h.open(state.NewMemory(), false)
	if !h.op.(*windowAggOp).slices.on {
		t.Fatal("the HOP window aggregation is not kept in slices")
	}

	var rows []sliceTestRow // accepted so far
	fired := map[int64]bool{}
	wm := int64(minWatermark)
	var late int64
	clock := int64(1_700_000_000) * sec
	// want returns the windows the watermark now passes, prev did not.
	want := func(prev int64) []string {
		var out []string
		ends := map[int64]bool{}
		for _, r := range rows {
			last := r.ts - floorMod(r.ts-offset, slide) + size
			for e := last; e > r.ts; e -= slide {
				if windowFired(e, wm) && !windowFired(e, prev) {
					ends[e] = true
				}
			}
		}
		for e := range ends {
			type agg struct{ n, s, m int64 }
			groups := map[string]*agg{}
			for _, r := range rows {
				if r.ts >= e-size && r.ts < e {
					g := groups[r.k]
					if g == nil {
						g = &agg{m: r.v}
						groups[r.k] = g
					}
					g.n++
					g.s += r.v
					g.m = max(g.m, r.v)
				}
			}
			for k, g := range groups {
				out = append(out, fmt.Sprintf("%d %d %s %d %d %d", e-size, e, k, g.n, g.s, g.m))
			}
			fired[e] = true
		}
		slices.Sort(out)
		return out
	}
	// openWindows: the windows not fired yet that hold a row, which the
	// operator's gauge (DESCRIBE JOB's open windows) must report.
	openWindows := func() int64 {
		open := map[int64]bool{}
		for _, r := range rows {
			last := r.ts - floorMod(r.ts-offset, slide) + size
			for e := last; e > r.ts; e -= slide {
				if !windowFired(e, wm) {
					open[e] = true
				}
			}
		}
		return int64(len(open))
	}
	checkOpen := func(step int) {
		t.Helper()
		if got, want := h.op.(*windowAggOp).gauge.windows.Load(), openWindows(); got != want {
			t.Fatalf("step %d: %d open windows reported, want %d", step, got, want)
		}
	}
	check := func(step string, got, want []string) {
		t.Helper()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: emitted\n%s\nwant\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for step := 0; step < 300; step++ {
		switch r := rng.IntN(20); {
		case r < 12: // a batch
			rb := array.NewRecordBuilder(memory.DefaultAllocator, windowTestInput.Arrow())
			n := 1 + rng.IntN(20)
			for i := 0; i < n; i++ {
				row := sliceTestRow{k: fmt.Sprintf("k%d", rng.IntN(6)), v: rng.Int64N(100), ts: clock - rng.Int64N(3*size) + rng.Int64N(sec)}
				rb.Field(0).(*array.StringBuilder).Append(row.k)
				rb.Field(1).(*array.Int64Builder).Append(row.v)
				rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(row.ts))
				last := row.ts - floorMod(row.ts-offset, slide) + size
				if windowFired(last, wm) {
					late++
				} else {
					rows = append(rows, row)
				}
			}
			clock += rng.Int64N(sec)
			if got := h.process(0, Batch{Rec: rb.NewRecordBatch()}); got != "(nothing)\n" {
				t.Fatalf("step %d: a batch emitted %s", step, got)
			}
			rb.Release()
			checkOpen(step)
		case r < 16: // a watermark
			prev := wm
			wm = max(wm, clock-rng.Int64N(2*size))
			if err := h.op.(watermarkOperator).watermark(wm, h.em); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d: watermark", step), drainWindows(h), want(prev))
			checkOpen(step)
		case r < 17:
			if err := h.checkpoint(); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				if got := h.restore(); got != "ok\n" {
					t.Fatal(got)
				}
			}
		case r < 18: // the cache written back and emptied
			op := h.op.(*windowAggOp)
			if err := op.cache.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := op.cache.Trim(0, 1); err != nil {
				t.Fatal(err)
			}
		case r < 19: // the pending slices found by a scan of the store
			h.op.(*windowAggOp).timers.unlist()
		}
	}
	prev := wm
	wm = maxWatermark
	if err := h.op.endInput(h.em); err != nil {
		t.Fatal(err)
	}
	check("end", drainWindows(h), want(prev))
	if got := h.job.lateRecords.Load(); got != late {
		t.Fatalf("%d late rows counted, want %d", got, late)
	}
	op := h.op.(*windowAggOp)
	if err := op.cache.Flush(); err != nil {
		t.Fatal(err)
	}
	if groups, _ := countStateKeys(op.t.store); groups != 0 || len(op.timers.ends) != 0 {
		t.Fatalf("after the end: %d groups stored, %d slices pending", groups, len(op.timers.ends))
	}
}

// drainWindows reads the rows the harness's operator emitted, "start end
// k n s m" each.
func drainWindows(h *opHarness) []string {
	var out []string
	for {
		select {
		case el := <-h.recv.inbox:
			if el.Kind != KindBatch {
				continue
			}
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				out = append(out, fmt.Sprintf("%d %d %s %d %d %d",
					rec.Column(0).(*array.Timestamp).Value(i), rec.Column(1).(*array.Timestamp).Value(i),
					rec.Column(2).(*array.String).Value(i), rec.Column(3).(*array.Int64).Value(i),
					rec.Column(4).(*array.Int64).Value(i), rec.Column(5).(*array.Int64).Value(i)))
			}
			rec.Release()
		default:
			return out
		}
	}
}
