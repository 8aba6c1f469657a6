package jsonrow

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connectors/internal/textenc"
	"github.com/streamsql/streamsql/types"
)

// Writer writes rows as JSON objects with every column: NULL as null,
// numbers as JSON numbers (NaN and infinities as strings), booleans as
// true/false, everything else as strings in the form textenc writes them
// (TIMESTAMP as 'yyyy-MM-dd HH:mm:ss[.fff]', BYTES as base64).
type Writer struct {
	schema types.Schema
	names  [][]byte // "name": for each column
	val    []byte
}

// NewWriter returns a writer of rows of schema.
func NewWriter(schema types.Schema) *Writer {
	w := &Writer{schema: schema}
	for _, c := range schema {
		w.names = append(w.names, append(AppendString(nil, []byte(c.Name)), ':'))
	}
	return w
}

// AppendObject appends row i of rec as one JSON object (no newline).
func (w *Writer) AppendObject(dst []byte, rec arrow.RecordBatch, i int) []byte {
	dst = append(dst, '{')
	for c := range int(rec.NumCols()) {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, w.names[c]...)
		col, t := rec.Column(c), w.schema[c].Type
		if col.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		if t.Kind == types.Boolean {
			dst = textenc.AppendValue(dst, t, col, i)
			continue
		}
		w.val = textenc.AppendValue(w.val[:0], t, col, i)
		if textenc.IsNumber(t) && finite(col, i) {
			dst = append(dst, w.val...)
		} else {
			dst = AppendString(dst, w.val)
		}
	}
	return append(dst, '}')
}

func finite(col arrow.Array, i int) bool {
	switch a := col.(type) {
	case *array.Float32:
		f := float64(a.Value(i))
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case *array.Float64:
		f := a.Value(i)
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return true
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string.
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
