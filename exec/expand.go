package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/planner"
)

func init() {
	registerOperator(planner.KindExpand, func(t *subtask) (operator, error) { return newExpand(t), nil })
}

// expandOp is planner.ExpandSpec, below the aggregate of GROUPING SETS,
// ROLLUP and CUBE: each input batch is emitted once per grouping set, its
// columns shared, with the key columns the set leaves out replaced by
// NULLs and a last column holding the set's index. The changes keep their
// kinds. It keeps no state.
type expandOp struct {
	t      *taskContext
	spec   *planner.ExpandSpec
	schema *arrow.Schema
}

func newExpand(t *subtask) *expandOp {
	return &expandOp{spec: t.op.Spec.(*planner.ExpandSpec), schema: t.op.Schema.Arrow()}
}

func (x *expandOp) open(t *taskContext) error { x.t = t; return nil }

func (x *expandOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	in := b.Rec.Columns()
	cols := make([]arrow.Array, len(in)+1)
	// nulls are the NULL columns of the keys, made once per batch.
	nulls := make([]arrow.Array, len(x.spec.Keys))
	defer func() {
		for _, a := range nulls {
			if a != nil {
				a.Release()
			}
		}
	}()
	ids := array.NewInt64Builder(x.t.mem)
	defer ids.Release()
	for i, set := range x.spec.Sets {
		copy(cols, in)
		for j, keep := range set {
			if keep {
				continue
			}
			k := x.spec.Keys[j]
			if nulls[j] == nil {
				nulls[j] = array.MakeArrayOfNull(x.t.mem, in[k].DataType(), n)
			}
			cols[k] = nulls[j]
		}
		ids.Reserve(n)
		for r := 0; r < n; r++ {
			ids.UnsafeAppend(int64(i))
		}
		id := ids.NewArray()
		cols[len(in)] = id
		rec := array.NewRecordBatch(x.schema, cols, int64(n))
		id.Release()
		var ops []RowKind
		if b.Ops != nil {
			ops = append([]RowKind(nil), b.Ops...) // the receiver owns them
		}
		if err := out.emit(Batch{Rec: rec, Ops: ops}); err != nil {
			return err
		}
	}
	return nil
}

func (x *expandOp) endInput(*emitter) error { return nil }
func (x *expandOp) close() error            { return nil }
