package jdbc

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/streamsql/streamsql/types"
)

// column buffers the values of one column of the rows a sink holds,
// converted to what pgx sends, and gives them as one array parameter:
// a statement takes a column of many rows through unnest($n::type[]).
type column interface {
	// add appends row's value of arr; set replaces slot's value with it.
	add(arr arrow.Array, row int)
	set(slot int, arr arrow.Array, row int)
	// key appends row's value of arr to buf, so that equal values, and
	// only those, append equal bytes.
	key(buf []byte, arr arrow.Array, row int) []byte
	// array is the values at slots (every one, when slots is nil), as
	// the argument of a parameter of type elem()[].
	array(slots []int) any
	elem() string
	reset()
}

// typed is a column of values of T.
type typed[T any] struct {
	vals []T
	get  func(arr arrow.Array, row int) T
	pg   string
}

func (c *typed[T]) add(arr arrow.Array, row int) { c.vals = append(c.vals, c.get(arr, row)) }
func (c *typed[T]) set(slot int, arr arrow.Array, row int) {
	c.vals[slot] = c.get(arr, row)
}
func (c *typed[T]) elem() string { return c.pg }
func (c *typed[T]) reset()       { clear(c.vals); c.vals = c.vals[:0] }
func (c *typed[T]) array(slots []int) any {
	if slots == nil {
		return c.vals
	}
	out := make([]T, len(slots))
	for i, s := range slots {
		out[i] = c.vals[s]
	}
	return out
}

// key encodes a value by its printed form: one form per value for every
// type (a NULL is a byte of its own), length-prefixed.
func (c *typed[T]) key(buf []byte, arr arrow.Array, row int) []byte {
	if arr.IsNull(row) {
		return append(buf, 0)
	}
	v := fmt.Sprint(types.ValueAt(arr, row))
	buf = append(buf, 1)
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	return append(buf, v...)
}

// intKey is the key of an integer column, without printing.
type intCol struct{ typed[pgtype.Int8] }

func (c *intCol) key(buf []byte, arr arrow.Array, row int) []byte {
	v := c.get(arr, row)
	if !v.Valid {
		return append(buf, 0)
	}
	return binary.BigEndian.AppendUint64(append(buf, 1), uint64(v.Int64))
}

// strCol is a string column; its key is the string.
type strCol struct{ typed[pgtype.Text] }

func (c *strCol) key(buf []byte, arr arrow.Array, row int) []byte {
	if arr.IsNull(row) {
		return append(buf, 0)
	}
	s := arr.(*array.String).Value(row)
	buf = binary.AppendUvarint(append(buf, 1), uint64(len(s)))
	return append(buf, s...)
}

// newColumn returns the buffer of a column of type t, or an error for a
// type the sink does not write.
func newColumn(t types.T) (column, error) {
	switch t.Kind {
	case types.Boolean:
		return &typed[pgtype.Bool]{pg: "boolean", get: func(a arrow.Array, i int) pgtype.Bool {
			return pgtype.Bool{Bool: !a.IsNull(i) && a.(*array.Boolean).Value(i), Valid: !a.IsNull(i)}
		}}, nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		var get func(a arrow.Array, i int) int64
		switch t.Kind {
		case types.TinyInt:
			get = func(a arrow.Array, i int) int64 { return int64(a.(*array.Int8).Value(i)) }
		case types.SmallInt:
			get = func(a arrow.Array, i int) int64 { return int64(a.(*array.Int16).Value(i)) }
		case types.Int:
			get = func(a arrow.Array, i int) int64 { return int64(a.(*array.Int32).Value(i)) }
		default:
			get = func(a arrow.Array, i int) int64 { return a.(*array.Int64).Value(i) }
		}
		return &intCol{typed[pgtype.Int8]{pg: "bigint", get: func(a arrow.Array, i int) pgtype.Int8 {
			if a.IsNull(i) {
				return pgtype.Int8{}
			}
			return pgtype.Int8{Int64: get(a, i), Valid: true}
		}}}, nil
	case types.Float, types.Double:
		return &typed[pgtype.Float8]{pg: "double precision", get: func(a arrow.Array, i int) pgtype.Float8 {
			if a.IsNull(i) {
				return pgtype.Float8{}
			}
			if f, ok := a.(*array.Float32); ok {
				return pgtype.Float8{Float64: float64(f.Value(i)), Valid: true}
			}
			return pgtype.Float8{Float64: a.(*array.Float64).Value(i), Valid: true}
		}}, nil
	case types.Decimal:
		scale := t.Scale
		return &typed[pgtype.Numeric]{pg: "numeric", get: func(a arrow.Array, i int) pgtype.Numeric {
			if a.IsNull(i) {
				return pgtype.Numeric{}
			}
			return pgtype.Numeric{Int: a.(*array.Decimal128).Value(i).BigInt(), Exp: int32(-scale), Valid: true}
		}}, nil
	case types.String:
		return &strCol{typed[pgtype.Text]{pg: "text", get: func(a arrow.Array, i int) pgtype.Text {
			if a.IsNull(i) {
				return pgtype.Text{}
			}
			// The batch's buffers are reused once it is released.
			return pgtype.Text{String: strings.Clone(a.(*array.String).Value(i)), Valid: true}
		}}}, nil
	case types.Bytes:
		return &typed[[]byte]{pg: "bytea", get: func(a arrow.Array, i int) []byte {
			if a.IsNull(i) {
				return nil
			}
			return append([]byte{}, a.(*array.Binary).Value(i)...)
		}}, nil
	case types.Date:
		return &typed[pgtype.Date]{pg: "date", get: func(a arrow.Array, i int) pgtype.Date {
			if a.IsNull(i) {
				return pgtype.Date{}
			}
			return pgtype.Date{Time: time.Unix(int64(a.(*array.Date32).Value(i))*86400, 0).UTC(), Valid: true}
		}}, nil
	case types.Time:
		return &typed[pgtype.Time]{pg: "time", get: func(a arrow.Array, i int) pgtype.Time {
			if a.IsNull(i) {
				return pgtype.Time{}
			}
			return pgtype.Time{Microseconds: int64(a.(*array.Time32).Value(i)) * 1000, Valid: true}
		}}, nil
	case types.Timestamp:
		return &typed[pgtype.Timestamp]{pg: "timestamp", get: func(a arrow.Array, i int) pgtype.Timestamp {
			if a.IsNull(i) {
				return pgtype.Timestamp{}
			}
			us := int64(a.(*array.Timestamp).Value(i))
			return pgtype.Timestamp{Time: time.UnixMicro(us).UTC(), Valid: true}
		}}, nil
	}
	return nil, fmt.Errorf("type %s is not written by the jdbc sink (it writes BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, "+
		"CHAR, VARCHAR/STRING, BINARY, VARBINARY/BYTES, DATE, TIME and TIMESTAMP)", t)
}
