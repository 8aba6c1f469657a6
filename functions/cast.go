package functions

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Cast returns the kernel of CAST(x AS to) for x of type from, or an error
// if Flink does not allow that cast. A value that cannot be converted
// (unparsable string, out of range number) fails the kernel with an error
// naming the value.
func Cast(from, to types.T) (Kernel, error) { return castKernel(from, to, false) }

// TryCast is TRY_CAST: as Cast, but a value that cannot be converted gives
// NULL instead of an error.
func TryCast(from, to types.T) (Kernel, error) { return castKernel(from, to, true) }

// CanCast reports whether CAST(from AS to) is allowed.
func CanCast(from, to types.T) bool {
	_, err := castKernel(from, to, false)
	return err == nil
}

// setNull marks row i NULL (for TRY_CAST), creating the bitmap if needed.
func (v *validity) setNull(mem memory.Allocator, n, i int) {
	if v.buf == nil {
		v.buf = newBitmap(mem, n)
		bitutil.SetBitsTo(v.buf.Bytes(), 0, int64(n), true)
	}
	if bitutil.BitIsSet(v.buf.Bytes(), i) {
		bitutil.ClearBit(v.buf.Bytes(), i)
		v.nulls++
	}
}

func castErr(from types.T, v any, to types.T, why string) error {
	var s string
	switch x := v.(type) {
	case string:
		s = "'" + x + "'"
	case float64:
		s = types.FormatFloat(x)
	case float32:
		s = types.FormatFloat(float64(x))
	case decimal128.Num:
		s = types.FormatDecimal(x, from.Scale)
	default:
		s = fmt.Sprint(v)
	}
	if why != "" {
		return fmt.Errorf("cannot cast %s to %s: %s", s, to.Nullable(), why)
	}
	return fmt.Errorf("cannot cast %s to %s", s, to.Nullable())
}

func castKernel(from, to types.T, try bool) (Kernel, error) {
	from, to = from.Nullable(), to.Nullable()
	k, err := castBody(from, to, try)
	if err != nil {
		return nil, err
	}
	return strict(to, k), nil
}

func castBody(from, to types.T, try bool) (Kernel, error) {
	if from.Kind == types.Null {
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			return nullResult(ctx, to, args, n), nil
		}, nil
	}
	if from.Equal(to) {
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			args[0].Array.Retain()
			return Vec{Type: to, Array: args[0].Array}, nil
		}, nil
	}
	bad := func() (Kernel, error) {
		return nil, fmt.Errorf("cannot cast %s to %s", from, to)
	}
	if from.Kind == types.Row || to.Kind == types.Row {
		return castRow(from, to, try)
	}
	if to.Kind == types.String {
		return castToString(from, to)
	}
	if from.Kind == types.String {
		return castFromString(to, try)
	}
	switch to.Kind {
	case types.Boolean:
		if from.IsNumeric() {
			return numToBool(from), nil
		}
	case types.TinyInt:
		return castToInt[int8](from, to, try)
	case types.SmallInt:
		return castToInt[int16](from, to, try)
	case types.Int:
		return castToInt[int32](from, to, try)
	case types.BigInt:
		return castToInt[int64](from, to, try)
	case types.Float:
		return castToFloat[float32](from, to)
	case types.Double:
		return castToFloat[float64](from, to)
	case types.Decimal:
		return castToDecimal(from, to, try)
	case types.Date:
		if from.Kind == types.Timestamp {
			return mapFixed(to, try, func(us int64) (int32, bool) { return int32(floorDiv(us, usPerDay)), true }, nil), nil
		}
	case types.Time:
		switch from.Kind {
		case types.Timestamp:
			p := to.Precision
			return mapFixed(to, try, func(us int64) (int32, bool) {
				_, tod := splitMicros(truncMicros(us, p))
				return int32(tod / 1000), true
			}, nil), nil
		case types.Time:
			f := int32(pow10i64[3-min(to.Precision, 3)])
			return mapFixed(to, try, func(ms int32) (int32, bool) { return ms / f * f, true }, nil), nil
		}
	case types.Timestamp:
		switch from.Kind {
		case types.Date:
			return mapFixed(to, try, func(d int32) (int64, bool) { return int64(d) * usPerDay, true }, nil), nil
		case types.Timestamp:
			p := to.Precision
			return mapFixed(to, try, func(us int64) (int64, bool) { return truncMicros(us, p), true }, nil), nil
		}
	case types.Bytes:
		if from.Kind == types.String {
			return castFromString(to, try)
		}
	case types.IntervalDayTime, types.IntervalYearMonth:
		if from.Kind == to.Kind {
			return castBody(from, from, try)
		}
	}
	return bad()
}

