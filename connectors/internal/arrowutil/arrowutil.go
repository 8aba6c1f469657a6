package arrowutil

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// CopyRecord returns a deep copy of rec whose buffers are newly allocated
// from mem, so it stays valid whatever the producer does with rec's
// buffers after releasing it. The caller owns (releases) the copy.
func CopyRecord(mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		d := copyData(mem, rec.Column(i).Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

func copyData(mem memory.Allocator, d arrow.ArrayData) arrow.ArrayData {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, b := range d.Buffers() {
		if b == nil {
			continue
		}
		nb := memory.NewResizableBuffer(mem)
		nb.Resize(b.Len())
		copy(nb.Bytes(), b.Bytes())
		bufs[i] = nb
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = copyData(mem, c)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	for _, c := range children {
		c.Release()
	}
	return out
}

// Project returns a record with the columns fields of rec (all of them when
// fields is nil) and schema as its schema. The columns are shared, not
// copied; the caller releases the result.
func Project(schema *arrow.Schema, rec arrow.RecordBatch, fields []int) arrow.RecordBatch {
	if fields == nil {
		return array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
	}
	cols := make([]arrow.Array, len(fields))
	for i, f := range fields {
		cols[i] = rec.Column(f)
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows())
}

// FromRows builds a batch of schema s from rows of Go values in the
// representation types documents (nil is NULL).
func FromRows(mem memory.Allocator, s types.Schema, rows [][]types.Value) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, s.Arrow())
	defer b.Release()
	for _, r := range rows {
		for c, v := range r {
			types.AppendValue(b.Field(c), v)
		}
	}
	return b.NewRecordBatch()
}
