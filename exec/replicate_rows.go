package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/streamsql/streamsql/planner"
)

func init() {
	registerOperator(planner.KindReplicateRows, func(t *subtask) (operator, error) { return newReplicateRows(t), nil })
}

// replicateRowsOp is planner.ReplicateRowsSpec: the last step of INTERSECT
// [ALL] and EXCEPT [ALL], after the group aggregate that counts each
// distinct row on both sides. For each input row it evaluates the count
// over the whole batch and emits that many copies of the row's first Width
// columns: +I copies for an added row (+I, +U), -D copies for a retracted
// one (-U, -D), so that a consumer keyed by the row (an upsert sink) sees
// every copy come and go. With NetUpdates a -U directly followed by a +U
// (the aggregate's change of one group, its key being the row) emits only
// the difference of their counts: nothing when a duplicate on one side does
// not change the result. It keeps no state.
type replicateRowsOp struct {
	t      *taskContext
	spec   *planner.ReplicateRowsSpec
	count  *evaluator
	schema *arrow.Schema
	// rows and ops are the copies of the batch being built (input row
	// indexes, and their ops).
	rows []int32
	ops  []RowKind
}

func newReplicateRows(t *subtask) *replicateRowsOp {
	sp := t.op.Spec.(*planner.ReplicateRowsSpec)
	return &replicateRowsOp{spec: sp, count: compileExpr(sp.Count), schema: t.op.Schema.Arrow()}
}

func (r *replicateRowsOp) open(t *taskContext) error { r.t = t; return nil }

func (r *replicateRowsOp) process(_ int, b Batch, out *emitter) error {
	arr, err := r.count.evalArray(r.t.fctx, b.Rec)
	if err != nil {
		return err
	}
	defer arr.Release()
	counts, ok := arr.(*array.Int64)
	if !ok {
		return fmt.Errorf("ReplicateRows: the count is %s, not BIGINT", arr.DataType())
	}
	count := func(i int) int64 {
		if counts.IsNull(i) {
			return 0
		}
		return max(counts.Value(i), 0)
	}
	// The output columns: the input's first Width, under the output schema.
	cols := b.Rec.Columns()[:r.spec.Width]
	rec := array.NewRecordBatch(r.schema, cols, b.Rec.NumRows())
	defer rec.Release()
	r.rows, r.ops = r.rows[:0], r.ops[:0]
	n := b.Len()
	for i := 0; i < n; i++ {
		op := b.Op(i)
		c := count(i)
		if r.spec.NetUpdates && op == UpdateBefore && i+1 < n && b.Op(i+1) == UpdateAfter {
			i++
			c = count(i) - c
			op = UpdateAfter
			if c < 0 {
				c, op = -c, UpdateBefore
			}
		}
		kind := Insert
		if op.IsRetract() {
			kind = Delete
		}
		for ; c > 0; c-- {
			r.rows = append(r.rows, int32(i))
			r.ops = append(r.ops, kind)
			if len(r.rows) >= max(r.t.batchSize, 1) {
				if err := r.flush(rec, out); err != nil {
					return err
				}
			}
		}
	}
	return r.flush(rec, out)
}

// flush emits the copies listed so far, taken from rec.
func (r *replicateRowsOp) flush(rec arrow.RecordBatch, out *emitter) error {
	if len(r.rows) == 0 {
		return nil
	}
	ops := r.ops
	if !anyRetract(ops) {
		ops = nil
	} else {
		ops = append([]RowKind(nil), ops...) // the receiver owns them
	}
	var res arrow.RecordBatch
	if len(r.rows) == int(rec.NumRows()) && isIota(r.rows) {
		rec.Retain()
		res = rec
	} else {
		ib := array.NewInt32Builder(r.t.mem)
		ib.AppendValues(r.rows, nil)
		idx := ib.NewArray()
		ib.Release()
		defer idx.Release()
		cols := make([]arrow.Array, rec.NumCols())
		for i := range cols {
			c, err := compute.TakeArray(r.t.ctx, rec.Column(i), idx)
			if err != nil {
				for _, x := range cols[:i] {
					x.Release()
				}
				return fmt.Errorf("ReplicateRows: %w", err)
			}
			cols[i] = c
		}
		res = array.NewRecordBatch(r.schema, cols, int64(len(r.rows)))
		for _, c := range cols {
			c.Release()
		}
	}
	r.rows, r.ops = r.rows[:0], r.ops[:0]
	return out.emit(Batch{Rec: res, Ops: ops})
}

// isIota reports whether rows is 0, 1, 2, ...
func isIota(rows []int32) bool {
	for i, x := range rows {
		if x != int32(i) {
			return false
		}
	}
	return true
}

func (r *replicateRowsOp) endInput(*emitter) error { return nil }
func (r *replicateRowsOp) close() error            { return nil }
