package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/streamsql/streamsql/planner"
)

func init() {
	registerOperator(planner.KindLookupJoin, func(t *subtask) (operator, error) { return newLookupJoin(t) })
}

// lookupJoinOp is planner.LookupJoinSpec: a processing-time lookup join
// against a bounded table, which each subtask reads whole when it opens
// (every split, through the table's connector source) into one batch and a
// hash index by the table's key expressions. A probe batch is then joined
// with one pass over its rows (their keys encoded into a reused buffer, a
// map lookup each) and one gather of the probe columns and one of the
// table's columns. It keeps no state: after a restore the table is read
// again.
type lookupJoinOp struct {
	t    *taskContext
	spec *planner.LookupJoinSpec
	// src builds the table's source; table names it in errors.
	src   func() (Source, error)
	table string
	// rows is the whole table; head maps an encoded key to its first row,
	// next chains a row to the next one of its key (-1: none).
	rows arrow.RecordBatch
	head map[string]int32
	next []int32

	lkeys, rkeys []*evaluator
	residual     *evaluator
	schema       *arrow.Schema
	readers      []colReader
	buf          []byte
	li, ri       []int32
	ops          []RowKind
	runs         []keptRun // applyMask's scratch
}

func newLookupJoin(t *subtask) (*lookupJoinOp, error) {
	sp := t.op.Spec.(*planner.LookupJoinSpec)
	tbl := sp.Scan.Table
	f, err := lookupSource(tbl.Connector)
	if err != nil {
		return nil, err
	}
	spec := t.job.tableSpec(t)
	// One reader of every split: the whole table.
	spec.Subtask, spec.Parallelism = 0, 1
	spec.Table, spec.Schema, spec.Fields, spec.Options, spec.PrimaryKey = tbl.Name, tbl.Columns, sp.Scan.Fields, tbl.Options, tbl.PrimaryKey
	spec.PartitionKeys = tbl.PartitionKeys
	o := &lookupJoinOp{
		spec: sp, table: tbl.Name, schema: t.op.Schema.Arrow(),
		src: func() (Source, error) { return f(spec) },
	}
	for _, e := range sp.LeftKeys {
		o.lkeys = append(o.lkeys, compileExpr(e))
	}
	for _, e := range sp.RightKeys {
		o.rkeys = append(o.rkeys, compileExpr(e))
	}
	if sp.Residual != nil {
		o.residual = compileExpr(sp.Residual)
	}
	o.readers = make([]colReader, len(sp.LeftKeys))
	return o, nil
}

func (o *lookupJoinOp) open(t *taskContext) error {
	o.t = t
	if err := o.load(t.ctx); err != nil {
		return fmt.Errorf("lookup table %s: %w", o.table, err)
	}
	return nil
}

// load reads the whole table and indexes its rows by key.
func (o *lookupJoinOp) load(ctx context.Context) (err error) {
	src, err := o.src()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := src.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := src.Open(ctx); err != nil {
		return err
	}
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for {
		b, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrNoData) {
			if ctx.Err() != nil {
				return errCanceled
			}
			continue
		}
		if err != nil {
			return err
		}
		if b.Ops != nil && anyRetract(b.Ops) {
			b.Rec.Release()
			return fmt.Errorf("the table's source sent a retraction; a lookup table is rows, not a changelog")
		}
		batches = append(batches, b.Rec)
	}
	sch := o.spec.Scan.Schema().Arrow()
	cols := make([]arrow.Array, sch.NumFields())
	n := 0
	for _, b := range batches {
		n += int(b.NumRows())
	}
	for c := range cols {
		parts := make([]arrow.Array, 0, len(batches))
		for _, b := range batches {
			parts = append(parts, b.Column(c))
		}
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(o.t.mem, sch.Field(c).Type, 0)
			continue
		}
		a, err := array.Concatenate(parts, o.t.mem)
		if err != nil {
			for _, x := range cols[:c] {
				x.Release()
			}
			return err
		}
		cols[c] = a
	}
	o.rows = array.NewRecordBatch(sch, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	// The index: each row under its encoded key; a NULL key matches nothing.
	keys := make([]arrow.Array, len(o.rkeys))
	defer func() {
		for _, k := range keys {
			if k != nil {
				k.Release()
			}
		}
	}()
	rr := make([]colReader, len(o.rkeys))
	for i, ev := range o.rkeys {
		if keys[i], err = ev.evalArray(o.t.fctx, o.rows); err != nil {
			return err
		}
		rr[i].reset(o.spec.RightKeys[i].Type(), keys[i])
	}
	o.head = make(map[string]int32, n)
	o.next = make([]int32, n)
	for r := n - 1; r >= 0; r-- {
		o.next[r] = -1
		k, ok := encodeKeys(o.buf[:0], rr, r)
		o.buf = k
		if !ok {
			continue
		}
		if h, found := o.head[string(k)]; found {
			o.next[r] = h
		}
		o.head[string(k)] = int32(r)
	}
	return nil
}

