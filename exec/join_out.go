package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// joinOutCol is a column of a regular join's output being built: its
// builder and, for the common types, the builder's concrete type, so that
// appending a cell of those takes no type switch.
type joinOutCol struct {
	b    array.Builder
	t    types.T
	kind joinOutKind
	i64  *array.Int64Builder
	i32  *array.Int32Builder
	ts   *array.TimestampBuilder
	str  *array.StringBuilder
}

type joinOutKind uint8

const (
	outOther joinOutKind = iota
	outInt64
	outInt32
	outTimestamp
	outString
)

// newJoinOutCols returns the output columns of builders bs, of types ts.
func newJoinOutCols(bs []array.Builder, ts []types.T) []joinOutCol {
	cols := make([]joinOutCol, len(bs))
	for i, b := range bs {
		c := joinOutCol{b: b, t: ts[i]}
		switch bb := b.(type) {
		case *array.Int64Builder:
			c.kind, c.i64 = outInt64, bb
		case *array.Int32Builder:
			c.kind, c.i32 = outInt32, bb
		case *array.TimestampBuilder:
			c.kind, c.ts = outTimestamp, bb
		case *array.StringBuilder:
			c.kind, c.str = outString, bb
		}
		cols[i] = c
	}
	return cols
}

// appendEncodedCols appends the cells of row (encodeKey form, one per
// column) to cols, as appendEncodedRow does.
func appendEncodedCols(cols []joinOutCol, row []byte) error {
	for i := range cols {
		c := &cols[i]
		if len(row) >= 2 && row[0] != 0 { // not NULL
			switch c.kind {
			case outInt64:
				if len(row) >= 9 {
					c.i64.Append(int64(binary.BigEndian.Uint64(row[1:9])))
					row = row[9:]
					continue
				}
			case outInt32:
				if len(row) >= 9 {
					c.i32.Append(int32(binary.BigEndian.Uint64(row[1:9])))
					row = row[9:]
					continue
				}
			case outTimestamp:
				if len(row) >= 9 {
					c.ts.Append(arrow.Timestamp(binary.BigEndian.Uint64(row[1:9])))
					row = row[9:]
					continue
				}
			case outString:
				if n, m := binary.Uvarint(row[1:]); m > 0 && uint64(len(row)-1-m) >= n {
					end := 1 + m + int(n)
					c.str.Append(unsafeString(row[1+m : end]))
					row = row[end:]
					continue
				}
			}
		}
		rest, err := appendEncodedCell(c.b, c.t, unsafeString(row))
		if err != nil {
			return err
		}
		row = row[len(row)-len(rest):]
	}
	if len(row) != 0 {
		return fmt.Errorf("%w: a join row has %d bytes more than its columns", state.ErrCorrupt, len(row))
	}
	return nil
}

// appendCellTo appends row i of the column r reads to c (of r's type), as
// appendCell does.
func appendCellTo(c *joinOutCol, r *colReader, i int) {
	switch {
	case c.kind == outInt64 && r.i64 != nil && !r.isNull(i):
		c.i64.Append(r.i64[i])
	case c.kind == outInt32 && r.i32 != nil && !r.isNull(i):
		c.i32.Append(r.i32[i])
	case c.kind == outString && r.str != nil && !r.isNull(i):
		c.str.Append(r.str.Value(i))
	default:
		appendCell(c.b, r, i)
	}
}