// mapFixed converts each non-NULL row with conv; a false result fails the
// row (an error made by fail, or NULL for TRY_CAST).
func mapFixed[F, T fixed](to types.T, try bool, conv func(F) (T, bool), fail func(F) error) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		x := values[F](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			r, ok := conv(x[i])
			if !ok {
				if try {
					val.setNull(mem, n, i)
					continue
				}
				val.release()
				buf.Release()
				return Vec{}, fail(x[i])
			}
			out[i] = r
		}
		return finish(to, n, val, buf), nil
	}
}

// widen converts between numeric element types where every value fits.
func widen[F, T ordered](to types.T) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		x := values[F](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		for i := range out {
			out[i] = T(x[i])
		}
		return finish(to, n, val, buf), nil
	}
}

// narrowInt converts integers to a narrower integer type, failing on
// values out of range.
func narrowInt[F, T integer](from, to types.T, try bool) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		x := values[F](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		bad := false
		for i := range out {
			v := T(x[i])
			out[i] = v
			bad = bad || F(v) != x[i]
		}
		if bad {
			for i := range out {
				if val.valid(i) && F(out[i]) != x[i] {
					if try {
						val.setNull(mem, n, i)
						continue
					}
					val.release()
					buf.Release()
					return Vec{}, castErr(from, x[i], to, "out of range")
				}
			}
		}
		return finish(to, n, val, buf), nil
	}
}

func elemSize(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 1
	case types.SmallInt:
		return 2
	case types.Int:
		return 4
	}
	return 8
}

func castToInt[T integer](from, to types.T, try bool) (Kernel, error) {
	switch from.Kind {
	case types.TinyInt:
		return intToInt[int8, T](from, to, try), nil
	case types.SmallInt:
		return intToInt[int16, T](from, to, try), nil
	case types.Int:
		return intToInt[int32, T](from, to, try), nil
	case types.BigInt:
		return intToInt[int64, T](from, to, try), nil
	case types.Float:
		return floatToInt[float32, T](from, to, try), nil
	case types.Double:
		return floatToInt[float64, T](from, to, try), nil
	case types.Decimal:
		scale := from.Scale
		return mapFixed(to, try, func(x decimal128.Num) (T, bool) {
			v, ok := decToInt64(x, scale)
			if !ok || int64(T(v)) != v {
				return 0, false
			}
			return T(v), true
		}, func(x decimal128.Num) error { return castErr(from, x, to, "out of range") }), nil
	case types.Boolean:
		return boolToNum[T](to), nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", from, to)
}

func intToInt[F, T integer](from, to types.T, try bool) Kernel {
	if elemSize(from.Kind) <= elemSize(to.Kind) {
		return widen[F, T](to)
	}
	return narrowInt[F, T](from, to, try)
}

// floatToInt truncates toward zero; NaN, infinities and values out of
// range fail.
func floatToInt[F floating, T integer](from, to types.T, try bool) Kernel {
	lo, hi := float64(minOf[T]()), -float64(minOf[T]())
	return mapFixed(to, try, func(x F) (T, bool) {
		f := math.Trunc(float64(x))
		if !(f >= lo && f < hi) {
			return 0, false
		}
		return T(f), true
	}, func(x F) error { return castErr(from, float64(x), to, "out of range") })
}

// decToInt64 truncates an unscaled decimal toward zero.
func decToInt64(x decimal128.Num, scale int) (int64, bool) {
	if v, ok := i64(x); ok {
		if scale >= 19 {
			return 0, true
		}
		return v / pow10i64[scale], true
	}
	b := x.BigInt()
	b.Quo(b, pow10Big[scale])
	if !b.IsInt64() {
		return 0, false
	}
	return b.Int64(), true
}

func boolToNum[T fixed](to types.T) Kernel {
	one := convertNum[T](1)
	if to.Kind == types.Decimal {
		one = any(decimal128.FromI64(pow10i64[min(to.Scale, 18)])).(T)
	}
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		a := args[0]
		for i := range out {
			var z T
			if boolAt(a, i) {
				z = one
			}
			out[i] = z
		}
		return finish(to, n, val, buf), nil
	}
}

