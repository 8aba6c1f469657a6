package exec

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// colReader reads one column of a batch by row without boxing: integers,
// dates, times and timestamps as int64, floats as float64, decimals as
// decimal128.Num, strings and bytes as a string view into the buffer (valid
// only while the batch lives).
type colReader struct {
	kind types.Kind
	arr  arrow.Array
	i8   []int8
	i16  []int16
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	dec  []decimal128.Num
	str  *array.String
	bin  *array.Binary
	bl   *array.Boolean
}

func (r *colReader) reset(t types.T, a arrow.Array) {
	*r = colReader{kind: t.Kind, arr: a}
	switch x := a.(type) {
	case *array.Int8:
		r.i8 = x.Int8Values()
	case *array.Int16:
		r.i16 = x.Int16Values()
	case *array.Int32:
		r.i32 = x.Int32Values()
	case *array.Int64:
		r.i64 = x.Int64Values()
	case *array.Float32:
		r.f32 = x.Float32Values()
	case *array.Float64:
		r.f64 = x.Float64Values()
	case *array.Decimal128:
		r.dec = x.Values()
	case *array.String:
		r.str = x
	case *array.Binary:
		r.bin = x
	case *array.Boolean:
		r.bl = x
	case *array.Date32:
		r.i32 = arrow.Int32Traits.CastFromBytes(arrow.Date32Traits.CastToBytes(x.Date32Values()))
	case *array.Time32:
		r.i32 = arrow.Int32Traits.CastFromBytes(arrow.Time32Traits.CastToBytes(x.Time32Values()))
	case *array.Timestamp:
		r.i64 = arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(x.TimestampValues()))
	}
}

func (r *colReader) isNull(i int) bool { return r.arr.IsNull(i) }

// int reads an integer-like value (also booleans as 0/1).
func (r *colReader) int(i int) int64 {
	switch {
	case r.i64 != nil:
		return r.i64[i]
	case r.i32 != nil:
		return int64(r.i32[i])
	case r.i16 != nil:
		return int64(r.i16[i])
	case r.i8 != nil:
		return int64(r.i8[i])
	case r.bl != nil:
		if r.bl.Value(i) {
			return 1
		}
	}
	return 0
}

func (r *colReader) float(i int) float64 {
	if r.f64 != nil {
		return r.f64[i]
	}
	return float64(r.f32[i])
}

func (r *colReader) decimal(i int) decimal128.Num { return r.dec[i] }

func (r *colReader) text(i int) string {
	if r.str != nil {
		return r.str.Value(i)
	}
	return string(r.bin.Value(i))
}

// class is how values of a kind are held: 'i' int64, 'f' float64,
// 'd' decimal, 's' string.
func class(k types.Kind) byte {
	switch k {
	case types.Float, types.Double:
		return 'f'
	case types.Decimal:
		return 'd'
	case types.String, types.Bytes:
		return 's'
	}
	return 'i'
}

// encode appends row i's value (not NULL) in a form where equal values give
// equal bytes.
func (r *colReader) encode(dst []byte, i int) []byte {
	switch class(r.kind) {
	case 'f':
		f := r.float(i)
		if f == 0 {
			f = 0 // -0 and +0 are one value
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	case 'd':
		d := r.decimal(i)
		dst = binary.BigEndian.AppendUint64(dst, uint64(d.HighBits()))
		return binary.BigEndian.AppendUint64(dst, d.LowBits())
	case 's':
		if r.str != nil {
			return append(dst, r.str.Value(i)...)
		}
		return append(dst, r.bin.Value(i)...)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(r.int(i)))
}

// encodeKey appends row i's value, NULL included, as part of a composite
// key: a null flag, then the value, length-prefixed when variable.
func (r *colReader) encodeKey(dst []byte, i int) []byte {
	if r.isNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	if class(r.kind) == 's' {
		var n int
		if r.str != nil {
			n = len(r.str.Value(i))
		} else {
			n = len(r.bin.Value(i))
		}
		dst = binary.AppendUvarint(dst, uint64(n))
	}
	return r.encode(dst, i)
}
