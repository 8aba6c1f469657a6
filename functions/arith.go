package functions

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

func init() {
	for _, op := range []string{"+", "-", "*", "/", "%"} {
		register(op, resolveArith(op))
	}
	alias("MOD", "%")
	register("NEG", resolveNeg)
}

func minOf[T integer]() T {
	var x T
	return T(-1) << (unsafe.Sizeof(x)*8 - 1)
}

func maxOf[T integer]() T { return ^minOf[T]() }

// resolveArith resolves a binary arithmetic operator.
func resolveArith(op string) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(op, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		a, b := args[0].Nullable(), args[1].Nullable()
		if a.Kind == types.Null && b.Kind == types.Null {
			a, b = types.IntType, types.IntType
		} else if a.Kind == types.Null {
			a = b
		} else if b.Kind == types.Null {
			b = a
		}
		nn := args[0].NotNull && args[1].NotNull
		switch {
		case a.IsNumeric() && b.IsNumeric():
			if (a.Kind == types.Decimal || b.Kind == types.Decimal) && !a.IsApproximate() && !b.IsApproximate() {
				da, db := asDecimal(a), asDecimal(b)
				rt := decimalArithType(op, da, db)
				rt.NotNull = nn && op != "/" && op != "%"
				return Resolved{Ret: rt, ArgTypes: []types.T{da, db}, Kernel: strict(rt, decimalArith(op, da, db, rt))}, nil
			}
			rt := mergeNumeric(a, b)
			k := numericArith(op, rt)
			rt.NotNull = nn && (op == "+" || op == "-" || op == "*") && rt.IsApproximate()
			return Resolved{Ret: rt, ArgTypes: []types.T{rt.Nullable(), rt.Nullable()}, Kernel: k}, nil
		case (op == "+" || op == "-") && a.IsTemporal() && b.IsInterval():
			return resolveTemporalArith(op, a, b, false)
		case op == "+" && a.IsInterval() && b.IsTemporal():
			return resolveTemporalArith(op, b, a, true)
		case (op == "+" || op == "-") && a.IsInterval() && a.Kind == b.Kind:
			rt := a
			return Resolved{Ret: rt, ArgTypes: []types.T{a, b}, Kernel: intArith[int64](op, rt)}, nil
		case op == "*" && a.IsInterval() && b.IsInteger():
			return Resolved{Ret: a, ArgTypes: []types.T{a, types.BigIntType}, Kernel: intArith[int64](op, a)}, nil
		case op == "*" && a.IsInteger() && b.IsInterval():
			return Resolved{Ret: b, ArgTypes: []types.T{types.BigIntType, b}, Kernel: intArith[int64](op, b)}, nil
		}
		return Resolved{}, errArgs(op, args)
	}
}

// numericArith returns the kernel of op over two args of the numeric type rt.
func numericArith(op string, rt types.T) Kernel {
	switch rt.Kind {
	case types.TinyInt:
		return intArith[int8](op, rt)
	case types.SmallInt:
		return intArith[int16](op, rt)
	case types.Int:
		return intArith[int32](op, rt)
	case types.BigInt:
		return intArith[int64](op, rt)
	case types.Float:
		return floatArith[float32](op, rt)
	case types.Double:
		return floatArith[float64](op, rt)
	}
	panic("functions: numericArith on " + rt.String())
}

func addLoop[T integer](a []T, am int, b []T, bm int, out []T) bool {
	var ovf T
	switch {
	case am != 0 && bm != 0:
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			x, y := a[i], b[i]
			s := x + y
			out[i] = s
			ovf |= (x ^ s) & (y ^ s)
		}
	case bm == 0:
		y := b[0]
		a = a[:len(out)]
		for i := range out {
			x := a[i]
			s := x + y
			out[i] = s
			ovf |= (x ^ s) & (y ^ s)
		}
	default:
		for i := range out {
			x, y := a[i&am], b[i&bm]
			s := x + y
			out[i] = s
			ovf |= (x ^ s) & (y ^ s)
		}
	}
	return ovf < 0
}

func subLoop[T integer](a []T, am int, b []T, bm int, out []T) bool {
	var ovf T
	switch {
	case am != 0 && bm != 0:
		a, b = a[:len(out)], b[:len(out)]
		for i := range out {
			x, y := a[i], b[i]
			s := x - y
			out[i] = s
			ovf |= (x ^ y) & (x ^ s)
		}
	case bm == 0:
		y := b[0]
		a = a[:len(out)]
		for i := range out {
			x := a[i]
			s := x - y
			out[i] = s
			ovf |= (x ^ y) & (x ^ s)
		}
	default:
		for i := range out {
			x, y := a[i&am], b[i&bm]
			s := x - y
			out[i] = s
			ovf |= (x ^ y) & (x ^ s)
		}
	}
	return ovf < 0
}

