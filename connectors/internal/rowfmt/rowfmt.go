package rowfmt

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// AppendRow appends row i of rec, whose columns have the types of schema,
// as "+I[v1, v2, ...]" (the op of the row, then its values) to dst.
func AppendRow(dst []byte, schema types.Schema, b exec.Batch, i int) []byte {
	dst = append(dst, b.Op(i).String()...)
	dst = append(dst, '[')
	dst = AppendValues(dst, schema, b.Rec, i)
	return append(dst, ']')
}

// AppendValues appends the values of row i of rec separated by ", ".
func AppendValues(dst []byte, schema types.Schema, rec arrow.RecordBatch, i int) []byte {
	for c := 0; c < int(rec.NumCols()); c++ {
		if c > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, types.Format(schema[c].Type, types.ValueAt(rec.Column(c), i))...)
	}
	return dst
}

// Lines returns every row of b as AppendRow prints it.
func Lines(schema types.Schema, b exec.Batch) []string {
	out := make([]string, b.Len())
	var buf []byte
	for i := range out {
		buf = AppendRow(buf[:0], schema, b, i)
		out[i] = string(buf)
	}
	return out
}
