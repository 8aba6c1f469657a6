package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestSemiAntiJoinOperator drives one regular join subtask by hand, so the
// files under semi_join_testdata/ show what each change of either input
// emits. Both inputs' rows are (k VARCHAR, v BIGINT), joined on k; the
// output is the left row (semi, anti) or the left then the right columns
// (left, full). Commands:
//
//	init type=semi|anti|left|full [residual]   a new operator; residual: the pair must also have left v < right v
//	batch side=left|right            one batch, a row per line "op k v" (op +I, -U, +U, -D; k "null": a NULL key); prints what is emitted
func TestSemiAntiJoinOperator(t *testing.T) {
	runOpTests(t, "semi_join_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		h.id, h.batchSize = "semi", 2
		h.newOp = func(s *subtask) (operator, error) { return newJoin(s) }
		return func(t *testing.T, d *datadriven.TestData) string { return semiCommand(h, t, d) }
	})
}

var semiTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
}

// semiSpec sets h's spec and output for a join of type typ.
func semiSpec(t *testing.T, h *opHarness, typ planner.JoinType, residual bool) {
	spec := &planner.JoinSpec{
		Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2,
		LeftSchema: semiTestInput, RightSchema: semiTestInput, LeftUpdating: true, RightUpdating: true,
	}
	if residual {
		f, _ := functions.Lookup("<")
		r, err := f.Resolve([]types.T{types.BigIntType, types.BigIntType})
		if err != nil {
			t.Fatal(err)
		}
		spec.Residual = &planner.Call{Func: "<", Resolved: r, Args: []planner.Expr{
			&planner.ColumnRef{Index: 1, Name: "v", T: types.BigIntType},
			&planner.ColumnRef{Index: 3, Name: "v0", T: types.BigIntType},
		}}
	}
	h.spec, h.out = spec, semiTestInput
	if !typ.LeftOnly() {
		h.out = append(append(types.Schema{}, semiTestInput...), types.Column{Name: "k0", Type: types.StringType}, types.Column{Name: "v0", Type: types.BigIntType})
	}
}

func semiCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		typ := planner.LeftSemi
		residual := false
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "type":
				kinds := map[string]planner.JoinType{"semi": planner.LeftSemi, "anti": planner.LeftAnti, "left": planner.LeftJoin, "full": planner.FullJoin}
				jt, ok := kinds[a.Vals[0]]
				if !ok {
					t.Fatalf("%s: unknown join type %q", d.Pos, a.Vals[0])
				}
				typ = jt
			case "residual":
				residual = true
			}
		}
		semiSpec(t, h, typ, residual)
		h.job = nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		side := 0
		if d.CmdArgs[0].Vals[0] == "right" {
			side = 1
		}
		return h.process(side, testBatch(t, semiTestInput, d.Input, true, func(b []array.Builder, f []string) {
			appendFields(t, b, f, "null")
		}))
	}
	return h.command(t, d)
}
