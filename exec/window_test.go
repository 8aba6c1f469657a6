package exec

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

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
	runAggTests(t, "window_testdata", aggHarness{aggs: windowTestAggs[:2],
		init: func(h *aggHarness, d *datadriven.TestData) {
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "kind":
					h.window.Kind = a.Vals[0]
				case "size", "slide":
					n, _ := strconv.Atoi(a.Vals[0])
					if a.Key == "size" {
						h.window.Size = int64(n) * 1e6
					} else {
						h.window.Slide = int64(n) * 1e6
					}
				}
			}
		},
		newOp: func(t *subtask) (operator, error) { return newWindowAgg(t) },
		state: func(h *aggHarness) string {
			op := h.op.(*windowAggOp)
			if err := op.cache.Flush(); err != nil {
				h.t.Fatal(err)
			}
			groups, wms := countStateKeys(op.t.store)
			return fmt.Sprintf("groups=%d watermark-entries=%d pending-windows=%d cached=%d\n", groups, wms, len(op.timers.ends), op.cache.Len())
		},
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
		case string(k) == "\x00"+string(watermarkKey):
			wms++
		case k[0] == spaceGroups:
			keys++
		}
		return nil
	})
	return keys, wms
}

// aggHarness drives one window or session aggregation subtask by hand, over
// windowTestInput, grouping by window_start, window_end and k; what differs
// between the two tests is how init reads the window, the operator, and
// what state prints.
type aggHarness struct {
	*opHarness
	aggs  []planner.AggCall
	init  func(h *aggHarness, d *datadriven.TestData)
	newOp func(t *subtask) (operator, error)
	state func(h *aggHarness) string
	// window is the window init reads.
	window planner.WindowSpec
}

// runAggTests runs every file under dir with a copy of h.
func runAggTests(t *testing.T, dir string, h aggHarness) {
	runOpTests(t, dir, func(oh *opHarness) func(*testing.T, *datadriven.TestData) string {
		a := h
		a.opHarness = oh
		oh.id, oh.newOp = "w", h.newOp
		return a.run
	})
}

func (h *aggHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		h.window = planner.WindowSpec{TimeCol: 2, TimeName: "ts"}
		h.init(h, d)
		wa := &planner.WindowAggregate{
			Input:  &planner.Values{Cols: windowTestInput},
			Window: h.window,
			Keys:   []int{planner.WindowStartKey, planner.WindowEndKey, 0},
			Aggs:   h.aggs,
		}
		h.spec, h.out = &planner.WindowAggSpec{Agg: wa}, wa.Schema()
		h.job = nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		return h.process(0, testBatch(t, windowTestInput, d.Input, false, func(b []array.Builder, f []string) {
			appendFields(t, b, f, "")
		}))
	case "state":
		return h.state(h)
	}
	return h.command(t, d)
}
