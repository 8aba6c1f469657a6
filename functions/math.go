package functions

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("ABS", resolveAbs)
	f := register("ROUND", func(args []types.T) (Resolved, error) { return resolveRound(argsOf(args)) })
	f.resolveArgs = resolveRound
	f = register("TRUNCATE", func(args []types.T) (Resolved, error) { return resolveTruncate(argsOf(args)) })
	f.resolveArgs = resolveTruncate
	register("FLOOR", resolveFloorCeil("FLOOR", math.Floor))
	register("CEIL", resolveFloorCeil("CEIL", math.Ceil))
	alias("CEILING", "CEIL")
	register("SIGN", resolveSign)
	for name, fn := range map[string]func(float64) float64{
		"SQRT": math.Sqrt, "LN": math.Log, "LOG10": math.Log10, "LOG2": math.Log2, "EXP": math.Exp,
		"SIN": math.Sin, "COS": math.Cos, "TAN": math.Tan, "ASIN": math.Asin, "ACOS": math.Acos,
		"ATAN": math.Atan, "SINH": math.Sinh, "COSH": math.Cosh, "TANH": math.Tanh,
		"COT":     func(x float64) float64 { return 1 / math.Tan(x) },
		"DEGREES": func(x float64) float64 { return x * 180 / math.Pi },
		"RADIANS": func(x float64) float64 { return x * math.Pi / 180 },
	} {
		register(name, resolveDouble1(name, fn))
	}
	register("POWER", resolveDouble2("POWER", math.Pow))
	alias("POW", "POWER")
	register("ATAN2", resolveDouble2("ATAN2", math.Atan2))
	register("LOG", resolveLog)
	register("PI", resolveConstDouble("PI", math.Pi))
	register("E", resolveConstDouble("E", math.E))
}

func argsOf(ts []types.T) []Arg {
	out := make([]Arg, len(ts))
	for i, t := range ts {
		out[i] = Arg{Type: t}
	}
	return out
}

func numericArg(name string, args []types.T) (types.T, error) {
	t := args[0]
	if t.Kind == types.Null {
		return types.IntType, nil
	}
	if !t.IsNumeric() {
		return types.T{}, errArgs(name, args)
	}
	return t.Nullable(), nil
}

// mapNum applies f to each non-NULL value of a numeric arg of element type
// T; f returning false fails with fail's error.
func mapNum[T fixed](rt types.T, f func(T) (T, bool), fail func(T) error) Kernel {
	return strict(rt, mapFixed(rt, false, f, fail))
}