// mulOverflows reports whether x*y overflows T.
func mulOverflows[T integer](x, y T) bool {
	if unsafe.Sizeof(x) < 8 {
		p := int64(x) * int64(y)
		return int64(T(p)) != p
	}
	hi, lo := bits.Mul64(uint64(x), uint64(y))
	if x < 0 {
		hi -= uint64(y)
	}
	if y < 0 {
		hi -= uint64(x)
	}
	return int64(hi) != int64(lo)>>63
}

func mulLoop[T integer](a []T, am int, b []T, bm int, out []T) bool {
	ovf := false
	if unsafe.Sizeof(a[0]) < 8 {
		var bad int64
		for i := range out {
			p := int64(a[i&am]) * int64(b[i&bm])
			out[i] = T(p)
			bad |= int64(T(p)) ^ p
		}
		return bad != 0
	}
	for i := range out {
		x, y := a[i&am], b[i&bm]
		out[i] = x * y
		if mulOverflows(x, y) {
			ovf = true
		}
	}
	return ovf
}

func divLoop[T integer](a []T, am int, b []T, bm int, out []T, mod bool) bool {
	bad := false
	mn := minOf[T]()
	for i := range out {
		x, y := a[i&am], b[i&bm]
		if y == 0 || (y == -1 && x == mn && !mod) {
			bad = true
			out[i] = 0
			continue
		}
		if mod {
			out[i] = x % y
		} else {
			out[i] = x / y
		}
	}
	return bad
}

