package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// calcOp filters and projects: for each batch it evaluates the condition
// over all rows, keeps the rows where it is TRUE, then evaluates each
// projection over the kept rows. Changelog ops pass through with their rows.
type calcOp struct {
	t      *taskContext
	filter *evaluator
	projs  []*evaluator
	schema *arrow.Schema
	// identity[i] >= 0 when projection i just copies input column identity[i].
	identity []int
	cols     []arrow.Array
	runs     []keptRun // applyMask's scratch
	// projectFirst says every projection is a column or fields of one
	// (row.field): they cannot fail and copy nothing, so they are taken
	// over all rows and the filter applied to what they give, which
	// filters the fields read rather than whole rows.
	projectFirst bool
}

func newCalc(t *subtask) (operator, error) {
	sp := t.op.Spec.(*planner.CalcSpec)
	c := &calcOp{schema: t.op.Schema.Arrow()}
	if sp.Filter != nil {
		c.filter = compileExpr(sp.Filter)
	}
	for _, p := range sp.Projections {
		c.projs = append(c.projs, compileExpr(p))
		c.identity = append(c.identity, columnOf(p))
	}
	c.cols = make([]arrow.Array, len(c.projs))
	c.projectFirst = sp.Filter != nil
	for _, p := range sp.Projections {
		c.projectFirst = c.projectFirst && isFieldPath(p)
	}
	return c, nil
}

// isFieldPath reports whether e is a column or a field of one, at any
// depth (r.a, r.c.x).
func isFieldPath(e planner.Expr) bool {
	for {
		switch x := e.(type) {
		case *planner.ColumnRef:
			return true
		case *planner.Call:
			if x.Func != functions.FieldAccess || len(x.Args) != 2 {
				return false
			}
			e = x.Args[0]
		default:
			return false
		}
	}
}

func (c *calcOp) open(t *taskContext) error { c.t = t; return nil }

func (c *calcOp) process(_ int, b Batch, out *emitter) error {
	rec := b.Rec
	ops := b.Ops
	if c.projectFirst {
		return c.projectThenFilter(rec, ops, out)
	}
	if c.filter != nil {
		mask, err := c.filter.evalArray(c.t.fctx, rec)
		if err != nil {
			return err
		}
		var kept arrow.RecordBatch
		var keptOps []RowKind
		kept, keptOps, c.runs, err = applyMask(c.t, rec, ops, mask.(*array.Boolean), c.runs[:0])
		mask.Release()
		if err != nil {
			return err
		}
		if kept == nil {
			return nil
		}
		defer kept.Release()
		rec, ops = kept, keptOps
	}
	outRec, err := c.project(rec)
	if err != nil {
		return err
	}
	return out.emit(Batch{Rec: outRec, Ops: ops})
}

// project evaluates the projections over every row of rec.
func (c *calcOp) project(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	for i, p := range c.projs {
		if c.identity[i] >= 0 {
			col := rec.Column(c.identity[i])
			col.Retain()
			c.cols[i] = col
			continue
		}
		a, err := p.evalArray(c.t.fctx, rec)
		if err != nil {
			for _, x := range c.cols[:i] {
				x.Release()
			}
			return nil, err
		}
		c.cols[i] = a
	}
	outRec := array.NewRecordBatch(c.schema, c.cols, rec.NumRows())
	for i, x := range c.cols {
		x.Release()
		c.cols[i] = nil
	}
	return outRec, nil
}

// projectThenFilter is process for projectFirst: the projections over all
// of rec, then the rows the filter keeps.
func (c *calcOp) projectThenFilter(rec arrow.RecordBatch, ops []RowKind, out *emitter) error {
	mask, err := c.filter.evalArray(c.t.fctx, rec)
	if err != nil {
		return err
	}
	defer mask.Release()
	projected, err := c.project(rec)
	if err != nil {
		return err
	}
	defer projected.Release()
	kept, keptOps, runs, err := applyMask(c.t, projected, ops, mask.(*array.Boolean), c.runs[:0])
	c.runs = runs
	if err != nil || kept == nil {
		return err
	}
	return out.emit(Batch{Rec: kept, Ops: keptOps})
}