func resolveAbs(args []types.T) (Resolved, error) {
	if err := nargs("ABS", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	t, err := numericArg("ABS", args)
	if err != nil {
		return Resolved{}, err
	}
	var k Kernel
	switch t.Kind {
	case types.TinyInt:
		k = intAbs[int8](t)
	case types.SmallInt:
		k = intAbs[int16](t)
	case types.Int:
		k = intAbs[int32](t)
	case types.BigInt:
		k = intAbs[int64](t)
	case types.Float:
		k = mapNum(t, func(x float32) (float32, bool) { return float32(math.Abs(float64(x))), true }, nil)
	case types.Double:
		k = mapNum(t, func(x float64) (float64, bool) { return math.Abs(x), true }, nil)
	case types.Decimal:
		k = mapNum(t, func(x decimal128.Num) (decimal128.Num, bool) { return x.Abs(), true }, nil)
	}
	return Resolved{Ret: nullableFrom(t, args), ArgTypes: []types.T{t}, Kernel: k}, nil
}

func intAbs[T integer](t types.T) Kernel {
	mn := minOf[T]()
	return mapNum(t, func(x T) (T, bool) {
		if x < 0 {
			return -x, x != mn
		}
		return x, true
	}, func(x T) error { return fmt.Errorf("%s overflow: ABS(%d) is out of range", t, x) })
}

func resolveSign(args []types.T) (Resolved, error) {
	if err := nargs("SIGN", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	t, err := numericArg("SIGN", args)
	if err != nil {
		return Resolved{}, err
	}
	var k Kernel
	switch t.Kind {
	case types.TinyInt:
		k = mapNum(t, signOf[int8], nil)
	case types.SmallInt:
		k = mapNum(t, signOf[int16], nil)
	case types.Int:
		k = mapNum(t, signOf[int32], nil)
	case types.BigInt:
		k = mapNum(t, signOf[int64], nil)
	case types.Float:
		k = mapNum(t, signOf[float32], nil)
	case types.Double:
		k = mapNum(t, signOf[float64], nil)
	case types.Decimal:
		one := decimal128.FromI64(1)
		if t.Scale < 19 {
			one = decimal128.FromI64(pow10i64[min(t.Scale, 18)])
		}
		k = mapNum(t, func(x decimal128.Num) (decimal128.Num, bool) {
			switch x.Sign() {
			case 1:
				return one, true
			case -1:
				return one.Negate(), true
			}
			return x, true
		}, nil)
	}
	return Resolved{Ret: nullableFrom(t, args), ArgTypes: []types.T{t}, Kernel: k}, nil
}

func signOf[T ordered](x T) (T, bool) {
	switch {
	case x > 0:
		return 1, true
	case x < 0:
		return T(0) - 1, true
	}
	return x, true
}

// resolveRound resolves ROUND(x[, d]), rounding half away from zero (Java's
// HALF_UP) to d digits after the point (before it when d < 0). For DECIMAL
// the result type follows Flink when d is a literal: DECIMAL(p - s + d + 1,
// d) for 0 <= d < s, DECIMAL(p - s + 1, 0) for d < 0; with a non-literal d
// the scale is kept.
func resolveRound(args []Arg) (Resolved, error) { return resolveRoundMode("ROUND", false, args) }

// resolveTruncate resolves TRUNCATE(x[, d]): as ROUND, with the same result
// types, but cutting the digits beyond d off (toward zero) instead of
// rounding: TRUNCATE(42.324, 2) = 42.32, TRUNCATE(-1.99) = -1; a FLOAT or
// DOUBLE is cut in its shortest decimal form, as Flink does through
// BigDecimal.
func resolveTruncate(args []Arg) (Resolved, error) { return resolveRoundMode("TRUNCATE", true, args) }

func resolveRoundMode(name string, trunc bool, args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := nargs(name, ts, 1, 2); err != nil {
		return Resolved{}, err
	}
	t, err := numericArg(name, ts)
	if err != nil {
		return Resolved{}, err
	}
	if len(args) == 2 && !args[1].Type.IsInteger() && args[1].Type.Kind != types.Null {
		return Resolved{}, errArgs(name, ts)
	}
	ats := []types.T{t}
	if len(args) == 2 {
		ats = append(ats, types.IntType)
	}
	rt := t
	litD, hasLit := 0, len(args) == 1
	if len(args) == 2 && args[1].Const {
		if v, ok := args[1].Value.(int64); ok {
			litD, hasLit = int(v), true
		}
	}
	if t.Kind == types.Decimal && hasLit {
		p, s := t.Precision, t.Scale
		switch {
		case litD >= s:
		case litD < 0:
			rt = types.DecimalOf(min(38, 1+p-s), 0)
		default:
			rt = types.DecimalOf(min(38, 1+p-s+litD), litD)
		}
	} else if t.Kind == types.Decimal {
		rt = types.DecimalOf(min(38, t.Precision+1), t.Scale)
	}
	var k Kernel
	switch t.Kind {
	case types.TinyInt:
		k = roundInt[int8](t, trunc)
	case types.SmallInt:
		k = roundInt[int16](t, trunc)
	case types.Int:
		k = roundInt[int32](t, trunc)
	case types.BigInt:
		k = roundInt[int64](t, trunc)
	case types.Float:
		k = roundFloat[float32](t, 32, trunc)
	case types.Double:
		k = roundFloat[float64](t, 64, trunc)
	case types.Decimal:
		k = roundDecimal(t, rt, trunc)
	}
	rt.NotNull = false
	return Resolved{Ret: rt, ArgTypes: ats, Kernel: strict(rt, k)}, nil
}

// digitsArg returns the d argument of ROUND/TRUNCATE for row i (0 if absent).
func digitsArg(args []Vec) func(i int) int {
	if len(args) < 2 {
		return func(int) int { return 0 }
	}
	var one [1]int32
	d, m := operand(args[1], &one)
	return func(i int) int { return int(d[i&m]) }
}

func roundInt[T integer](t types.T, trunc bool) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var one [1]T
		x, xm := operand(args[0], &one)
		dig := digitsArg(args)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		for i := range out {
			d := dig(i)
			if d >= 0 || !val.valid(i) {
				out[i] = x[i&xm]
				continue
			}
			if -d >= 19 {
				out[i] = 0
				continue
			}
			p := pow10i64[-d]
			var r int64
			if trunc {
				r = int64(x[i&xm]) / p * p
			} else {
				r = divRoundHalfUp(int64(x[i&xm]), p) * p
			}
			if int64(T(r)) != r || (r != 0 && (r > 0) != (x[i&xm] > 0)) {
				val.release()
				buf.Release()
				return Vec{}, fmt.Errorf("%s overflow: ROUND(%d, %d) is out of range", t, x[i&xm], d)
			}
			out[i] = T(r)
		}
		return finish(t, n, val, buf), nil
	}
}

