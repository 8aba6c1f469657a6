package exec

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/types"
)

// keyTestColumn is a column of type t: three values (small, negative,
// large where the type has them) and a NULL.
func keyTestColumn(t *testing.T, kt types.T) arrow.Array {
	if kt.Kind == types.Null {
		return array.NewNull(4)
	}
	b := array.NewBuilder(memory.DefaultAllocator, kt.ArrowType())
	defer b.Release()
	for i := 0; i < 3; i++ {
		n := []int64{1, -5, 1 << 40}[i]
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(i != 1)
		case *array.Int8Builder:
			b.Append(int8(n))
		case *array.Int16Builder:
			b.Append(int16(n))
		case *array.Int32Builder:
			b.Append(int32(n))
		case *array.Int64Builder:
			b.Append(n)
		case *array.Float32Builder:
			b.Append(float32(n) / 3)
		case *array.Float64Builder:
			b.Append(float64(n) / 3)
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(n))
		case *array.StringBuilder:
			b.Append([]string{"", "é", "a longer string than a word"}[i])
		case *array.BinaryBuilder:
			b.Append([][]byte{{}, {0, 0xff}, []byte("bytes")}[i])
		case *array.Date32Builder:
			b.Append(arrow.Date32(n))
		case *array.Time32Builder:
			b.Append(arrow.Time32(n & 0xffffff))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(n))
		default:
			t.Fatalf("no values for %s", kt)
		}
	}
	b.AppendNull()
	return b.NewArray()
}

// TestGroupKeyColumns: a group aggregate's key, held as its cache key
// (colReader.encodeKey), gives back the values of every key type: in the
// rows emitted and in error messages; and skipKey reads past the key
// values of state written before version 3 (groupStateVersion).
func TestGroupKeyColumns(t *testing.T) {
	for _, kt := range []types.T{
		{}, types.BooleanType, {Kind: types.TinyInt}, {Kind: types.SmallInt}, types.IntType, types.BigIntType,
		types.DecimalOf(20, 2), {Kind: types.Float}, types.DoubleType, types.StringType, types.BytesType,
		types.DateType, {Kind: types.Time}, types.TimestampOf(6), {Kind: types.IntervalDayTime},
	} {
		col := keyTestColumn(t, kt)
		var r colReader
		r.reset(kt, col)
		b := array.NewBuilder(memory.DefaultAllocator, kt.ArrowType())
		for i := 0; i < col.Len(); i++ {
			// Two columns, so that each value is read from within a key.
			key := string(r.encodeKey(r.encodeKey(nil, i), i))
			keyT := []types.T{kt, kt}
			v := types.ValueAt(col, i)
			d := decoder{src: appendKey(nil, []types.Value{v, v})}
			d.skipKey(keyT)
			d.end()
			if d.err != nil {
				t.Errorf("%s row %d: %v", kt, i, d.err)
			}
			if got, want := formatKey(keyT, key), types.Format(kt, v)+", "+types.Format(kt, v); got != want {
				t.Errorf("%s row %d: formatted %q, want %q", kt, i, got, want)
			}
			appendKeyRow([]array.Builder{b}, keyT[:1], key)
		}
		got := b.NewArray()
		if !array.Equal(got, col) {
			t.Errorf("%s: the keys give back %v, want %v", kt, got, col)
		}
		got.Release()
		b.Release()
		col.Release()
	}
	// A key of another type, a cut key, an unknown tag.
	d := decoder{src: appendKey(nil, []types.Value{"x"}), owner: "operator g"}
	d.skipKey([]types.T{types.BigIntType})
	if !errors.Is(d.err, checkpoint.ErrIncompatibleState) {
		t.Errorf("a STRING key read as BIGINT: %v", d.err)
	}
	for _, src := range [][]byte{appendKey(nil, []types.Value{int64(1)})[:5], {1, 99}} {
		d = decoder{src: src, owner: "operator g"}
		d.skipKey([]types.T{types.BigIntType})
		if !errors.Is(d.err, errCorrupt) {
			t.Errorf("key %x: %v, want corrupt", src, d.err)
		}
	}
}
