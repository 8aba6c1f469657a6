package exec

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cockroachdb/datadriven"
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
	runAggTests(t, "session_window_testdata", aggHarness{aggs: windowTestAggs,
		init: func(h *aggHarness, d *datadriven.TestData) {
			h.window.Kind = "SESSION"
			for _, a := range d.CmdArgs {
				if a.Key == "gap" {
					n, _ := strconv.Atoi(a.Vals[0])
					h.window.Size = int64(n) * 1e6
				}
			}
		},
		newOp: func(t *subtask) (operator, error) { return newSessionAgg(t) },
		state: func(h *aggHarness) string {
			op := h.op.(*sessionAggOp)
			if err := op.cache.Flush(); err != nil {
				h.t.Fatal(err)
			}
			keys, wms := countStateKeys(op.t.store)
			return fmt.Sprintf("keys=%d watermark-entries=%d timers=%d cached=%d\n", keys, wms, len(op.timers.ends), op.cache.Len())
		},
	})
}