// encodeKeys appends row i's key of the readers' columns; false when a
// value is NULL.
func encodeKeys(dst []byte, rs []colReader, i int) ([]byte, bool) {
	for j := range rs {
		if rs[j].isNull(i) {
			return dst, false
		}
		dst = rs[j].encode(dst, i)
	}
	return dst, true
}

func (o *lookupJoinOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	keys := make([]arrow.Array, len(o.lkeys))
	defer func() {
		for _, k := range keys {
			if k != nil {
				k.Release()
			}
		}
	}()
	for i, ev := range o.lkeys {
		var err error
		if keys[i], err = ev.evalArray(o.t.fctx, b.Rec); err != nil {
			return err
		}
		o.readers[i].reset(o.spec.LeftKeys[i].Type(), keys[i])
	}
	o.li, o.ri, o.ops = o.li[:0], o.ri[:0], o.ops[:0]
	left := o.spec.Type == planner.LeftJoin
	for i := 0; i < n; i++ {
		k, ok := encodeKeys(o.buf[:0], o.readers, i)
		o.buf = k
		r := int32(-1)
		if ok {
			if h, found := o.head[string(k)]; found {
				r = h
			}
		}
		if r < 0 {
			if left {
				o.li, o.ri = append(o.li, int32(i)), append(o.ri, -1)
				o.ops = append(o.ops, b.Op(i))
			}
			continue
		}
		for ; r >= 0; r = o.next[r] {
			o.li, o.ri = append(o.li, int32(i)), append(o.ri, r)
			o.ops = append(o.ops, b.Op(i))
		}
	}
	if len(o.li) == 0 {
		return nil
	}
	rec, err := o.gather(b.Rec)
	if err != nil {
		return err
	}
	var ops []RowKind
	if b.Ops != nil {
		ops = append([]RowKind(nil), o.ops...) // the receiver owns them
	}
	if o.residual != nil {
		a, err := o.residual.evalArray(o.t.fctx, rec)
		if err != nil {
			rec.Release()
			return err
		}
		kept, keptOps, runs, err := applyMask(o.t, rec, ops, a.(*array.Boolean), o.runs[:0])
		o.runs = runs
		a.Release()
		rec.Release()
		if err != nil || kept == nil {
			return err
		}
		rec, ops = kept, keptOps
	}
	return out.emit(Batch{Rec: rec, Ops: ops})
}

// gather builds the output batch of the pairs (o.li, o.ri): the probe
// columns of in, then the table's (NULL for -1).
func (o *lookupJoinOp) gather(in arrow.RecordBatch) (arrow.RecordBatch, error) {
	w := o.spec.LeftWidth
	cols := make([]arrow.Array, 0, o.schema.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	if len(o.li) == int(in.NumRows()) && isIota(o.li) {
		for c := 0; c < w; c++ {
			a := in.Column(c)
			a.Retain()
			cols = append(cols, a)
		}
	} else {
		idx := o.indexArray(o.li, false)
		for c := 0; c < w; c++ {
			a, err := compute.TakeArray(o.t.ctx, in.Column(c), idx)
			if err != nil {
				idx.Release()
				release()
				return nil, err
			}
			cols = append(cols, a)
		}
		idx.Release()
	}
	idx := o.indexArray(o.ri, true)
	defer idx.Release()
	for c := 0; c < int(o.rows.NumCols()); c++ {
		a, err := compute.TakeArray(o.t.ctx, o.rows.Column(c), idx)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(o.schema, cols, int64(len(o.li)))
	release()
	return rec, nil
}

// indexArray is xs as an Int32 array, -1 as NULL when nulls.
func (o *lookupJoinOp) indexArray(xs []int32, nulls bool) arrow.Array {
	ib := array.NewInt32Builder(o.t.mem)
	defer ib.Release()
	ib.Reserve(len(xs))
	for _, x := range xs {
		if nulls && x < 0 {
			ib.UnsafeAppendBoolToBitmap(false)
			continue
		}
		ib.UnsafeAppend(x)
	}
	return ib.NewArray()
}

func (o *lookupJoinOp) endInput(*emitter) error { return nil }
func (o *lookupJoinOp) close() error {
	if o.rows != nil {
		o.rows.Release()
		o.rows = nil
	}
	return nil
}