func numToBool(from types.T) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		buf, out := newBoolBuf(mem, n)
		a := args[0].Array
		set := func(i int) { out[i>>3] |= 1 << uint(i&7) }
		switch from.Kind {
		case types.TinyInt:
			nonZero(values[int8](a), set)
		case types.SmallInt:
			nonZero(values[int16](a), set)
		case types.Int:
			nonZero(values[int32](a), set)
		case types.BigInt:
			nonZero(values[int64](a), set)
		case types.Float:
			nonZero(values[float32](a), set)
		case types.Double:
			nonZero(values[float64](a), set)
		case types.Decimal:
			for i, x := range values[decimal128.Num](a) {
				if x.Sign() != 0 {
					set(i)
				}
			}
		}
		return finish(types.BooleanType, n, val, buf), nil
	}
}

func nonZero[T ordered](x []T, set func(int)) {
	for i, v := range x {
		if v != 0 {
			set(i)
		}
	}
}

func castToFloat[T floating](from, to types.T) (Kernel, error) {
	switch from.Kind {
	case types.TinyInt:
		return widen[int8, T](to), nil
	case types.SmallInt:
		return widen[int16, T](to), nil
	case types.Int:
		return widen[int32, T](to), nil
	case types.BigInt:
		return widen[int64, T](to), nil
	case types.Float:
		return widen[float32, T](to), nil
	case types.Double:
		return widen[float64, T](to), nil
	case types.Decimal:
		scale, bits := from.Scale, 64
		if to.Kind == types.Float {
			bits = 32
		}
		return mapFixed(to, false, func(x decimal128.Num) (T, bool) { return T(decimalToFloat(x, scale, bits)), true }, nil), nil
	case types.Boolean:
		return boolToNum[T](to), nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", from, to)
}

func castToDecimal(from, to types.T, try bool) (Kernel, error) {
	p, s := to.Precision, to.Scale
	switch from.Kind {
	case types.TinyInt:
		return intToDecimal[int8](from, to, try), nil
	case types.SmallInt:
		return intToDecimal[int16](from, to, try), nil
	case types.Int:
		return intToDecimal[int32](from, to, try), nil
	case types.BigInt:
		return intToDecimal[int64](from, to, try), nil
	case types.Float:
		return floatToDecimal[float32](from, to, try, 32), nil
	case types.Double:
		return floatToDecimal[float64](from, to, try, 64), nil
	case types.Decimal:
		fs := from.Scale
		return mapFixed(to, try, func(x decimal128.Num) (decimal128.Num, bool) {
			return rescaleDecimal(x, fs, s, p)
		}, func(x decimal128.Num) error { return castErr(from, x, to, "out of range") }), nil
	case types.Boolean:
		return boolToNum[decimal128.Num](to), nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", from, to)
}

// rescaleDecimal changes x's scale from s to t rounding half up, and checks
// it fits precision p.
func rescaleDecimal(x decimal128.Num, s, t, p int) (decimal128.Num, bool) {
	if v, ok := i64(x); ok {
		var r int64
		switch {
		case t >= s:
			r, ok = mulPow10(v, t-s)
		case s-t >= 19:
			r = 0
		default:
			r = divRoundHalfUp(v, pow10i64[s-t])
		}
		if ok {
			n := decimal128.FromI64(r)
			return n, fitsPrecision(n, p)
		}
	}
	return bigToNum(bigRescale(x.BigInt(), s, t), p)
}

func intToDecimal[F integer](from, to types.T, try bool) Kernel {
	p, s := to.Precision, to.Scale
	return mapFixed(to, try, func(x F) (decimal128.Num, bool) {
		if v, ok := mulPow10(int64(x), s); ok {
			n := decimal128.FromI64(v)
			return n, fitsPrecision(n, p)
		}
		return bigToNum(new(big.Int).Mul(big.NewInt(int64(x)), pow10Big[s]), p)
	}, func(x F) error { return castErr(from, int64(x), to, "out of range") })
}

// floatToDecimal converts through the shortest decimal representation of
// the float (as Java's BigDecimal.valueOf), rounding half up.
func floatToDecimal[F floating](from, to types.T, try bool, bitSize int) Kernel {
	p, s := to.Precision, to.Scale
	return mapFixed(to, try, func(x F) (decimal128.Num, bool) {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return decimal128.Num{}, false
		}
		var tmp [40]byte
		b := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize)
		return parseDecimal(unsafe.String(unsafe.SliceData(b), len(b)), p, s)
	}, func(x F) error { return castErr(from, float64(x), to, "out of range") })
}

