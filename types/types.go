package types

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the family of a logical type.
type Kind uint8

// The kinds, in the order of Flink's implicit widening for the numeric ones.
const (
	Null Kind = iota
	Boolean
	TinyInt
	SmallInt
	Int
	BigInt
	Decimal
	Float
	Double
	String
	Bytes
	Date
	Time
	Timestamp
	IntervalDayTime
	IntervalYearMonth
	// Row is a structured type, Flink's ROW<name TYPE, ...>: T.Fields are
	// its fields in order.
	Row
)

// T is a logical SQL type. The zero value is the NULL type.
type T struct {
	Kind Kind
	// Precision is the precision of DECIMAL (1..38) and the fractional-second
	// precision of TIMESTAMP and TIME (0..9). Zero otherwise.
	Precision int
	// Scale is the scale of DECIMAL. Zero otherwise.
	Scale int
	// NotNull is set for columns declared NOT NULL and for expressions that
	// cannot produce NULL. Types compare equal regardless of it (see Equal).
	NotNull bool
	// Fields are the fields of a ROW, in order; nil otherwise. A field's
	// NotNull says the field is never NULL in a row that is not NULL.
	Fields []Column `json:",omitempty"`
}

// Common types.
var (
	NullType     = T{Kind: Null}
	BooleanType  = T{Kind: Boolean}
	TinyIntType  = T{Kind: TinyInt}
	SmallIntType = T{Kind: SmallInt}
	IntType      = T{Kind: Int}
	BigIntType   = T{Kind: BigInt}
	FloatType    = T{Kind: Float}
	DoubleType   = T{Kind: Double}
	StringType   = T{Kind: String}
	BytesType    = T{Kind: Bytes}
	DateType     = T{Kind: Date}
	TimeType     = T{Kind: Time}
	// TimestampType is TIMESTAMP(6), Flink's default precision.
	TimestampType         = T{Kind: Timestamp, Precision: 6}
	IntervalDayTimeType   = T{Kind: IntervalDayTime}
	IntervalYearMonthType = T{Kind: IntervalYearMonth}
)

// DecimalOf returns DECIMAL(p, s).
func DecimalOf(p, s int) T { return T{Kind: Decimal, Precision: p, Scale: s} }

// TimestampOf returns TIMESTAMP(p).
func TimestampOf(p int) T { return T{Kind: Timestamp, Precision: p} }

// RowOf returns ROW<fields...>.
func RowOf(fields ...Column) T { return T{Kind: Row, Fields: fields} }

// Equal reports whether a and b are the same type, ignoring nullability.
// Two ROW types are equal when their fields have the same names (without
// regard to case) and equal types, the fields' nullability included.
func (t T) Equal(o T) bool {
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale || len(t.Fields) != len(o.Fields) {
		return false
	}
	for i, f := range t.Fields {
		g := o.Fields[i]
		if !strings.EqualFold(f.Name, g.Name) || !f.Type.Equal(g.Type) || f.Type.NotNull != g.Type.NotNull {
			return false
		}
	}
	return true
}

// FieldIndex returns the position of the ROW field named name (matched without
// regard to case, as columns are), or -1.
func (t T) FieldIndex(name string) int {
	if t.Kind != Row {
		return -1
	}
	return Schema(t.Fields).Index(name)
}

// Nullable returns t with NotNull cleared.
func (t T) Nullable() T { t.NotNull = false; return t }

// IsInteger reports whether t is TINYINT, SMALLINT, INT or BIGINT.
func (t T) IsInteger() bool { return t.Kind >= TinyInt && t.Kind <= BigInt }

// IsNumeric reports whether t is an integer, DECIMAL, FLOAT or DOUBLE.
func (t T) IsNumeric() bool { return t.Kind >= TinyInt && t.Kind <= Double }

// IsApproximate reports whether t is FLOAT or DOUBLE.
func (t T) IsApproximate() bool { return t.Kind == Float || t.Kind == Double }

// IsTemporal reports whether t is DATE, TIME or TIMESTAMP.
func (t T) IsTemporal() bool { return t.Kind >= Date && t.Kind <= Timestamp }

// IsInterval reports whether t is one of the interval types.
func (t T) IsInterval() bool { return t.Kind == IntervalDayTime || t.Kind == IntervalYearMonth }

