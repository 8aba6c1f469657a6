package textparse

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// str views b as a string without copying; the string must not outlive b.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Error says why a text is not a value of a type.
type Error struct {
	Text string
	Type types.T
	Why  string // optional detail
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cannot parse '%s' as %s", e.Text, e.Type)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

func fail(b []byte, t types.T, why string) error {
	return &Error{Text: string(b), Type: t, Why: why}
}

// Bool parses a BOOLEAN.
func Bool(b []byte) (bool, bool) {
	switch {
	case strings.EqualFold(str(b), "true") || str(b) == "1":
		return true, true
	case strings.EqualFold(str(b), "false") || str(b) == "0":
		return false, true
	}
	return false, false
}

// Int parses an integer of the given bit size.
func Int(b []byte, bitSize int) (int64, error) {
	n, err := strconv.ParseInt(str(b), 10, bitSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errors.New("out of range")
		}
		return 0, errors.New("not an integer")
	}
	return n, nil
}

// Float parses a DOUBLE (or FLOAT with bitSize 32).
func Float(b []byte, bitSize int) (float64, error) {
	switch str(b) {
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(str(b), bitSize)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errors.New("out of range")
		}
		return 0, errors.New("not a number")
	}
	return f, nil
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return
}()

// Decimal parses a DECIMAL(precision, scale), rounding half up.
func Decimal(b []byte, precision, scale int) (decimal128.Num, error) {
	if v, ok, err := decimalFast(b, precision, scale); ok {
		return decimal128.FromI64(v), err
	}
	n, err := types.ParseDecimal(string(b), precision, scale)
	if err != nil {
		if strings.HasPrefix(err.Error(), "invalid") {
			return n, errors.New("not a number")
		}
		return n, fmt.Errorf("does not fit DECIMAL(%d, %d)", precision, scale)
	}
	return n, nil
}

// decimalFast handles [+-]digits[.digits] whose unscaled value fits in
// 18 digits; ok is false for anything else.
func decimalFast(b []byte, precision, scale int) (v int64, ok bool, err error) {
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart, frac := s[:i], s[i:]
	if len(frac) > 0 {
		if frac[0] != '.' {
			return 0, false, nil
		}
		frac = frac[1:]
		for _, c := range frac {
			if c < '0' || c > '9' {
				return 0, false, nil
			}
		}
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return 0, false, nil
	}
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) > precision-scale {
		return 0, true, fmt.Errorf("does not fit DECIMAL(%d, %d)", precision, scale)
	}
	if len(intPart)+scale > 18 {
		return 0, false, nil
	}
	for _, c := range intPart {
		v = v*10 + int64(c-'0')
	}
	for k := 0; k < scale; k++ {
		d := int64(0)
		if k < len(frac) {
			d = int64(frac[k] - '0')
		}
		v = v*10 + d
	}
	if len(frac) > scale && frac[scale] >= '5' {
		v++
	}
	if v >= pow10[min(precision, 18)] {
		return 0, true, fmt.Errorf("does not fit DECIMAL(%d, %d)", precision, scale)
	}
	if neg {
		v = -v
	}
	return v, true, nil
}