// castFromString parses strings.
func castFromString(to types.T, try bool) (Kernel, error) {
	switch to.Kind {
	case types.Bytes:
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			return rebrand(ctx, args[0], to, n), nil
		}, nil
	case types.Boolean:
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			mem := ctx.mem()
			val := andValidity(mem, args, n)
			buf, out := newBoolBuf(mem, n)
			s := newStrArg(args[0])
			for i := range n {
				if !val.valid(i) {
					continue
				}
				b, ok := parseBool(s.at(i))
				if !ok {
					if try {
						val.setNull(mem, n, i)
						continue
					}
					val.release()
					buf.Release()
					return Vec{}, castErr(types.StringType, s.at(i), to, "")
				}
				if b {
					out[i>>3] |= 1 << uint(i&7)
				}
			}
			return finish(to, n, val, buf), nil
		}, nil
	case types.TinyInt:
		return parseStrings(to, try, func(s string) (int8, bool) {
			v, ok := parseInt(s)
			return int8(v), ok && int64(int8(v)) == v
		}), nil
	case types.SmallInt:
		return parseStrings(to, try, func(s string) (int16, bool) {
			v, ok := parseInt(s)
			return int16(v), ok && int64(int16(v)) == v
		}), nil
	case types.Int:
		return parseStrings(to, try, func(s string) (int32, bool) {
			v, ok := parseInt(s)
			return int32(v), ok && int64(int32(v)) == v
		}), nil
	case types.BigInt:
		return parseStrings(to, try, parseInt), nil
	case types.Float:
		return parseStrings(to, try, func(s string) (float32, bool) {
			v, ok := parseFloat(s, 32)
			return float32(v), ok
		}), nil
	case types.Double:
		return parseStrings(to, try, func(s string) (float64, bool) { return parseFloat(s, 64) }), nil
	case types.Decimal:
		p, sc := to.Precision, to.Scale
		return parseStrings(to, try, func(s string) (decimal128.Num, bool) { return parseDecimal(s, p, sc) }), nil
	case types.Date:
		return parseStrings(to, try, func(s string) (int32, bool) {
			d, ok := parseDate(s)
			return int32(d), ok
		}), nil
	case types.Time:
		p := min(to.Precision, 3)
		return parseStrings(to, try, func(s string) (int32, bool) {
			us, ok := parseTime(s)
			ms := us / 1000
			ms -= ms % pow10i64[3-p]
			return int32(ms), ok
		}), nil
	case types.Timestamp:
		p := to.Precision
		return parseStrings(to, try, func(s string) (int64, bool) {
			us, ok := parseTimestamp(s)
			return truncMicros(us, p), ok
		}), nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", types.StringType, to)
}

// rebrand reinterprets a STRING array as BYTES or back (same layout).
func rebrand(ctx *Context, v Vec, to types.T, n int) Vec {
	d := v.Array.Data()
	nd := newDataLike(d, to)
	return Vec{Type: to, Array: nd}
}

func parseStrings[T fixed](to types.T, try bool, conv func(string) (T, bool)) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		s := newStrArg(args[0])
		for i := range out {
			if !val.valid(i) {
				continue
			}
			r, ok := conv(s.at(i))
			if !ok {
				if try {
					val.setNull(mem, n, i)
					continue
				}
				val.release()
				buf.Release()
				why := ""
				if (to.Kind == types.Date || to.Kind == types.Timestamp) && yearOutOfRange(s.at(i)) {
					why = "the year is " + ErrTemporalRange.Error() + " 0001-01-01 .. 9999-12-31"
				}
				return Vec{}, castErr(types.StringType, s.at(i), to, why)
			}
			out[i] = r
		}
		return finish(to, n, val, buf), nil
	}
}

