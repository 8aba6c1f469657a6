package format

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/textparse"
	"github.com/streamsql/streamsql/types"
)

// Rows is the batch under construction that decoders share: one
// textparse.Column per produced column, in produced order, and a way to
// find a column by its position in the table.
type Rows struct {
	bld  *array.RecordBuilder
	Cols []*textparse.Column
	// ByField maps a table column index to its position in Cols, or -1
	// when the column is not produced.
	ByField []int
	n       int
}

// NewRows prepares a batch for s.
func NewRows(s Spec) *Rows {
	mem := s.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	fields := s.Fields
	if fields == nil {
		for i := range s.Schema {
			fields = append(fields, i)
		}
	}
	produced := make(types.Schema, len(fields))
	for i, f := range fields {
		produced[i] = s.Schema[f]
	}
	r := &Rows{bld: array.NewRecordBuilder(mem, produced.Arrow()), ByField: make([]int, len(s.Schema))}
	for i := range r.ByField {
		r.ByField[i] = -1
	}
	for i, f := range fields {
		r.ByField[f] = i
		c := textparse.NewColumn(s.Schema[f].Name, s.Schema[f].Type, r.bld.Field(i))
		c.SetBase64Bytes(true) // BYTES are base64 in Flink's text formats
		r.Cols = append(r.Cols, c)
	}
	return r
}

// Commit appends the values every column holds as one row.
func (r *Rows) Commit() { r.CommitCols(r.Cols) }

// Second returns another set of columns like Cols, appending to the same
// builders but holding values of their own, so that a decoder can parse two
// rows (the before and after image of an update) and then append both or
// neither.
func (r *Rows) Second() []*textparse.Column {
	out := make([]*textparse.Column, len(r.Cols))
	for i, c := range r.Cols {
		out[i] = textparse.NewColumn(c.Name, c.Type, r.bld.Field(i))
		out[i].SetBase64Bytes(c.Base64Bytes)
	}
	return out
}

// CommitCols appends the values cols hold (Cols or a set from Second) as
// one row.
func (r *Rows) CommitCols(cols []*textparse.Column) {
	for _, c := range cols {
		c.Append()
	}
	r.n++
}

// Len is the number of rows committed since the last Flush.
func (r *Rows) Len() int { return r.n }

// Flush returns the committed rows as a batch.
func (r *Rows) Flush() arrow.RecordBatch {
	n := r.n
	r.n = 0
	if len(r.Cols) == 0 { // no column read (COUNT(*)): rows without columns
		return array.NewRecordBatch(r.bld.Schema(), nil, int64(n))
	}
	return r.bld.NewRecordBatch()
}

// Release frees the builders.
func (r *Rows) Release() { r.bld.Release() }

// RefuseRows is the error of a format that cannot carry a ROW column
// (csv, raw) when schema has one; nil otherwise.
func RefuseRows(format string, schema types.Schema) error {
	for _, c := range schema {
		if c.Type.Kind == types.Row {
			return rowColumnError(fmt.Sprintf("format '%s' cannot carry the ROW column '%s' (use 'json', which reads and writes it as a nested object)", format, c.Name))
		}
	}
	return nil
}

// ErrRowColumn is the error of a format given a ROW column it cannot carry
// (errors.Is).
var ErrRowColumn = errors.New("ROW column in a flat format")

type rowColumnError string

func (e rowColumnError) Error() string { return string(e) }
func (e rowColumnError) Unwrap() error { return ErrRowColumn }
