package functions

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// Allocation-free appenders that print values exactly as types.Format does
// (Flink's CAST(x AS STRING)).

// appendJavaFloat prints f as Java's Double.toString (bitSize 64) or
// Float.toString (32) does for the common cases.
func appendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	a := math.Abs(f)
	start := len(dst)
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		dst = strconv.AppendFloat(dst, f, 'E', -1, bitSize)
		// mantissa needs a '.', exponent has no '+'
		e := start
		for dst[e] != 'E' {
			e++
		}
		hasDot := false
		for _, c := range dst[start:e] {
			if c == '.' {
				hasDot = true
			}
		}
		var tmp [8]byte
		exp := append(tmp[:0], dst[e+1:]...)
		dst = dst[:e]
		if !hasDot {
			dst = append(dst, ".0"...)
		}
		dst = append(dst, 'E')
		if exp[0] == '+' {
			exp = exp[1:]
		}
		// strip leading zeros of the exponent
		neg := exp[0] == '-'
		if neg {
			dst = append(dst, '-')
			exp = exp[1:]
		}
		for len(exp) > 1 && exp[0] == '0' {
			exp = exp[1:]
		}
		return append(dst, exp...)
	}
	dst = strconv.AppendFloat(dst, f, 'f', -1, bitSize)
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// appendDecimal prints an unscaled value with scale digits after the point.
func appendDecimal(dst []byte, n decimal128.Num, scale int) []byte {
	v, ok := i64(n)
	if !ok || v == math.MinInt64 {
		return append(dst, types.FormatDecimal(n, scale)...)
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var tmp [24]byte
	digits := strconv.AppendInt(tmp[:0], v, 10)
	if scale <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

func append2(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/10%10), byte('0'+v%10))
}

func appendPadded(dst []byte, v int64, width int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(d); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// appendDate prints days since the epoch as yyyy-MM-dd.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civil(days)
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// appendTimeOfDay prints micros within a day as HH:mm:ss with prec
// fractional digits (at most 6).
func appendTimeOfDay(dst []byte, us int64, prec int) []byte {
	dst = append2(dst, us/usPerHour)
	dst = append(dst, ':')
	dst = append2(dst, us/usPerMin%60)
	dst = append(dst, ':')
	dst = append2(dst, us/usPerSec%60)
	if prec > 0 {
		prec = min(prec, 6)
		frac := us % usPerSec
		dst = append(dst, '.')
		div := int64(100000)
		for range prec {
			dst = append(dst, byte('0'+frac/div%10))
			div /= 10
		}
	}
	return dst
}

// appendTimestamp prints micros since the epoch as types.FormatTimestamp.
func appendTimestamp(dst []byte, us int64, prec int) []byte {
	days, tod := splitMicros(us)
	dst = appendDate(dst, days)
	dst = append(dst, ' ')
	return appendTimeOfDay(dst, tod, prec)
}

// appendTime prints millis since midnight as types.FormatTime.
func appendTime(dst []byte, ms int64, prec int) []byte {
	return appendTimeOfDay(dst, ms*1000, min(prec, 3))
}
