package avro

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/types"
)

// Encoder writes plain Avro records of the table's schema. Records have no
// terminator (the format is binary).
type Encoder struct {
	cols types.Schema
}

// NewEncoder checks that the columns of s map to Avro and returns an
// encoder.
func NewEncoder(s format.Spec) (*Encoder, error) {
	if _, err := Schema(s.Schema); err != nil {
		return nil, err
	}
	return &Encoder{cols: s.Schema}, nil
}

// AppendRow appends row i of rec as one Avro record.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	for j, c := range e.cols {
		dst = appendValue(dst, c.Type, rec.Column(j), i)
	}
	return dst
}

func appendLong(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, uint64(v<<1)^uint64(v>>63))
}

func appendValue(dst []byte, t types.T, a arrow.Array, i int) []byte {
	if !t.NotNull {
		if a.IsNull(i) {
			return append(dst, 0) // branch 0: null
		}
		dst = append(dst, 2) // branch 1
	}
	switch t.Kind {
	case types.Boolean:
		if a.(*array.Boolean).Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case types.TinyInt:
		return appendLong(dst, int64(a.(*array.Int8).Value(i)))
	case types.SmallInt:
		return appendLong(dst, int64(a.(*array.Int16).Value(i)))
	case types.Int:
		return appendLong(dst, int64(a.(*array.Int32).Value(i)))
	case types.BigInt:
		return appendLong(dst, a.(*array.Int64).Value(i))
	case types.Float:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.(*array.Float32).Value(i)))
	case types.Double:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(a.(*array.Float64).Value(i)))
	case types.String:
		s := a.(*array.String).Value(i)
		return append(appendLong(dst, int64(len(s))), s...)
	case types.Bytes:
		b := a.(*array.Binary).Value(i)
		return append(appendLong(dst, int64(len(b))), b...)
	case types.Decimal:
		return appendDecimal(dst, a.(*array.Decimal128).Value(i))
	case types.Date:
		return appendLong(dst, int64(a.(*array.Date32).Value(i)))
	case types.Time:
		return appendLong(dst, int64(a.(*array.Time32).Value(i)))
	case types.Timestamp:
		v := int64(a.(*array.Timestamp).Value(i))
		if t.Precision <= 3 {
			v = floorDiv(v, 1000)
		}
		return appendLong(dst, v)
	case types.Row:
		s := a.(*array.Struct)
		for j, f := range t.Fields {
			dst = appendValue(dst, f.Type, s.Field(j), i)
		}
		return dst
	}
	panic("avro: no encoding for " + t.String()) // refused by NewEncoder
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// appendDecimal appends d as bytes: its unscaled value in the fewest
// big-endian two's-complement bytes.
func appendDecimal(dst []byte, d decimal128.Num) []byte {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(d.HighBits()))
	binary.BigEndian.PutUint64(buf[8:], d.LowBits())
	k := 0
	for k < 15 && (buf[k] == 0 && buf[k+1]&0x80 == 0 || buf[k] == 0xff && buf[k+1]&0x80 != 0) {
		k++
	}
	return append(appendLong(dst, int64(16-k)), buf[k:]...)
}