func digits(b []byte, n int) (int, bool) {
	if len(b) < n {
		return 0, false
	}
	v := 0
	for _, c := range b[:n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// daysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

var monthDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func date(b []byte) (int64, bool) {
	// yyyy-M?M-d?d
	y, ok := digits(b, 4)
	if !ok || len(b) < 8 || b[4] != '-' {
		return 0, false
	}
	rest := b[5:]
	m, n := 0, 0
	for n < len(rest) && n < 2 && rest[n] >= '0' && rest[n] <= '9' {
		m = m*10 + int(rest[n]-'0')
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != '-' {
		return 0, false
	}
	rest = rest[n+1:]
	d, k := 0, 0
	for k < len(rest) && k < 2 && rest[k] >= '0' && rest[k] <= '9' {
		d = d*10 + int(rest[k]-'0')
		k++
	}
	if k == 0 || k != len(rest) || m < 1 || m > 12 || d < 1 || d > monthDays[m] {
		return 0, false
	}
	if m == 2 && d == 29 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// Date parses a DATE into days since the epoch.
func Date(b []byte) (int32, bool) {
	d, ok := date(b)
	return int32(d), ok
}

// timeOfDay parses HH:mm[:ss[.f...]] into nanoseconds since midnight.
func timeOfDay(b []byte) (int64, bool) {
	h, ok1 := digits(b, 2)
	if !ok1 || len(b) < 5 || b[2] != ':' {
		return 0, false
	}
	mi, ok2 := digits(b[3:], 2)
	if !ok2 || h > 23 || mi > 59 {
		return 0, false
	}
	ns := int64(h)*3600e9 + int64(mi)*60e9
	rest := b[5:]
	if len(rest) == 0 {
		return ns, true
	}
	if rest[0] != ':' {
		return 0, false
	}
	s, ok3 := digits(rest[1:], 2)
	if !ok3 || s > 59 || len(rest) < 3 {
		return 0, false
	}
	ns += int64(s) * 1e9
	rest = rest[3:]
	if len(rest) == 0 {
		return ns, true
	}
	if rest[0] != '.' || len(rest) == 1 || len(rest) > 10 {
		return 0, false
	}
	f, ok4 := digits(rest[1:], len(rest)-1)
	if !ok4 {
		return 0, false
	}
	for i := len(rest) - 1; i < 9; i++ {
		f *= 10
	}
	return ns + int64(f), true
}

// Time parses a TIME into milliseconds since midnight.
func Time(b []byte) (int32, bool) {
	ns, ok := timeOfDay(b)
	return int32(ns / 1e6), ok
}

// Timestamp parses a TIMESTAMP into microseconds since the epoch, cut to
// precision fractional digits.
func Timestamp(b []byte, precision int) (int64, bool) {
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != 'T' {
		i++
	}
	d, ok := date(b[:i])
	if !ok {
		return 0, false
	}
	us := d * 86400e6
	if i < len(b) {
		rest := b[i+1:]
		var zone int64 // the offset from UTC, in microseconds
		if len(rest) > 0 && rest[len(rest)-1] == 'Z' {
			rest = rest[:len(rest)-1]
		} else if k := zoneStart(rest); k > 0 {
			// An ISO offset: +hh:mm, +hhmm or +hh. The value is taken in UTC,
			// as with Z.
			z, ok := zoneOffset(rest[k:])
			if !ok {
				return 0, false
			}
			zone = z
			rest = rest[:k]
		}
		ns, ok := timeOfDay(rest)
		if !ok {
			return 0, false
		}
		us += ns/1000 - zone
	}
	if precision < 6 {
		m := pow10[6-precision]
		us -= ((us % m) + m) % m
	}
	return us, true
}

// zoneStart returns the index of the '+' or '-' that starts a zone offset
// at the end of a time of day, or -1.
func zoneStart(b []byte) int {
	for k := len(b) - 1; k > 0; k-- {
		if b[k] == '+' || b[k] == '-' {
			return k
		}
	}
	return -1
}

// zoneOffset parses +hh:mm, +hhmm or +hh (or with '-') into microseconds.
func zoneOffset(b []byte) (int64, bool) {
	digit := func(c byte) (int64, bool) { return int64(c - '0'), c >= '0' && c <= '9' }
	var d [4]int64
	n := 0
	for _, c := range b[1:] {
		if c == ':' && n == 2 {
			continue
		}
		v, ok := digit(c)
		if !ok || n == 4 {
			return 0, false
		}
		d[n] = v
		n++
	}
	if n != 2 && n != 4 {
		return 0, false
	}
	us := ((d[0]*10+d[1])*60 + d[2]*10 + d[3]) * 60e6
	if b[0] == '-' {
		us = -us
	}
	return us, true
}

// Value parses b as a value of t (for tests and the control plane).
func Value(t types.T, b []byte) (types.Value, error) {
	switch t.Kind {
	case types.Null:
		return nil, nil
	case types.Boolean:
		v, ok := Bool(b)
		if !ok {
			return nil, fail(b, t, "")
		}
		return v, nil
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		v, err := Int(b, intBits(t.Kind))
		if err != nil {
			return nil, fail(b, t, err.Error())
		}
		return v, nil
	case types.Float, types.Double:
		v, err := Float(b, 64)
		if err != nil {
			return nil, fail(b, t, err.Error())
		}
		return v, nil
	case types.Decimal:
		v, err := Decimal(b, t.Precision, t.Scale)
		if err != nil {
			return nil, fail(b, t, err.Error())
		}
		return v, nil
	case types.String:
		return string(b), nil
	case types.Bytes:
		return append([]byte(nil), b...), nil
	case types.Date:
		if v, ok := Date(b); ok {
			return v, nil
		}
	case types.Time:
		if v, ok := Time(b); ok {
			return v, nil
		}
	case types.Timestamp:
		if v, ok := Timestamp(b, t.Precision); ok {
			return v, nil
		}
	case types.IntervalDayTime, types.IntervalYearMonth:
		v, err := Int(b, 64)
		if err != nil {
			return nil, fail(b, t, err.Error())
		}
		return v, nil
	}
	return nil, fail(b, t, "")
}

func intBits(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 8
	case types.SmallInt:
		return 16
	case types.Int:
		return 32
	}
	return 64
}

// Appender appends the value a text stands for to one builder.
type Appender func(b []byte) error

// NewAppender returns an Appender parsing values of t into bld, a builder
// of t.ArrowType(). On error nothing is appended.
func NewAppender(bld array.Builder, t types.T) Appender {
	switch bb := bld.(type) {
	case *array.BooleanBuilder:
		return func(b []byte) error {
			v, ok := Bool(b)
			if !ok {
				return fail(b, t, "")
			}
			bb.Append(v)
			return nil
		}
	case *array.Int8Builder:
		return func(b []byte) error {
			v, err := Int(b, 8)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(int8(v))
			return nil
		}
	case *array.Int16Builder:
		return func(b []byte) error {
			v, err := Int(b, 16)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(int16(v))
			return nil
		}
	case *array.Int32Builder:
		return func(b []byte) error {
			v, err := Int(b, 32)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(int32(v))
			return nil
		}
	case *array.Int64Builder:
		return func(b []byte) error {
			v, err := Int(b, 64)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(v)
			return nil
		}
	case *array.Float32Builder:
		return func(b []byte) error {
			v, err := Float(b, 32)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(float32(v))
			return nil
		}
	case *array.Float64Builder:
		return func(b []byte) error {
			v, err := Float(b, 64)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(v)
			return nil
		}
	case *array.Decimal128Builder:
		return func(b []byte) error {
			v, err := Decimal(b, t.Precision, t.Scale)
			if err != nil {
				return fail(b, t, err.Error())
			}
			bb.Append(v)
			return nil
		}
	case *array.StringBuilder:
		return func(b []byte) error { bb.BinaryBuilder.Append(b); return nil }
	case *array.BinaryBuilder:
		return func(b []byte) error { bb.Append(b); return nil }
	case *array.Date32Builder:
		return func(b []byte) error {
			v, ok := Date(b)
			if !ok {
				return fail(b, t, "expected yyyy-MM-dd")
			}
			bb.Append(arrow.Date32(v))
			return nil
		}
	case *array.Time32Builder:
		return func(b []byte) error {
			v, ok := Time(b)
			if !ok {
				return fail(b, t, "expected HH:mm:ss[.fff]")
			}
			bb.Append(arrow.Time32(v))
			return nil
		}
	case *array.TimestampBuilder:
		return func(b []byte) error {
			v, ok := Timestamp(b, t.Precision)
			if !ok {
				return fail(b, t, "expected yyyy-MM-dd HH:mm:ss[.fff]")
			}
			bb.Append(arrow.Timestamp(v))
			return nil
		}
	case *array.NullBuilder:
		return func([]byte) error { bb.AppendNull(); return nil }
	}
	panic(fmt.Sprintf("textparse: no appender for %T", bld))
}
