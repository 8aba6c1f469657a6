package raw

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/types"
)

// Name is the value of the 'format' option.
const Name = "raw"

// Option keys, without prefix.
const (
	OptCharset    = "charset"
	OptEndianness = "endianness"
)

func init() {
	format.Register(format.Format{
		Name:       Name,
		Flat:       true,
		Extension:  ".raw",
		Options:    []string{OptCharset, OptEndianness},
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
}

type config struct {
	typ   types.T
	order byteOrder
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func parse(s format.Spec) (config, error) {
	c := config{order: binary.BigEndian}
	if err := format.RefuseRows(Name, s.Schema); err != nil {
		return c, err
	}
	if len(s.Schema) != 1 {
		return c, fmt.Errorf("the raw format holds exactly one column, got %d (%s)", len(s.Schema), strings.Join(s.Schema.Names(), ", "))
	}
	c.typ = s.Schema[0].Type
	switch c.typ.Kind {
	case types.String, types.Bytes, types.Boolean, types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Float, types.Double:
	default:
		return c, fmt.Errorf("the raw format cannot hold column '%s' of type %s (STRING, BYTES, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE)", s.Schema[0].Name, c.typ)
	}
	cs := option.String(s.Options, s.Prefix+OptCharset, "UTF-8")
	if !strings.EqualFold(cs, "UTF-8") && !strings.EqualFold(cs, "UTF8") {
		return c, option.Bad(s.Prefix+OptCharset, cs, "'UTF-8'")
	}
	e, err := option.Enum(s.Options, s.Prefix+OptEndianness, "big-endian", "big-endian", "little-endian")
	if err != nil {
		return c, err
	}
	if e == "little-endian" {
		c.order = binary.LittleEndian
	}
	return c, nil
}

// width is the length of the binary form of a fixed-width type, 0 for
// STRING and BYTES.
func width(k types.Kind) int {
	switch k {
	case types.Boolean, types.TinyInt:
		return 1
	case types.SmallInt:
		return 2
	case types.Int, types.Float:
		return 4
	case types.BigInt, types.Double:
		return 8
	}
	return 0
}

// Decoder reads raw records.
type Decoder struct {
	c    config
	rows *format.Rows
	text []byte
}

// NewDecoder checks the options of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	c, err := parse(s)
	if err != nil {
		return nil, err
	}
	d := &Decoder{c: c, rows: format.NewRows(s)}
	for _, col := range d.rows.Cols {
		col.Base64Bytes = false
	}
	return d, nil
}

func (d *Decoder) IgnoreParseErrors() bool    { return false }
func (d *Decoder) Incomplete(rec []byte) bool { return false }
func (d *Decoder) Rows() int                  { return d.rows.Len() }
func (d *Decoder) Flush() arrow.RecordBatch   { return d.rows.Flush() }
func (d *Decoder) Release()                   { d.rows.Release() }

// Decode appends the value rec holds; a nil rec is NULL.
func (d *Decoder) Decode(rec []byte) error {
	if len(d.rows.Cols) == 0 { // the column is not read
		d.rows.Commit()
		return nil
	}
	col := d.rows.Cols[0]
	if rec == nil {
		if err := col.SetNull(); err != nil {
			return err
		}
		d.rows.Commit()
		return nil
	}
	k := d.c.typ.Kind
	if w := width(k); w > 0 && len(rec) != w {
		return fmt.Errorf("column '%s': a raw %s is %d bytes, got %d", col.Name, d.c.typ, w, len(rec))
	}
	text := rec
	o := d.c.order
	switch k {
	case types.Boolean:
		if rec[0] > 1 {
			return fmt.Errorf("column '%s': a raw BOOLEAN is the byte 0 or 1, got %d", col.Name, rec[0])
		}
		text = strconv.AppendBool(d.text[:0], rec[0] == 1)
	case types.TinyInt:
		text = strconv.AppendInt(d.text[:0], int64(int8(rec[0])), 10)
	case types.SmallInt:
		text = strconv.AppendInt(d.text[:0], int64(int16(o.Uint16(rec))), 10)
	case types.Int:
		text = strconv.AppendInt(d.text[:0], int64(int32(o.Uint32(rec))), 10)
	case types.BigInt:
		text = strconv.AppendInt(d.text[:0], int64(o.Uint64(rec)), 10)
	case types.Float:
		text = strconv.AppendFloat(d.text[:0], float64(math.Float32frombits(o.Uint32(rec))), 'g', -1, 32)
	case types.Double:
		text = strconv.AppendFloat(d.text[:0], math.Float64frombits(o.Uint64(rec)), 'g', -1, 64)
	}
	if width(k) > 0 {
		d.text = text
	}
	if err := col.Parse(text); err != nil {
		return err
	}
	d.rows.Commit()
	return nil
}

// Encoder writes raw records.
type Encoder struct {
	c config
}

// NewEncoder checks the options of s and returns an encoder.
func NewEncoder(s format.Spec) (*Encoder, error) {
	c, err := parse(s)
	if err != nil {
		return nil, err
	}
	return &Encoder{c: c}, nil
}

// IsNull reports whether the value row i of rec holds is NULL (a Kafka
// sink then writes a message without a value).
func IsNull(rec arrow.RecordBatch, i int) bool {
	return rec.NumCols() == 1 && rec.Column(0).IsNull(i)
}

// AppendRow appends the bytes of the value in row i of rec, and a newline.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	return append(e.Append(dst, rec, i), '\n')
}

// Append appends the bytes of the value in row i of rec (nothing for NULL).
func (e *Encoder) Append(dst []byte, rec arrow.RecordBatch, i int) []byte {
	col := rec.Column(0)
	if col.IsNull(i) {
		return dst
	}
	o := e.c.order
	switch a := col.(type) {
	case *array.String:
		return append(dst, a.Value(i)...)
	case *array.Binary:
		return append(dst, a.Value(i)...)
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Int8:
		return append(dst, byte(a.Value(i)))
	case *array.Int16:
		return o.AppendUint16(dst, uint16(a.Value(i)))
	case *array.Int32:
		return o.AppendUint32(dst, uint32(a.Value(i)))
	case *array.Int64:
		return o.AppendUint64(dst, uint64(a.Value(i)))
	case *array.Float32:
		return o.AppendUint32(dst, math.Float32bits(a.Value(i)))
	case *array.Float64:
		return o.AppendUint64(dst, math.Float64bits(a.Value(i)))
	}
	panic(fmt.Sprintf("raw: cannot encode %T", col))
}
