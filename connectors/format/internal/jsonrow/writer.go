package jsonrow

import (
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connectors/internal/textenc"
	"github.com/streamsql/streamsql/types"
)

// Writer writes rows as JSON objects with every column: NULL as null,
// numbers as JSON numbers (NaN and infinities as strings), booleans as
// true/false, everything else as strings in the form textenc writes them
// (TIMESTAMP as 'yyyy-MM-dd HH:mm:ss[.fff]', BYTES as base64), a ROW as
// an object of its fields.
type Writer struct {
	cols []*member
	val  []byte
}

// member is a column, or a field of a ROW: its type, its name as the JSON
// text "name": and, for a ROW, its fields.
type member struct {
	t      types.T
	name   []byte
	fields []*member
}

func newMember(c types.Column) *member {
	m := &member{t: c.Type, name: append(AppendString(nil, []byte(c.Name)), ':')}
	for _, f := range c.Type.Fields {
		m.fields = append(m.fields, newMember(f))
	}
	return m
}

// NewWriter returns a writer of rows of schema.
func NewWriter(schema types.Schema) *Writer {
	w := &Writer{}
	for _, c := range schema {
		w.cols = append(w.cols, newMember(c))
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
		dst = append(dst, w.cols[c].name...)
		dst = w.appendValue(dst, w.cols[c], rec.Column(c), i)
	}
	return append(dst, '}')
}

// appendValue appends row i of col, of type t, as a JSON value: a ROW as a
// nested object of its fields.
func (w *Writer) appendValue(dst []byte, m *member, col arrow.Array, i int) []byte {
	t := m.t
	if col.IsNull(i) {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case types.Boolean:
		return textenc.AppendValue(dst, t, col, i)
	case types.Row:
		st := col.(*array.Struct)
		dst = append(dst, '{')
		for f, fm := range m.fields {
			if f > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, fm.name...)
			dst = w.appendValue(dst, fm, st.Field(f), i)
		}
		return append(dst, '}')
	}
	w.val = textenc.AppendValue(w.val[:0], t, col, i)
	if textenc.IsNumber(t) && finite(col, i) {
		return append(dst, w.val...)
	}
	return AppendString(dst, w.val)
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

// AppendString appends s as a JSON string. A byte that is not part of
// UTF-8 (a STRING read by raw or csv may hold one) is written as U+FFFD,
// the replacement character, so that what is written is always JSON.
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, "\uFFFD"...)
				continue
			}
			dst = append(dst, s[i:i+n]...)
			i += n - 1
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
