package exec

import (
	"context"
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

// TestSemiAntiJoinOperator drives one regular join subtask by hand, so the
// files under semi_join_testdata/ show what each change of either input
// emits. Both inputs' rows are (k VARCHAR, v BIGINT), joined on k; the
// output is the left row (semi, anti) or the left then the right columns
// (left, full). Commands:
//
//	init type=semi|anti|left|full [residual]   a new operator; residual: the pair must also have left v < right v
//	batch side=left|right            one batch, a row per line "op k v" (op +I, -U, +U, -D; k "null": a NULL key); prints what is emitted
func TestSemiAntiJoinOperator(t *testing.T) {
	datadriven.Walk(t, "semi_join_testdata", func(t *testing.T, path string) {
		h := &semiHarness{}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var semiTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
}

type semiHarness struct {
	op   *joinOp
	recv *subtask
	em   *emitter
	out  types.Schema
}

func (h *semiHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func (h *semiHarness) start(t *testing.T, typ planner.JoinType, residual bool) {
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
	h.out = semiTestInput
	if !typ.LeftOnly() {
		h.out = append(append(types.Schema{}, semiTestInput...), types.Column{Name: "k0", Type: types.StringType}, types.Column{Name: "v0", Type: types.BigIntType})
	}
	op := &planner.Operator{ID: "semi", Parallelism: 1, Schema: h.out, Spec: spec}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	j, err := newJoin(sender)
	if err != nil {
		t.Fatal(err)
	}
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 2, store: state.NewMemory()}
	if err := j.open(tc); err != nil {
		t.Fatal(err)
	}
	h.op = j
}

func (h *semiHarness) emitted() string {
	var lines []string
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.out {
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

func (h *semiHarness) run(t *testing.T, d *datadriven.TestData) string {
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
		h.start(t, typ, residual)
		return ""
	case "batch":
		side := 0
		if d.CmdArgs[0].Vals[0] == "right" {
			side = 1
		}
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		var ops []RowKind
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			op := map[string]RowKind{"+I": Insert, "-U": UpdateBefore, "+U": UpdateAfter, "-D": Delete}[f[0]]
			ops = append(ops, op)
			if f[1] == "null" {
				kb.AppendNull()
			} else {
				kb.Append(f[1])
			}
			v, _ := strconv.ParseInt(f[2], 10, 64)
			vb.Append(v)
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
		rec := array.NewRecordBatch(semiTestInput.Arrow(), cols, int64(len(ops)))
		for _, c := range cols {
			c.Release()
		}
		err := h.op.process(side, Batch{Rec: rec, Ops: ops}, h.em)
		rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
