package functions

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// Allocation-free parsers for CAST from STRING (on success).

func trimSpace(s string) string { return strings.TrimSpace(s) }

func parseInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(trimSpace(s), 10, 64)
	return v, err == nil
}

func parseFloat(s string, bitSize int) (float64, bool) {
	t := trimSpace(s)
	switch t {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if len(t) > 0 && (t[0] == 'i' || t[0] == 'I' || t[0] == 'n' || t[0] == 'N' || ((t[0] == '-' || t[0] == '+') && len(t) > 1 && (t[1] == 'i' || t[1] == 'I'))) {
		return 0, false // Go would accept "inf", "nan"; Java does not
	}
	v, err := strconv.ParseFloat(t, bitSize)
	if err != nil {
		return 0, false
	}
	return v, true
}

// parseBool accepts what Flink does: true/false, t/f, yes/no, y/n, 1/0,
// case-insensitively.
func parseBool(s string) (bool, bool) {
	t := trimSpace(s)
	if len(t) > 5 {
		return false, false
	}
	var buf [5]byte
	for i := range len(t) {
		c := t[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(t)]) {
	case "true", "t", "yes", "y", "1":
		return true, true
	case "false", "f", "no", "n", "0":
		return false, true
	}
	return false, false
}

// parseDecimal parses s (digits with optional sign, point and exponent)
// into an unscaled value of the given scale, rounding half up; ok is false
// when s is not a number or does not fit precision.
func parseDecimal(s string, precision, scale int) (decimal128.Num, bool) {
	t := trimSpace(s)
	i := 0
	neg := false
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	var mant int64
	digits, fracDigits := 0, 0
	seenDot, any := false, false
	for ; i < len(t); i++ {
		c := t[i]
		if c == '.' {
			if seenDot {
				return decimal128.Num{}, false
			}
			seenDot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		any = true
		if mant == 0 && c == '0' {
			if seenDot {
				fracDigits++
			}
			continue
		}
		if digits >= 18 {
			return slowDecimal(t, precision, scale)
		}
		mant = mant*10 + int64(c-'0')
		digits++
		if seenDot {
			fracDigits++
		}
	}
	if !any {
		return decimal128.Num{}, false
	}
	exp := 0
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return decimal128.Num{}, false
		}
		exp = e
		i = len(t)
	}
	if i != len(t) {
		return decimal128.Num{}, false
	}
	// value = mant * 10^(exp - fracDigits); want mant * 10^(exp-fracDigits+scale)
	shift := exp - fracDigits + scale
	var v int64
	switch {
	case shift >= 0:
		var ok bool
		if v, ok = mulPow10(mant, shift); !ok {
			return slowDecimal(t, precision, scale)
		}
	case -shift >= 19:
		v = 0
	default:
		v = divRoundHalfUp(mant, pow10i64[-shift])
	}
	if neg {
		v = -v
	}
	n := decimal128.FromI64(v)
	if !fitsPrecision(n, precision) {
		return decimal128.Num{}, false
	}
	return n, true
}

func slowDecimal(t string, precision, scale int) (decimal128.Num, bool) {
	n, err := types.ParseDecimal(t, precision, scale)
	return n, err == nil
}

// atoiN parses s[i:] digits (at least min, at most max), returning the
// value and the index after them.
func atoiN(s string, i, lo, hi int) (int64, int, bool) {
	v, j := int64(0), i
	for j < len(s) && j-i < hi && s[j] >= '0' && s[j] <= '9' {
		v = v*10 + int64(s[j]-'0')
		j++
	}
	return v, j, j-i >= lo
}

// parseDateAt parses yyyy-M-d at s[i:], returning days and the next index.
func parseDateAt(s string, i int) (int64, int, bool) {
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	y, i, ok := atoiN(s, i, 1, 9)
	if !ok || i >= len(s) || s[i] != '-' {
		return 0, 0, false
	}
	if neg {
		y = -y
	}
	m, i, ok := atoiN(s, i+1, 1, 2)
	if !ok || i >= len(s) || s[i] != '-' {
		return 0, 0, false
	}
	d, i, ok := atoiN(s, i+1, 1, 2)
	if !ok || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) || y < minYear || y > maxYear {
		return 0, 0, false
	}
	return daysFromCivil(y, m, d), i, true
}

// parseTimeAt parses H:m[:s[.fffffffff]] at s[i:], returning micros of day.
func parseTimeAt(s string, i int) (int64, int, bool) {
	h, i, ok := atoiN(s, i, 1, 2)
	if !ok || i >= len(s) || s[i] != ':' {
		return 0, 0, false
	}
	m, i, ok := atoiN(s, i+1, 1, 2)
	if !ok {
		return 0, 0, false
	}
	var sec, frac int64
	if i < len(s) && s[i] == ':' {
		sec, i, ok = atoiN(s, i+1, 1, 2)
		if !ok {
			return 0, 0, false
		}
		if i < len(s) && s[i] == '.' {
			j := i + 1
			var f int64
			digits := 0
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				if digits < 6 {
					f = f*10 + int64(s[j]-'0')
				}
				digits++
				j++
			}
			if digits == 0 || digits > 9 {
				return 0, 0, false
			}
			for d := min(digits, 6); d < 6; d++ {
				f *= 10
			}
			frac, i = f, j
		}
	}
	if h > 23 || m > 59 || sec > 59 {
		return 0, 0, false
	}
	return h*usPerHour + m*usPerMin + sec*usPerSec + frac, i, true
}

func parseDate(s string) (int64, bool) {
	t := trimSpace(s)
	d, i, ok := parseDateAt(t, 0)
	return d, ok && i == len(t)
}

// parseTime returns micros of the day.
func parseTime(s string) (int64, bool) {
	t := trimSpace(s)
	us, i, ok := parseTimeAt(t, 0)
	return us, ok && i == len(t)
}

// parseTimestamp parses 'yyyy-MM-dd[( |T)HH:mm[:ss[.f...]]]' into micros.
func parseTimestamp(s string) (int64, bool) {
	t := trimSpace(s)
	d, i, ok := parseDateAt(t, 0)
	if !ok {
		return 0, false
	}
	if i == len(t) {
		return d * usPerDay, true
	}
	if t[i] != ' ' && t[i] != 'T' {
		return 0, false
	}
	tod, j, ok := parseTimeAt(t, i+1)
	if !ok || j != len(t) {
		return 0, false
	}
	return d*usPerDay + tod, true
}

// truncMicros drops digits beyond TIMESTAMP(p) precision.
func truncMicros(us int64, p int) int64 {
	if p >= 6 {
		return us
	}
	f := pow10i64[6-p]
	return floorDiv(us, f) * f
}