// castToString prints each value as types.Format does.
func castToString(from, to types.T) (Kernel, error) {
	switch from.Kind {
	case types.TinyInt:
		return printFixed(to, 4, func(b []byte, x int8) []byte { return strconv.AppendInt(b, int64(x), 10) }), nil
	case types.SmallInt:
		return printFixed(to, 6, func(b []byte, x int16) []byte { return strconv.AppendInt(b, int64(x), 10) }), nil
	case types.Int:
		return printFixed(to, 11, func(b []byte, x int32) []byte { return strconv.AppendInt(b, int64(x), 10) }), nil
	case types.BigInt:
		return printFixed(to, 20, func(b []byte, x int64) []byte { return strconv.AppendInt(b, x, 10) }), nil
	case types.Float:
		return printFixed(to, 16, func(b []byte, x float32) []byte { return appendJavaFloat(b, float64(x), 32) }), nil
	case types.Double:
		return printFixed(to, 24, func(b []byte, x float64) []byte { return appendJavaFloat(b, x, 64) }), nil
	case types.Decimal:
		s := from.Scale
		return printFixed(to, from.Precision+2, func(b []byte, x decimal128.Num) []byte { return appendDecimal(b, x, s) }), nil
	case types.Date:
		return printFixed(to, 10, func(b []byte, x int32) []byte { return appendDate(b, int64(x)) }), nil
	case types.Time:
		p := from.Precision
		return printFixed(to, 12, func(b []byte, x int32) []byte { return appendTime(b, int64(x), p) }), nil
	case types.Timestamp:
		p := from.Precision
		return printFixed(to, 26, func(b []byte, x int64) []byte { return appendTimestamp(b, x, p) }), nil
	case types.IntervalDayTime, types.IntervalYearMonth:
		return printFixed(to, 16, func(b []byte, x int64) []byte { return append(b, types.Format(from, x)...) }), nil
	case types.Boolean:
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			o := newStrOut(ctx.mem(), to, n, 5*n)
			o.withValidity(andValidity(ctx.mem(), args, n))
			for i := range n {
				if boolAt(args[0], i) {
					o.appendString("TRUE")
				} else {
					o.appendString("FALSE")
				}
			}
			return o.finish(), nil
		}, nil
	case types.Bytes:
		return func(ctx *Context, args []Vec, n int) (Vec, error) {
			return rebrand(ctx, args[0], to, n), nil
		}, nil
	}
	return nil, fmt.Errorf("cannot cast %s to %s", from, to)
}

// printFixed appends each non-NULL value with app (width: a size hint).
func printFixed[F fixed](to types.T, width int, app func([]byte, F) []byte) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		o := newStrOut(mem, to, n, width*n)
		val := andValidity(mem, args, n)
		o.withValidity(val)
		x := values[F](args[0].Array)
		for i := range n {
			if !val.valid(i) {
				o.endRow()
				continue
			}
			o.grow(width + 8)
			o.buf = app(o.buf, x[i])
			o.endRow()
		}
		return o.finish(), nil
	}
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalToFloat is the float (bitSize 64 or 32) nearest to the decimal x
// of the given scale, as Java's BigDecimal.doubleValue: 3.8 is 3.8, not
// 3.8 * 10^0 computed in floats (3.8000000000000003). An unscaled value
// below 2^53 over an exact power of ten is one correctly rounded
// division; anything else goes through strconv's exact parser (without
// allocating when the unscaled value fits 64 bits).
func decimalToFloat(x decimal128.Num, scale, bitSize int) float64 {
	v, small := i64(x)
	if small && bitSize == 64 && scale >= 0 && scale < len(exactPow10) && v > -(1<<53) && v < 1<<53 {
		return float64(v) / exactPow10[scale]
	}
	var tmp [64]byte
	var b []byte
	if small {
		b = strconv.AppendInt(tmp[:0], v, 10)
	} else {
		b = x.BigInt().Append(tmp[:0], 10)
	}
	b = append(b, 'e')
	b = strconv.AppendInt(b, int64(-scale), 10)
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), bitSize)
	return f
}