// roundFloat rounds the shortest decimal representation of x half up, as
// Flink does through BigDecimal.valueOf.
func roundFloat[T floating](t types.T, bitSize int, trunc bool) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var one [1]T
		x, xm := operand(args[0], &one)
		dig := digitsArg(args)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		for i := range out {
			f := float64(x[i&xm])
			if math.IsNaN(f) || math.IsInf(f, 0) || !val.valid(i) {
				out[i] = x[i&xm]
				continue
			}
			out[i] = T(roundFloatDigits(f, dig(i), bitSize, trunc))
		}
		return finish(t, n, val, buf), nil
	}
}

func roundHalfUpFloat(f float64, d int, bitSize int) float64 {
	return roundFloatDigits(f, d, bitSize, false)
}

// roundFloatDigits rounds f half up to d digits (cuts them off when
// trunc) in its shortest decimal form.
func roundFloatDigits(f float64, d int, bitSize int, trunc bool) float64 {
	if d > 300 || d < -300 {
		if d > 0 {
			return f
		}
		return 0
	}
	var tmp [64]byte
	b := strconv.AppendFloat(tmp[:0], f, 'e', -1, bitSize)
	// b = [-]D[.DDD]e[+-]XX: round the digit string at position exp+d+1.
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	e := 0
	for e < len(b) && b[e] != 'e' {
		e++
	}
	exp, _ := strconv.Atoi(string(b[e+1:]))
	var digs [32]byte
	nd := 0
	for _, c := range b[:e] {
		if c != '.' {
			digs[nd] = c
			nd++
		}
	}
	// value = 0.D1D2... * 10^(exp+1); keep = number of digits to keep.
	keep := exp + 1 + d
	if keep >= nd {
		return f
	}
	var mant int64
	if keep < 0 {
		return 0 * f
	}
	for _, c := range digs[:keep] {
		mant = mant*10 + int64(c-'0')
	}
	if digs[keep] >= '5' && !trunc {
		mant++
	}
	// result = mant * 10^(exp+1-keep) = mant * 10^(-d)
	var r float64
	if d >= 0 {
		r = float64(mant) / math.Pow10(d)
		// Use the parser for an exactly rounded quotient.
		var out [48]byte
		ob := strconv.AppendInt(out[:0], mant, 10)
		ob = append(ob, 'e', '-')
		ob = strconv.AppendInt(ob, int64(d), 10)
		if v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(ob), len(ob)), 64); err == nil {
			r = v
		}
	} else {
		r = float64(mant) * math.Pow10(-d)
	}
	if neg {
		r = -r
	}
	return r
}

func roundDecimal(t, rt types.T, trunc bool) Kernel {
	s := t.Scale
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var one [1]decimal128.Num
		x, xm := operand(args[0], &one)
		dig := digitsArg(args)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[decimal128.Num](mem, n)
		for i := range out {
			if !val.valid(i) {
				out[i] = decimal128.Num{}
				continue
			}
			d := dig(i)
			var r decimal128.Num
			var ok bool
			if trunc {
				r, ok = truncDecimalValue(x[i&xm], s, d, rt)
			} else {
				r, ok = roundDecimalValue(x[i&xm], s, d, rt)
			}
			if !ok {
				val.release()
				buf.Release()
				name := "ROUND"
				if trunc {
					name = "TRUNCATE"
				}
				return Vec{}, fmt.Errorf("%s overflow: %s(%s, %d) is out of range", rt, name, types.FormatDecimal(x[i&xm], s), d)
			}
			out[i] = r
		}
		return finish(rt, n, val, buf), nil
	}
}

// truncDecimalValue cuts x (scale s) to d digits (toward zero) and
// represents it in rt.
func truncDecimalValue(x decimal128.Num, s, d int, rt types.T) (decimal128.Num, bool) {
	if d >= s {
		return rescaleDecimal(x, s, rt.Scale, rt.Precision)
	}
	// x / 10^(s-d), cut: the value in units of 10^-d, then scaled to rt.
	var q decimal128.Num
	if v, ok := i64(x); ok {
		if s-d < 19 {
			q = decimal128.FromI64(v / pow10i64[s-d])
		}
	} else if s-d <= 38 {
		q = decimal128.FromBigInt(new(big.Int).Quo(x.BigInt(), pow10Big[s-d]))
	}
	if rt.Scale-d > 38 {
		return decimal128.Num{}, q == decimal128.Num{}
	}
	return bigToNumScaled(q, rt.Scale-d, rt.Precision)
}

// bigToNumScaled is q * 10^k (k >= 0) when it fits precision p.
func bigToNumScaled(q decimal128.Num, k, p int) (decimal128.Num, bool) {
	if v, ok := i64(q); ok {
		if r, ok := mulPow10(v, k); ok {
			n := decimal128.FromI64(r)
			return n, fitsPrecision(n, p)
		}
	}
	return bigToNum(new(big.Int).Mul(q.BigInt(), pow10Big[k]), p)
}

