package exec

import (
	"fmt"
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
	runOpTests(t, "interval_join_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		iv := &ivHarness{opHarness: h}
		h.id = "ij"
		h.newOp = func(s *subtask) (operator, error) {
			j, err := newIntervalJoin(s)
			if err == nil {
				s.impl, iv.sub = j, s
			}
			return j, err
		}
		return iv.run
	})
}

type ivHarness struct {
	*opHarness
	sub *subtask // the operator's, which forwards watermarks
}

func (h *ivHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		spec := &planner.IntervalJoinSpec{LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3,
			LeftTime: 2, RightTime: 2, LeftSchema: windowTestInput, RightSchema: windowTestInput}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "type":
				spec.Type = map[string]planner.JoinType{"inner": planner.InnerJoin, "left": planner.LeftJoin, "right": planner.RightJoin, "full": planner.FullJoin}[a.Vals[0]]
			case "lower", "upper":
				n, _ := strconv.Atoi(a.Vals[0])
				if a.Key == "lower" {
					spec.Lower = int64(n) * 1e6
				} else {
					spec.Upper = int64(n) * 1e6
				}
			case "residual":
				lt, _ := functions.Lookup("<")
				r, err := lt.Resolve([]types.T{types.BigIntType, types.BigIntType})
				if err != nil {
					t.Fatal(err)
				}
				spec.Residual = &planner.Call{Func: "<", Resolved: r, Args: []planner.Expr{
					&planner.ColumnRef{Index: 1, Name: "v", T: types.BigIntType}, &planner.ColumnRef{Index: 4, Name: "v0", T: types.BigIntType}}}
			}
		}
		h.spec = spec
		h.out = (&planner.Join{Left: &planner.Values{Cols: windowTestInput}, Right: &planner.Values{Cols: windowTestInput}, Type: spec.Type}).Schema()
		h.job = nil
		h.open(state.NewMemory(), false)
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
		return h.process(input, testBatch(t, windowTestInput, d.Input, false, func(b []array.Builder, f []string) {
			appendFields(t, b, f, "null")
		}))
	case "watermark":
		wm := windowTestTime(t, d.CmdArgs[0].Key)
		if err := h.op.(watermarkOperator).watermark(wm, h.em); err != nil {
			return h.result(err)
		}
		fwd := h.sub.outWatermark(wm)
		return h.emitted() + "forwards " + types.Format(types.TimestampOf(3), types.ValueAt(timestampArray(fwd), 0)) + "\n"
	case "state":
		op := h.op.(*intervalJoinOp)
		var b strings.Builder
		stored := [2]int{}
		op.t.store.Scan(func(_ int, k, _ []byte) error {
			switch k[0] {
			case spaceJoinLeft:
				stored[0]++
			case spaceJoinRight:
				stored[1]++
			}
			return nil
		})
		for s, name := range []string{"left", "right"} {
			st := op.side[s].st
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
	}
	return h.command(t, d)
}

func timestampArray(us int64) arrow.Array {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer b.Release()
	b.Append(arrow.Timestamp(us))
	return b.NewArray()
}