// applyMask keeps the rows of rec where mask is TRUE. It returns nil when
// none is kept, rec itself (retained) when all are; runs is scratch space,
// returned for reuse.
func applyMask(t *taskContext, rec arrow.RecordBatch, ops []RowKind, mask *array.Boolean, runs []keptRun) (arrow.RecordBatch, []RowKind, []keptRun, error) {
	n := int(rec.NumRows())
	runs, kept := keptRuns(runs, mask)
	if kept == 0 {
		return nil, nil, runs, nil
	}
	if kept == n {
		rec.Retain()
		return rec, ops, runs, nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		a, err := filterColumn(t, t.mem, c, mask, runs, kept)
		if err != nil {
			for _, x := range cols[:i] {
				x.Release()
			}
			return nil, nil, runs, fmt.Errorf("filter: %w", err)
		}
		cols[i] = a
	}
	res := array.NewRecordBatch(rec.Schema(), cols, int64(kept))
	for _, x := range cols {
		x.Release()
	}
	var keptOps []RowKind
	if ops != nil {
		keptOps = make([]RowKind, 0, kept)
		for _, r := range runs {
			keptOps = append(keptOps, ops[r.start:r.end]...)
		}
	}
	return res, keptOps, runs, nil
}

func (c *calcOp) endInput(*emitter) error { return nil }
func (c *calcOp) close() error            { return nil }

func newValues(t *subtask) (operator, error) {
	v := &valuesOp{sch: t.op.Schema}
	for _, r := range t.op.Spec.(*planner.ValuesSpec).Rows {
		var row []*evaluator
		for _, e := range r {
			row = append(row, compileExpr(e))
		}
		v.rows = append(v.rows, row)
	}
	return v, nil
}

// valuesOp emits literal rows once.
type valuesOp struct {
	t    *taskContext
	rows [][]*evaluator
	sch  types.Schema
}

func (v *valuesOp) open(t *taskContext) error          { v.t = t; return nil }
func (v *valuesOp) process(int, Batch, *emitter) error { return nil }
func (v *valuesOp) close() error                       { return nil }

func (v *valuesOp) endInput(out *emitter) error {
	bs := make([]array.Builder, len(v.sch))
	for i, c := range v.sch {
		bs[i] = array.NewBuilder(v.t.mem, c.Type.ArrowType())
		defer bs[i].Release()
	}
	// A one-row, zero-column batch drives SELECT without FROM.
	empty := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer empty.Release()
	for _, row := range v.rows {
		for i, e := range row {
			a, err := e.evalArray(v.t.fctx, empty)
			if err != nil {
				return err
			}
			types.AppendValue(bs[i], types.ValueAt(a, 0))
			a.Release()
		}
	}
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		defer cols[i].Release()
	}
	rec := array.NewRecordBatch(v.sch.Arrow(), cols, int64(len(v.rows)))
	return out.emit(Batch{Rec: rec})
}

func newUnion(t *subtask) (operator, error) { return unionOp{schema: t.op.Schema.Arrow()}, nil }

// unionOp forwards every input's batches under its own schema. An input
// may have more columns than the schema: a scan pruned to no column reads
// all of its table's (exec.TableSpec.Fields nil), and only the rows count.
type unionOp struct{ schema *arrow.Schema }

func (unionOp) open(*taskContext) error { return nil }
func (u unionOp) process(_ int, b Batch, out *emitter) error {
	rec := array.NewRecordBatch(u.schema, b.Rec.Columns()[:u.schema.NumFields()], b.Rec.NumRows())
	return out.emit(Batch{Rec: rec, Ops: b.Ops})
}
func (unionOp) endInput(*emitter) error { return nil }
func (unionOp) close() error            { return nil }

func columnOf(e planner.Expr) int {
	if c, ok := e.(*planner.ColumnRef); ok {
		return c.Index
	}
	return -1
}