// String returns the type as Flink prints it: BIGINT, DECIMAL(10, 2),
// TIMESTAMP(3), STRING (Flink's name for VARCHAR of unbounded length),
// followed by NOT NULL when set.
func (t T) String() string {
	var s string
	switch t.Kind {
	case Null:
		s = "NULL"
	case Boolean:
		s = "BOOLEAN"
	case TinyInt:
		s = "TINYINT"
	case SmallInt:
		s = "SMALLINT"
	case Int:
		s = "INT"
	case BigInt:
		s = "BIGINT"
	case Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Float:
		s = "FLOAT"
	case Double:
		s = "DOUBLE"
	case String:
		s = "STRING"
	case Bytes:
		s = "BYTES"
	case Date:
		s = "DATE"
	case Time:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case Timestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case IntervalDayTime:
		s = "INTERVAL DAY TO SECOND"
	case IntervalYearMonth:
		s = "INTERVAL YEAR TO MONTH"
	case Row:
		s = Schema(t.Fields).String()
	default:
		s = fmt.Sprintf("Kind(%d)", t.Kind)
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

// ArrowType returns the Arrow data type that holds values of t in a batch.
func (t T) ArrowType() arrow.DataType {
	switch t.Kind {
	case Null:
		return arrow.Null
	case Boolean:
		return arrow.FixedWidthTypes.Boolean
	case TinyInt:
		return arrow.PrimitiveTypes.Int8
	case SmallInt:
		return arrow.PrimitiveTypes.Int16
	case Int:
		return arrow.PrimitiveTypes.Int32
	case BigInt:
		return arrow.PrimitiveTypes.Int64
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Float:
		return arrow.PrimitiveTypes.Float32
	case Double:
		return arrow.PrimitiveTypes.Float64
	case String:
		return arrow.BinaryTypes.String
	case Bytes:
		return arrow.BinaryTypes.Binary
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Time:
		return arrow.FixedWidthTypes.Time32ms
	case Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case IntervalDayTime, IntervalYearMonth:
		return arrow.PrimitiveTypes.Int64
	case Row:
		fs := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = f.Type.Field(f.Name)
		}
		return arrow.StructOf(fs...)
	}
	panic(fmt.Sprintf("types: no arrow type for %v", t))
}

// Field returns an Arrow field named name holding t. The logical type is
// kept in the field's metadata so that a schema round-trips (an Arrow
// Int64 may be BIGINT or an interval).
func (t T) Field(name string) arrow.Field {
	return arrow.Field{
		Name:     name,
		Type:     t.ArrowType(),
		Nullable: !t.NotNull,
		Metadata: arrow.NewMetadata([]string{metaKey}, []string{t.String()}),
	}
}

const metaKey = "streamsql.type"

// FromField recovers the logical type of a field made by T.Field.
func FromField(f arrow.Field) (T, error) {
	if s, ok := f.Metadata.GetValue(metaKey); ok {
		return Parse(s)
	}
	return T{}, fmt.Errorf("types: field %q carries no logical type", f.Name)
}

// Parse parses a type name as String prints it, and the synonyms a user may
// write in DDL: INTEGER, VARCHAR[(n)], CHAR[(n)], TEXT, BINARY, VARBINARY,
// BLOB, BOOL, REAL, DEC, NUMERIC, DATETIME. A ROW is read as String prints
// it, ROW<`name` TYPE, ...> (names in backticks or bare).
func Parse(s string) (T, error) {
	if t, ok, err := parseRow(s); ok {
		return t, err
	}
	u := strings.ToUpper(strings.TrimSpace(s))
	var t T
	if rest, ok := strings.CutSuffix(u, " NOT NULL"); ok {
		t.NotNull = true
		u = strings.TrimSpace(rest)
	}
	name, args := u, ""
	if i := strings.IndexByte(u, '('); i >= 0 && strings.HasSuffix(u, ")") {
		name, args = strings.TrimSpace(u[:i]), u[i+1:len(u)-1]
	}
	var nums []int
	if args != "" {
		for _, a := range strings.Split(args, ",") {
			var n int
			if _, err := fmt.Sscanf(strings.TrimSpace(a), "%d", &n); err != nil {
				return T{}, fmt.Errorf("bad type %q", s)
			}
			nums = append(nums, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(nums) {
			return nums[i]
		}
		return def
	}
	switch name {
	case "NULL":
		t.Kind = Null
	case "BOOLEAN", "BOOL":
		t.Kind = Boolean
	case "TINYINT":
		t.Kind = TinyInt
	case "SMALLINT":
		t.Kind = SmallInt
	case "INT", "INTEGER", "MEDIUMINT":
		t.Kind = Int
	case "BIGINT":
		t.Kind = BigInt
	case "FLOAT", "REAL":
		t.Kind = Float
	case "DOUBLE", "DOUBLE PRECISION":
		t.Kind = Double
	case "DECIMAL", "DEC", "NUMERIC":
		t.Kind, t.Precision, t.Scale = Decimal, arg(0, 10), arg(1, 0)
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return T{}, fmt.Errorf("bad type %q: DECIMAL precision must be 1..38 and scale 0..precision", s)
		}
	case "STRING", "VARCHAR", "CHAR", "TEXT", "CHARACTER VARYING":
		t.Kind = String
		if err := checkLength(s, name, nums); err != nil {
			return T{}, err
		}
	case "BYTES", "BINARY", "VARBINARY", "BLOB":
		t.Kind = Bytes
		if err := checkLength(s, name, nums); err != nil {
			return T{}, err
		}
	case "DATE":
		t.Kind = Date
	case "TIME":
		t.Kind, t.Precision = Time, arg(0, 0)
	case "TIMESTAMP", "DATETIME":
		t.Kind, t.Precision = Timestamp, arg(0, 6)
		if t.Precision < 0 || t.Precision > 9 {
			return T{}, fmt.Errorf("bad type %q: TIMESTAMP precision must be 0..9", s)
		}
	case "INTERVAL DAY TO SECOND":
		t.Kind = IntervalDayTime
	case "INTERVAL YEAR TO MONTH":
		t.Kind = IntervalYearMonth
	default:
		return T{}, fmt.Errorf("unknown type %q", s)
	}
	return t, nil
}

// MaxLength is the largest length of VARCHAR(n), CHAR(n), BINARY(n) and
// VARBINARY(n), as in Flink.
const MaxLength = 1<<31 - 1

// checkLength checks the length of a string or binary type as written (s,
// its upper-case name and arguments): one, between 1 and MaxLength as
// Flink's; the length itself is not kept (the type is STRING or BYTES).
func checkLength(s, name string, args []int) error {
	switch {
	case len(args) == 0:
		return nil
	case name == "STRING" || name == "TEXT" || name == "BYTES" || name == "BLOB":
		return fmt.Errorf("bad type %q: %s takes no length", s, name)
	case len(args) > 1 || args[0] < 1 || args[0] > MaxLength:
		return fmt.Errorf("bad type %q: the length of %s must be between 1 and %d", s, name, MaxLength)
	}
	return nil
}

// parseRow parses ROW<field TYPE, ...> [NOT NULL]; ok is false when s is
// not a ROW.
func parseRow(s string) (t T, ok bool, err error) {
	u := strings.TrimSpace(s)
	if len(u) < 4 || !strings.EqualFold(u[:3], "ROW") || (u[3] != '<' && u[3] != '(') {
		return T{}, false, nil
	}
	closer := byte('>')
	if u[3] == '(' {
		closer = ')'
	}
	depth, end := 0, -1
	for i := 3; i < len(u) && end < 0; i++ {
		switch u[i] {
		case '<', '(':
			depth++
		case '>', ')':
			if depth--; depth == 0 {
				if u[i] != closer {
					return T{}, true, fmt.Errorf("bad type %q", s)
				}
				end = i
			}
		case '`':
			j := strings.IndexByte(u[i+1:], '`')
			if j < 0 {
				return T{}, true, fmt.Errorf("bad type %q", s)
			}
			i += j + 1
		}
	}
	if end < 0 {
		return T{}, true, fmt.Errorf("bad type %q", s)
	}
	t = T{Kind: Row}
	switch rest := strings.ToUpper(strings.TrimSpace(u[end+1:])); rest {
	case "":
	case "NOT NULL":
		t.NotNull = true
	default:
		return T{}, true, fmt.Errorf("bad type %q", s)
	}
	for _, f := range splitTop(u[4:end]) {
		f = strings.TrimSpace(f)
		var name, typ string
		if strings.HasPrefix(f, "`") {
			j := strings.IndexByte(f[1:], '`')
			name, typ = f[1:j+1], f[j+2:]
		} else {
			name, typ, _ = strings.Cut(f, " ")
		}
		ft, err := Parse(typ)
		if err != nil || name == "" {
			return T{}, true, fmt.Errorf("bad type %q", s)
		}
		t.Fields = append(t.Fields, Column{Name: name, Type: ft})
	}
	if len(t.Fields) == 0 {
		return T{}, true, fmt.Errorf("bad type %q: a ROW needs at least one field", s)
	}
	return t, true, nil
}

// splitTop splits s at the commas outside brackets and backticks.
func splitTop(s string) []string {
	var out []string
	depth, from, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	if strings.TrimSpace(s[from:]) != "" || len(out) > 0 {
		out = append(out, s[from:])
	}
	return out
}
