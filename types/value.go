package types

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Value is one scalar in its physical representation (see the package
// comment). nil is NULL.
type Value = any

// ValueAt returns the value at row i of arr, which must hold values of t.
// It allocates for strings and bytes; it is for the control plane (printing,
// constant folding, tests), never for a per-row hot path.
func ValueAt(arr arrow.Array, i int) Value {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	case *array.Date32:
		return int32(a.Value(i))
	case *array.Time32:
		return int32(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Null:
		return nil
	case *array.Struct:
		row := make([]Value, a.NumField())
		for f := range row {
			row[f] = ValueAt(a.Field(f), i)
		}
		return row
	}
	panic(fmt.Sprintf("types: ValueAt on %T", arr))
}

// AppendValue appends v, a value of type t, to b, a builder for t.ArrowType().
func AppendValue(b array.Builder, v Value) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(int8(v.(int64)))
	case *array.Int16Builder:
		b.Append(int16(v.(int64)))
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.Time32Builder:
		b.Append(arrow.Time32(v.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.NullBuilder:
		b.AppendNull()
	case *array.StructBuilder:
		row := v.([]Value)
		b.Append(true)
		for f, x := range row {
			AppendValue(b.FieldBuilder(f), x)
		}
	default:
		panic(fmt.Sprintf("types: AppendValue on %T", b))
	}
}

// Format prints v, a value of type t, as Flink's CAST(v AS STRING) does.
// NULL prints as "NULL".
func Format(t T, v Value) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case Boolean:
		if v.(bool) {
			return "TRUE"
		}
		return "FALSE"
	case TinyInt, SmallInt, Int, BigInt:
		return strconv.FormatInt(v.(int64), 10)
	case Float, Double:
		return FormatFloat(v.(float64))
	case Decimal:
		return FormatDecimal(v.(decimal128.Num), t.Scale)
	case String:
		return v.(string)
	case Bytes:
		return "x'" + hex.EncodeToString(v.([]byte)) + "'"
	case Date:
		return FormatDate(v.(int32))
	case Time:
		return FormatTime(v.(int32), t.Precision)
	case Timestamp:
		return FormatTimestamp(v.(int64), t.Precision)
	case IntervalDayTime:
		return formatDayTime(v.(int64))
	case IntervalYearMonth:
		m := v.(int64)
		sign := "+"
		if m < 0 {
			sign, m = "-", -m
		}
		return fmt.Sprintf("%s%d-%02d", sign, m/12, m%12)
	case Row:
		// Flink's CAST(row AS STRING): (v1, v2), each field as it casts.
		row := v.([]Value)
		var sb strings.Builder
		sb.WriteByte('(')
		for i, f := range t.Fields {
			if i > 0 {
				sb.WriteString(", ")
			}
			var x Value
			if i < len(row) {
				x = row[i]
			}
			sb.WriteString(Format(f.Type, x))
		}
		sb.WriteByte(')')
		return sb.String()
	}
	return fmt.Sprint(v)
}

// FormatFloat prints a DOUBLE as Java's Double.toString does for the
// common cases: integral values keep ".0", large and tiny ones use E notation.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		// Java's exponent has no '+' and no leading zeros: 1.0E7, 1.0E-5.
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(exp, "+-0")
		if neg {
			exp = "-" + exp
		}
		return mant + "E" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// FormatDecimal prints n with scale digits after the point.
func FormatDecimal(n decimal128.Num, scale int) string {
	s := n.BigInt().String()
	if scale <= 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// ParseDecimal parses a decimal literal into a Num of the given scale,
// rounding half up. It fails when the value needs more than precision digits.
func ParseDecimal(s string, precision, scale int) (decimal128.Num, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return decimal128.Num{}, fmt.Errorf("invalid decimal %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q := roundHalfUp(r)
	if len(strings.TrimPrefix(q.String(), "-")) > precision {
		return decimal128.Num{}, fmt.Errorf("decimal %q does not fit DECIMAL(%d, %d)", s, precision, scale)
	}
	return decimal128.FromBigInt(q), nil
}

func roundHalfUp(r *big.Rat) *big.Int {
	num, den := new(big.Int).Set(r.Num()), r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	num.Mul(num, big.NewInt(2))
	num.Add(num, den)
	den2 := new(big.Int).Mul(den, big.NewInt(2))
	q := num.Quo(num, den2)
	if neg {
		q.Neg(q)
	}
	return q
}

var epoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// FormatDate prints days since the epoch as yyyy-MM-dd.
func FormatDate(days int32) string {
	return epoch.AddDate(0, 0, int(days)).Format("2006-01-02")
}

// FormatTime prints milliseconds since midnight as HH:mm:ss[.fff].
func FormatTime(ms int32, precision int) string {
	t := epoch.Add(time.Duration(ms) * time.Millisecond)
	s := t.Format("15:04:05")
	if precision > 0 {
		p := min(precision, 3)
		frac := fmt.Sprintf("%03d", ms%1000)
		s += "." + frac[:p]
	}
	return s
}

// FormatTimestamp prints microseconds since the epoch as
// yyyy-MM-dd HH:mm:ss[.fraction] with precision fractional digits (at most 6).
func FormatTimestamp(us int64, precision int) string {
	t := time.UnixMicro(us).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if precision > 0 {
		p := min(precision, 6)
		frac := fmt.Sprintf("%06d", t.Nanosecond()/1000)
		s += "." + frac[:p]
	}
	return s
}

// TimestampFromTime converts t to the Timestamp representation.
func TimestampFromTime(t time.Time) int64 { return t.UnixMicro() }

// DateFromTime converts t to the Date representation.
func DateFromTime(t time.Time) int32 {
	y, m, d := t.Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Sub(epoch).Hours() / 24)
}

func formatDayTime(ms int64) string {
	sign := "+"
	if ms < 0 {
		sign, ms = "-", -ms
	}
	d := ms / 86400000
	ms %= 86400000
	return fmt.Sprintf("%s%d %02d:%02d:%02d.%03d", sign, d, ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
