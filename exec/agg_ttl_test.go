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

// TestGroupAggOperator drives one group aggregation subtask by hand with
// a clock of its own, so the files under agg_testdata/ show what a state
// TTL and mini-batches do to the changelog. Its input rows are
// (k VARCHAR, v BIGINT) with a changelog op, and it computes GROUP BY k
// with COUNT(*), SUM(v), MAX(v) and COUNT(DISTINCT v) (MAX and the
// DISTINCT count keep value sets). Commands:
//
//	init [ttl=SECONDS] [minibatch=ROWS latency=SECONDS] [distinct [legacy]]  a new operator at clock 0; prints nothing
//
// With distinct, the input rows are (k VARCHAR, v BIGINT, w BIGINT, lo
// BOOLEAN) and the aggregates GROUP BY k COUNT(DISTINCT v),
// COUNT(DISTINCT v) FILTER (WHERE lo), SUM(DISTINCT v) FILTER (WHERE lo),
// COUNT(DISTINCT w) and COUNT(DISTINCT w) FILTER (WHERE lo): two shared
// DISTINCT sets. With legacy, the operator keeps one DISTINCT set per
// aggregate, as state written before sets were shared has (a restore
// opens the current operator over it).
//
// The other commands:
//
//	clock SECONDS                  set the processing-time clock
//	batch                          one input batch, a row per line "op k v"; prints what is emitted
//	timer                          the mini-batch timer, if due; prints what is emitted
//	checkpoint                     what the operator emits before the barrier, then a snapshot kept as the last checkpoint
//	restore                        a new operator restored from the last checkpoint
//	end                            end of input; prints what is emitted
//	state                          groups and set values in the store, cached groups, expired count
func TestGroupAggOperator(t *testing.T) {
	runOpTests(t, "agg_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		g := &groupAggHarness{opHarness: h}
		h.id = "g"
		h.newOp = func(s *subtask) (operator, error) {
			a, err := newGroupAgg(s)
			if err == nil {
				a.clock = func() int64 { return g.clock }
			}
			if err == nil && g.legacy {
				err = a.initFold(false)
			}
			return a, err
		}
		return g.run
	})
}

var gaTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
}

var gaDistinctInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "w", Type: types.BigIntType},
	{Name: "lo", Type: types.BooleanType},
}

var gaDistinctAggs = func() []planner.AggCall {
	count := types.T{Kind: types.BigInt, NotNull: true}
	return []planner.AggCall{
		{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, Distinct: true, T: count, Name: "cv", Text: "COUNT(DISTINCT v)"},
		{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, Distinct: true, T: count, HasFilter: true, Filter: 3, Name: "cvlo", Text: "COUNT(DISTINCT v) FILTER (WHERE lo)"},
		{Func: planner.AggSum, Arg: 1, ArgT: types.BigIntType, Distinct: true, T: types.BigIntType, HasFilter: true, Filter: 3, Name: "svlo", Text: "SUM(DISTINCT v) FILTER (WHERE lo)"},
		{Func: planner.AggCount, Arg: 2, ArgT: types.BigIntType, Distinct: true, T: count, Name: "cw", Text: "COUNT(DISTINCT w)"},
		{Func: planner.AggCount, Arg: 2, ArgT: types.BigIntType, Distinct: true, T: count, HasFilter: true, Filter: 3, Name: "cwlo", Text: "COUNT(DISTINCT w) FILTER (WHERE lo)"},
	}
}()

var gaTestAggs = []planner.AggCall{
	{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "n", Text: "COUNT(*)"},
	{Func: planner.AggSum, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "s", Text: "SUM(v)"},
	{Func: planner.AggMax, Arg: 1, T: types.BigIntType, ArgT: types.BigIntType, Name: "m", Text: "MAX(v)"},
	{Func: planner.AggCount, Arg: 1, ArgT: types.BigIntType, Distinct: true, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "d", Text: "COUNT(DISTINCT v)"},
}

// clockBase is the harness clock's 0 s (2023-11-14 22:13:20 UTC): a
// group's write time is never 0, which the state reads as unknown.
const clockBase = 1_700_000_000_000

type groupAggHarness struct {
	*opHarness
	clock  int64 // milliseconds
	in     types.Schema
	legacy bool // the next operator opened keeps one DISTINCT set per aggregate
}

func seconds(t *testing.T, s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(f * float64(time.Second))
}

func (h *groupAggHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		h.in = gaTestInput
		aggs := gaTestAggs
		if d.HasArg("distinct") {
			h.in, aggs = gaDistinctInput, gaDistinctAggs
		}
		h.legacy = d.HasArg("legacy")
		agg := &planner.Aggregate{Input: &planner.Values{Cols: h.in}, Keys: []int{0}, Aggs: aggs}
		spec := &planner.GroupAggSpec{Agg: agg, InputUpdating: true}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "distinct", "legacy":
			case "ttl":
				spec.TTL = seconds(t, a.Vals[0])
			case "minibatch":
				spec.MiniBatchSize, _ = strconv.Atoi(a.Vals[0])
			case "latency":
				spec.MiniBatchLatency = seconds(t, a.Vals[0])
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		h.spec, h.out = spec, agg.Schema()
		h.job, h.clock = nil, clockBase
		h.open(state.NewMemory(), false)
		h.legacy = false
		return ""
	case "clock":
		h.clock = clockBase + seconds(t, d.CmdArgs[0].Key).Milliseconds()
		return ""
	case "batch":
		return h.process(0, testBatch(t, h.in, d.Input, true, func(b []array.Builder, f []string) {
			appendFields(t, b, f, "null")
		}))
	case "timer":
		op := h.op.(*groupAggOp)
		if at, ok := op.deadline(); ok && h.clock < at.UnixMilli() {
			return fmt.Sprintf("(not due: the mini-batch ends at %s s)\n", strconv.FormatFloat(float64(at.UnixMilli()-clockBase)/1000, 'f', -1, 64))
		}
		return h.result(op.onTimer(h.em))
	case "checkpoint":
		// As the subtask does: what the operator holds back goes
		// downstream before the barrier, then the snapshot.
		if err := h.op.(*groupAggOp).flushBuffered(h.em); err != nil {
			return h.result(err)
		}
		return h.result(h.checkpoint())
	case "state":
		op := h.op.(*groupAggOp)
		if err := op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := op.sets.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := op.dsets.Flush(); err != nil {
			t.Fatal(err)
		}
		groups, values := 0, 0
		op.t.store.Scan(func(_ int, k, _ []byte) error {
			switch k[0] {
			case spaceGroups:
				groups++
			case spaceValues, spaceDistinct:
				values++
			}
			return nil
		})
		return fmt.Sprintf("groups=%d set-values=%d cached=%d expired=%d\n", groups, values, op.cache.Len(), h.job.stateExpired.Load())
	}
	return h.command(t, d)
}