// intArith is op over two integer args of the physical type T (rt is
// TINYINT..BIGINT or an interval), failing on overflow and division by zero.
func intArith[T integer](op string, rt types.T) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var oa, ob [1]T
		a, am := operand(args[0], &oa)
		b, bm := operand(args[1], &ob)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		var bad bool
		switch op {
		case "+":
			bad = addLoop(a, am, b, bm, out)
		case "-":
			bad = subLoop(a, am, b, bm, out)
		case "*":
			bad = mulLoop(a, am, b, bm, out)
		case "/":
			bad = divLoop(a, am, b, bm, out, false)
		case "%":
			bad = divLoop(a, am, b, bm, out, true)
		}
		if bad {
			for i := range n {
				if !val.valid(i) {
					continue
				}
				if err := intArithErr(op, rt, a[i&am], b[i&bm]); err != nil {
					val.release()
					buf.Release()
					return Vec{}, err
				}
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

// intArithErr returns the error of x op y, or nil if it is fine.
func intArithErr[T integer](op string, rt types.T, x, y T) error {
	bad := false
	switch op {
	case "+":
		s := x + y
		bad = (x^s)&(y^s) < 0
	case "-":
		s := x - y
		bad = (x^y)&(x^s) < 0
	case "*":
		bad = mulOverflows(x, y)
	case "/", "%":
		if y == 0 {
			return fmt.Errorf("division by zero: %d %s 0", x, op)
		}
		bad = op == "/" && y == -1 && x == minOf[T]()
	}
	if bad {
		return fmt.Errorf("%s overflow: %d %s %d is out of range", rt.Nullable(), x, op, y)
	}
	return nil
}

// floatArith is op over FLOAT or DOUBLE args: IEEE semantics, so division
// by zero gives an infinity or NaN as in Java.
func floatArith[T floating](op string, rt types.T) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var oa, ob [1]T
		a, am := operand(args[0], &oa)
		b, bm := operand(args[1], &ob)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		switch op {
		case "+":
			for i := range out {
				out[i] = a[i&am] + b[i&bm]
			}
		case "-":
			for i := range out {
				out[i] = a[i&am] - b[i&bm]
			}
		case "*":
			for i := range out {
				out[i] = a[i&am] * b[i&bm]
			}
		case "/":
			for i := range out {
				out[i] = a[i&am] / b[i&bm]
			}
		case "%":
			for i := range out {
				out[i] = T(math.Mod(float64(a[i&am]), float64(b[i&bm])))
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

func resolveNeg(args []types.T) (Resolved, error) {
	if err := nargs("NEG", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	t := args[0]
	if t.Kind == types.Null {
		t = types.IntType
	}
	t.NotNull = false
	var k Kernel
	switch t.Kind {
	case types.TinyInt:
		k = intNeg[int8](t)
	case types.SmallInt:
		k = intNeg[int16](t)
	case types.Int:
		k = intNeg[int32](t)
	case types.BigInt, types.IntervalDayTime, types.IntervalYearMonth:
		k = intNeg[int64](t)
	case types.Float:
		k = floatNeg[float32](t)
	case types.Double:
		k = floatNeg[float64](t)
	case types.Decimal:
		k = decUnary(t, t, func(x decimal128.Num) (decimal128.Num, error) { return x.Negate(), nil })
	default:
		return Resolved{}, errArgs("-", args)
	}
	rt := t
	rt.NotNull = args[0].NotNull
	return Resolved{Ret: rt, ArgTypes: []types.T{t}, Kernel: k}, nil
}

func intNeg[T integer](rt types.T) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		a := values[T](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		mn := minOf[T]()
		bad := false
		for i := range out {
			x := a[i]
			out[i] = -x
			bad = bad || x == mn
		}
		if bad {
			for i := range n {
				if val.valid(i) && a[i] == mn {
					val.release()
					buf.Release()
					return Vec{}, fmt.Errorf("%s overflow: -(%d) is out of range", rt, a[i])
				}
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

func floatNeg[T floating](rt types.T) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		a := values[T](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[T](mem, n)
		for i := range out {
			out[i] = -a[i]
		}
		return finish(rt, n, val, buf), nil
	})
}

// ---- DECIMAL ----

var pow10Big [77]*big.Int

func init() {
	p := big.NewInt(1)
	for i := range pow10Big {
		pow10Big[i] = new(big.Int).Set(p)
		p.Mul(p, big.NewInt(10))
	}
}

var pow10i64 = [19]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// i64 returns n as an int64 when it fits.
func i64(n decimal128.Num) (int64, bool) {
	lo := int64(n.LowBits())
	return lo, n.HighBits() == lo>>63
}

// mulPow10 multiplies x by 10^k in int64, reporting overflow.
func mulPow10(x int64, k int) (int64, bool) {
	if k == 0 {
		return x, true
	}
	if k >= 19 {
		return 0, x == 0
	}
	p := pow10i64[k]
	r := x * p
	if x != 0 && (r/p != x) {
		return 0, false
	}
	return r, true
}

// divRoundHalfUp returns x / d rounded half away from zero (d > 0).
func divRoundHalfUp(x, d int64) int64 {
	q, r := x/d, x%d
	if r < 0 {
		r = -r
	}
	if r >= d-r {
		if x < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// bigRoundHalfUp sets z = x / 10^k rounded half up (k >= 0).
func bigRoundHalfUp(x *big.Int, k int) *big.Int {
	if k == 0 {
		return x
	}
	return bigDivHalfUp(x, pow10Big[k])
}

func bigDivHalfUp(x, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(x, d, new(big.Int))
	r.Abs(r)
	r.Lsh(r, 1)
	ad := new(big.Int).Abs(d)
	if r.Cmp(ad) >= 0 {
		if (x.Sign() < 0) != (d.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// bigRescale changes x's scale from s to t, rounding half up.
func bigRescale(x *big.Int, s, t int) *big.Int {
	if t >= s {
		return new(big.Int).Mul(x, pow10Big[t-s])
	}
	return bigRoundHalfUp(x, s-t)
}

// fitsPrecision reports whether |n| < 10^p.
func fitsPrecision(n decimal128.Num, p int) bool {
	return n.FitsInPrecision(int32(p))
}

func bigToNum(x *big.Int, p int) (decimal128.Num, bool) {
	if x.CmpAbs(pow10Big[p]) >= 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(x), true
}

// decOp computes one DECIMAL operation.
type decOp struct {
	op     string
	s1, s2 int
	rt     types.T
}

func (d *decOp) apply(x, y decimal128.Num) (decimal128.Num, error) {
	if r, ok, err := d.fast(x, y); ok || err != nil {
		return r, err
	}
	return d.slow(x, y)
}

// fast computes the operation in int64 when the operands and intermediate
// results fit; ok is false when it could not.
func (d *decOp) fast(xn, yn decimal128.Num) (r decimal128.Num, ok bool, err error) {
	x, ok1 := i64(xn)
	y, ok2 := i64(yn)
	if !ok1 || !ok2 {
		return r, false, nil
	}
	rs := d.rt.Scale
	var v int64
	switch d.op {
	case "+", "-", "%":
		s := max(d.s1, d.s2)
		xa, ok1 := mulPow10(x, s-d.s1)
		ya, ok2 := mulPow10(y, s-d.s2)
		if !ok1 || !ok2 {
			return r, false, nil
		}
		switch d.op {
		case "+":
			v = xa + ya
			if (xa^v)&(ya^v) < 0 {
				return r, false, nil
			}
		case "-":
			v = xa - ya
			if (xa^ya)&(xa^v) < 0 {
				return r, false, nil
			}
		case "%":
			if ya == 0 {
				return r, true, d.divZero(xn)
			}
			v = xa % ya
		}
		if rs < s {
			v = divRoundHalfUp(v, pow10i64[s-rs])
		} else if v, ok = mulPow10(v, rs-s); !ok {
			return r, false, nil
		}
	case "*":
		if x != 0 && y != 0 && (mulOverflows(x, y)) {
			return r, false, nil
		}
		v = x * y
		s := d.s1 + d.s2
		if rs < s {
			if s-rs >= 19 {
				return r, false, nil
			}
			v = divRoundHalfUp(v, pow10i64[s-rs])
		}
	case "/":
		if y == 0 {
			return r, true, d.divZero(xn)
		}
		// x*10^k / y with k = rs - s1 + s2, in 128 bits when y fits 64.
		k := rs - d.s1 + d.s2
		if k < 0 || k > 19 {
			return r, false, nil
		}
		neg := (x < 0) != (y < 0)
		ux, uy := uint64(x), uint64(y)
		if x < 0 {
			ux = uint64(-x)
		}
		if y < 0 {
			uy = uint64(-y)
		}
		var pk uint64 = 1
		if k == 19 {
			pk = 10000000000000000000
		} else {
			pk = uint64(pow10i64[k])
		}
		hi, lo := bits.Mul64(ux, pk)
		if hi >= uy {
			return r, false, nil
		}
		q, rem := bits.Div64(hi, lo, uy)
		if rem >= uy-rem {
			q++
		}
		if q > math.MaxInt64 {
			return r, false, nil
		}
		v = int64(q)
		if neg {
			v = -v
		}
	}
	res := decimal128.FromI64(v)
	if !fitsPrecision(res, d.rt.Precision) {
		return r, true, d.overflow(xn, yn)
	}
	return res, true, nil
}

func (d *decOp) divZero(x decimal128.Num) error {
	return fmt.Errorf("division by zero: %s %s 0", types.FormatDecimal(x, d.s1), d.op)
}

func (d *decOp) overflow(x, y decimal128.Num) error {
	return fmt.Errorf("%s overflow: %s %s %s is out of range", d.rt.Nullable(), types.FormatDecimal(x, d.s1), d.op, types.FormatDecimal(y, d.s2))
}

func (d *decOp) slow(xn, yn decimal128.Num) (decimal128.Num, error) {
	x, y := xn.BigInt(), yn.BigInt()
	rs := d.rt.Scale
	var v *big.Int
	switch d.op {
	case "+", "-", "%":
		s := max(d.s1, d.s2)
		xa := bigRescale(x, d.s1, s)
		ya := bigRescale(y, d.s2, s)
		switch d.op {
		case "+":
			v = xa.Add(xa, ya)
		case "-":
			v = xa.Sub(xa, ya)
		case "%":
			if ya.Sign() == 0 {
				return decimal128.Num{}, d.divZero(xn)
			}
			v = xa.Rem(xa, ya)
		}
		v = bigRescale(v, s, rs)
	case "*":
		v = bigRescale(x.Mul(x, y), d.s1+d.s2, rs)
	case "/":
		if y.Sign() == 0 {
			return decimal128.Num{}, d.divZero(xn)
		}
		k := rs - d.s1 + d.s2
		if k >= 0 {
			v = bigDivHalfUp(x.Mul(x, pow10Big[k]), y)
		} else {
			v = bigDivHalfUp(x, y.Mul(y, pow10Big[-k]))
		}
	}
	r, ok := bigToNum(v, d.rt.Precision)
	if !ok {
		return r, d.overflow(xn, yn)
	}
	return r, nil
}

// decimalArith is op over DECIMAL args of types a and b giving rt.
func decimalArith(op string, a, b, rt types.T) Kernel {
	d := &decOp{op: op, s1: a.Scale, s2: b.Scale, rt: rt}
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var oa, ob [1]decimal128.Num
		x, xm := operand(args[0], &oa)
		y, ym := operand(args[1], &ob)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[decimal128.Num](mem, n)
		for i := range out {
			if !val.valid(i) {
				out[i] = decimal128.Num{}
				continue
			}
			r, err := d.apply(x[i&xm], y[i&ym])
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			out[i] = r
		}
		return finish(rt, n, val, buf), nil
	}
}

// decUnary maps a DECIMAL arg of type t to a DECIMAL of type rt.
func decUnary(t, rt types.T, f func(decimal128.Num) (decimal128.Num, error)) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		x := values[decimal128.Num](args[0].Array)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[decimal128.Num](mem, n)
		for i := range out {
			if !val.valid(i) {
				out[i] = decimal128.Num{}
				continue
			}
			r, err := f(x[i])
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			out[i] = r
		}
		return finish(rt, n, val, buf), nil
	})
}
