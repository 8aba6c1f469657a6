package avro

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// target is a column (or a field of a ROW column) a decoder fills: the
// value of the record being decoded sits in its slot until the record is
// committed to the builder.
type target struct {
	path string
	t    types.T
	bld  array.Builder
	kids []*target // ROW fields, in the reader's order

	// The slot.
	null bool
	i    int64
	f    float64
	bs   []byte // into the record being decoded
	dec  decimal128.Num
}

func newTarget(path string, t types.T, bld array.Builder) *target {
	tg := &target{path: path, t: t, bld: bld, null: true}
	if t.Kind == types.Row {
		sb := bld.(*array.StructBuilder)
		for i, f := range t.Fields {
			tg.kids = append(tg.kids, newTarget(path+"."+f.Name, f.Type, sb.FieldBuilder(i)))
		}
	}
	return tg
}

// reset empties the slot (and the kids').
func (tg *target) reset() {
	tg.null = true
	for _, k := range tg.kids {
		k.reset()
	}
}

// check reports a NULL the column cannot hold.
func (tg *target) check() error {
	if tg.null {
		if tg.t.NotNull {
			return fmt.Errorf("column '%s': %w", tg.path, errNullNotNull)
		}
		return nil
	}
	for _, k := range tg.kids {
		if err := k.check(); err != nil {
			return err
		}
	}
	switch tg.t.Kind {
	case types.TinyInt:
		if tg.i < -1<<7 || tg.i >= 1<<7 {
			return fmt.Errorf("column '%s': %d is out of range for TINYINT", tg.path, tg.i)
		}
	case types.SmallInt:
		if tg.i < -1<<15 || tg.i >= 1<<15 {
			return fmt.Errorf("column '%s': %d is out of range for SMALLINT", tg.path, tg.i)
		}
	case types.Int, types.Date, types.Time:
		if tg.i < -1<<31 || tg.i >= 1<<31 {
			return fmt.Errorf("column '%s': %d is out of range for %s", tg.path, tg.i, tg.t)
		}
	case types.Decimal:
		if !tg.dec.FitsInPrecision(int32(tg.t.Precision)) {
			return fmt.Errorf("column '%s': %s does not fit %s", tg.path, tg.dec.ToString(int32(tg.t.Scale)), tg.t)
		}
	}
	return nil
}

// commit appends the slot to the builder.
func (tg *target) commit() {
	if tg.null {
		tg.bld.AppendNull()
		return
	}
	switch b := tg.bld.(type) {
	case *array.BooleanBuilder:
		b.Append(tg.i != 0)
	case *array.Int8Builder:
		b.Append(int8(tg.i))
	case *array.Int16Builder:
		b.Append(int16(tg.i))
	case *array.Int32Builder:
		b.Append(int32(tg.i))
	case *array.Int64Builder:
		b.Append(tg.i)
	case *array.Float32Builder:
		b.Append(float32(tg.f))
	case *array.Float64Builder:
		b.Append(tg.f)
	case *array.StringBuilder:
		b.BinaryBuilder.Append(tg.bs)
	case *array.BinaryBuilder:
		b.Append(tg.bs)
	case *array.Decimal128Builder:
		b.Append(tg.dec)
	case *array.Date32Builder:
		b.Append(arrow.Date32(tg.i))
	case *array.Time32Builder:
		b.Append(arrow.Time32(tg.i))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(tg.i))
	case *array.StructBuilder:
		b.Append(true)
		for _, k := range tg.kids {
			k.commit()
		}
	default:
		panic(fmt.Sprintf("avro: no builder for %s", tg.t))
	}
}
