package textparse

import (
	"encoding/base64"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// Column parses the text of one column of a row into a held value, and
// appends the held value to the column's builder. Decoders parse every
// column of a row first and append only when all parsed, so a bad record
// leaves the builders untouched.
type Column struct {
	Name string
	Type types.T
	bld  array.Builder
	// The held value.
	null bool
	i    int64
	f    float64
	d    decimal128.Num
	b    []byte // STRING/BYTES: a copy of the text, reused
	// Base64Bytes makes BYTES columns decode their text as base64 (as
	// Flink's CSV and JSON formats do) rather than take it as is.
	Base64Bytes bool
	// Fields are the fields of a ROW column, each holding its own value
	// and appending to the struct builder's field builder. A ROW column
	// holds a row once SetRow is called and its fields are set; its Parse
	// fails (a row has no text form: formats that read nested objects set
	// the fields).
	Fields []*Column
}

// NewColumn returns a Column appending to bld, a builder of t.ArrowType().
func NewColumn(name string, t types.T, bld array.Builder) *Column {
	c := &Column{Name: name, Type: t, bld: bld}
	if t.Kind == types.Row {
		sb := bld.(*array.StructBuilder)
		for i, f := range t.Fields {
			c.Fields = append(c.Fields, NewColumn(f.Name, f.Type, sb.FieldBuilder(i)))
		}
	}
	return c
}

// SetBase64Bytes sets Base64Bytes on c and its fields.
func (c *Column) SetBase64Bytes(on bool) {
	c.Base64Bytes = on
	for _, f := range c.Fields {
		f.SetBase64Bytes(on)
	}
}

// SetRow makes a ROW column hold a row (not NULL); its fields hold the
// values.
func (c *Column) SetRow() { c.null = false }

// SetNull holds NULL; it fails for a NOT NULL column.
func (c *Column) SetNull() error {
	if c.Type.NotNull {
		return fmt.Errorf("column '%s' is NOT NULL but the value is null", c.Name)
	}
	c.null = true
	return nil
}

// Parse holds the value text stands for. The error names the column.
func (c *Column) Parse(text []byte) error {
	c.null = false
	t := c.Type
	var err error
	switch t.Kind {
	case types.Null:
		c.null = true
	case types.Boolean:
		v, ok := Bool(text)
		if !ok {
			err = fail(text, t, "")
		}
		c.i = 0
		if v {
			c.i = 1
		}
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.IntervalDayTime, types.IntervalYearMonth:
		if c.i, err = Int(text, intBits(t.Kind)); err != nil {
			err = fail(text, t, err.Error())
		}
	case types.Float, types.Double:
		bits := 64
		if t.Kind == types.Float {
			bits = 32
		}
		if c.f, err = Float(text, bits); err != nil {
			err = fail(text, t, err.Error())
		}
	case types.Decimal:
		if c.d, err = Decimal(text, t.Precision, t.Scale); err != nil {
			err = fail(text, t, err.Error())
		}
	case types.String:
		c.b = append(c.b[:0], text...)
	case types.Bytes:
		if c.Base64Bytes {
			n := base64.StdEncoding.DecodedLen(len(text))
			c.b = append(c.b[:0], make([]byte, n)...)[:n]
			m, derr := base64.StdEncoding.Decode(c.b, text)
			if derr != nil {
				err = fail(text, t, "not base64")
			}
			c.b = c.b[:m]
		} else {
			c.b = append(c.b[:0], text...)
		}
	case types.Date:
		v, ok := Date(text)
		if !ok {
			err = fail(text, t, "expected yyyy-MM-dd")
		}
		c.i = int64(v)
	case types.Time:
		v, ok := Time(text)
		if !ok {
			err = fail(text, t, "expected HH:mm:ss[.fff]")
		}
		c.i = int64(v)
	case types.Timestamp:
		var ok bool
		if c.i, ok = Timestamp(text, t.Precision); !ok {
			err = fail(text, t, "expected yyyy-MM-dd HH:mm:ss[.fff]")
		}
	case types.Row:
		err = fail(text, t, "a ROW is read from a JSON object")
	default:
		err = fail(text, t, "unsupported type")
	}
	if err != nil {
		return fmt.Errorf("column '%s': %w", c.Name, err)
	}
	return nil
}

// Append appends the held value.
func (c *Column) Append() {
	if c.null {
		c.bld.AppendNull()
		return
	}
	switch b := c.bld.(type) {
	case *array.StructBuilder:
		b.Append(true)
		for _, f := range c.Fields {
			f.Append()
		}
	case *array.BooleanBuilder:
		b.Append(c.i != 0)
	case *array.Int8Builder:
		b.Append(int8(c.i))
	case *array.Int16Builder:
		b.Append(int16(c.i))
	case *array.Int32Builder:
		b.Append(int32(c.i))
	case *array.Int64Builder:
		b.Append(c.i)
	case *array.Float32Builder:
		b.Append(float32(c.f))
	case *array.Float64Builder:
		b.Append(c.f)
	case *array.Decimal128Builder:
		b.Append(c.d)
	case *array.StringBuilder:
		b.BinaryBuilder.Append(c.b)
	case *array.BinaryBuilder:
		b.Append(c.b)
	case *array.Date32Builder:
		b.Append(arrow.Date32(c.i))
	case *array.Time32Builder:
		b.Append(arrow.Time32(c.i))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(c.i))
	case *array.NullBuilder:
		b.AppendNull()
	default:
		panic(fmt.Sprintf("textparse: Append to %T", b))
	}
}