// roundDecimalValue rounds x (scale s) to d digits and represents it in rt.
func roundDecimalValue(x decimal128.Num, s, d int, rt types.T) (decimal128.Num, bool) {
	if d >= s {
		return rescaleDecimal(x, s, rt.Scale, rt.Precision)
	}
	if d >= 0 {
		r, ok := rescaleDecimal(x, s, d, 38)
		if !ok {
			return r, false
		}
		return rescaleDecimal(r, d, rt.Scale, rt.Precision)
	}
	// round to 10^-d: to scale 0 at d digits, then back
	if s-d > 38 {
		return rescaleDecimal(decimal128.Num{}, 0, rt.Scale, rt.Precision)
	}
	r, ok := rescaleDecimal(x, s+(-d), 0, 38)
	_ = r
	// The above treats x as having scale s-d: i.e. x / 10^(s-d), rounded.
	if !ok {
		return r, false
	}
	return rescaleDecimal(r, d, rt.Scale, rt.Precision)
}

// resolveFloorCeil: integers unchanged; FLOAT/DOUBLE rounded toward -inf
// (+inf); DECIMAL(p, s) gives DECIMAL(p - s + 1, 0). Temporal FLOOR/CEIL
// (x TO unit) are in datetime.go.
func resolveFloorCeil(name string, f func(float64) float64) func(args []types.T) (Resolved, error) {
	up := name == "CEIL"
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 2); err != nil {
			return Resolved{}, err
		}
		if len(args) == 2 || args[0].IsTemporal() {
			return resolveFloorCeilTemporal(name, args)
		}
		t, err := numericArg(name, args)
		if err != nil {
			return Resolved{}, err
		}
		rt := t
		var k Kernel
		switch t.Kind {
		case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
			k, _ = castKernel(t, t, false)
		case types.Float:
			k = mapNum(t, func(x float32) (float32, bool) { return float32(f(float64(x))), true }, nil)
		case types.Double:
			k = mapNum(t, func(x float64) (float64, bool) { return f(x), true }, nil)
		case types.Decimal:
			rt = types.DecimalOf(min(38, t.Precision-t.Scale+1), 0)
			s := t.Scale
			k = strict(rt, mapFixed(rt, false, func(x decimal128.Num) (decimal128.Num, bool) {
				return floorCeilDecimal(x, s, up), true
			}, nil))
		}
		return Resolved{Ret: nullableFrom(rt, args), ArgTypes: []types.T{t}, Kernel: k}, nil
	}
}

func floorCeilDecimal(x decimal128.Num, s int, up bool) decimal128.Num {
	if v, ok := i64(x); ok && s < 19 {
		p := pow10i64[s]
		q := floorDiv(v, p)
		if up && q*p != v {
			q++
		}
		return decimal128.FromI64(q)
	}
	b := x.BigInt()
	q, m := b.DivMod(b, pow10Big[s], new(big.Int))
	if up && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return decimal128.FromBigInt(q)
}

func resolveDouble1(name string, f func(float64) float64) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 1); err != nil {
			return Resolved{}, err
		}
		if _, err := numericArg(name, args); err != nil {
			return Resolved{}, err
		}
		rt := nullableFrom(types.DoubleType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{types.DoubleType}, Kernel: mapNum(types.DoubleType, func(x float64) (float64, bool) { return f(x), true }, nil)}, nil
	}
}

func resolveDouble2(name string, f func(float64, float64) float64) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		for _, a := range args {
			if !a.IsNumeric() && a.Kind != types.Null {
				return Resolved{}, errArgs(name, args)
			}
		}
		rt := nullableFrom(types.DoubleType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{types.DoubleType, types.DoubleType}, Kernel: double2(f)}, nil
	}
}

func double2(f func(float64, float64) float64) Kernel {
	return strict(types.DoubleType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var oa, ob [1]float64
		a, am := operand(args[0], &oa)
		b, bm := operand(args[1], &ob)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[float64](mem, n)
		for i := range out {
			out[i] = f(a[i&am], b[i&bm])
		}
		return finish(types.DoubleType, n, val, buf), nil
	})
}

// resolveLog: LOG(x) is the natural logarithm, LOG(b, x) the logarithm of
// x to base b (as Flink).
func resolveLog(args []types.T) (Resolved, error) {
	if len(args) == 1 {
		return resolveDouble1("LOG", math.Log)(args)
	}
	return resolveDouble2("LOG", func(b, x float64) float64 { return math.Log(x) / math.Log(b) })(args)
}

func resolveConstDouble(name string, v float64) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 0, 0); err != nil {
			return Resolved{}, err
		}
		rt := types.T{Kind: types.Double, NotNull: true}
		return Resolved{Ret: rt, ArgTypes: nil, Kernel: func(*Context, []Vec, int) (Vec, error) {
			return ConstVec(types.DoubleType, v), nil
		}}, nil
	}
}
