package functions

import (
	"math"

	"github.com/streamsql/streamsql/types"
)

// resolveTemporalArith resolves t ± iv (or iv + t when swapped): TIMESTAMP,
// DATE or TIME plus or minus an interval gives the temporal type. A
// day-time interval added to a DATE adds its whole days; a year-month
// interval added to a TIME is an error.
func resolveTemporalArith(op string, t, iv types.T, swapped bool) (Resolved, error) {
	if t.Kind == types.Time && iv.Kind == types.IntervalYearMonth {
		return Resolved{}, errArgs(op, []types.T{t, iv})
	}
	rt := t.Nullable()
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	var k Kernel
	ivT := iv.Nullable()
	switch t.Kind {
	case types.Timestamp:
		if iv.Kind == types.IntervalDayTime {
			k = tsPlusMillis(rt, ivT, sign, swapped)
		} else {
			k = temporalMap(rt, ivT, sign, swapped, func(us, months int64) (int64, bool) {
				if months < -spanMonths || months > spanMonths {
					return 0, false
				}
				r := addMonthsMicros(us, months)
				return r, inRangeMicros(r)
			})
		}
	case types.Date:
		if iv.Kind == types.IntervalDayTime {
			k = temporalMap32(rt, ivT, sign, swapped, func(d, ms int64) (int64, bool) {
				if ms < -spanMillis || ms > spanMillis {
					return 0, false
				}
				r := d + ms/msPerDay
				return r, inRangeDays(r)
			})
		} else {
			k = temporalMap32(rt, ivT, sign, swapped, func(d, months int64) (int64, bool) {
				if months < -spanMonths || months > spanMonths {
					return 0, false
				}
				r := addMonthsDays(d, months)
				return r, inRangeDays(r)
			})
		}
	case types.Time:
		k = temporalMap32(rt, ivT, sign, swapped, func(t, ms int64) (int64, bool) { return floorMod(t+ms%msPerDay, msPerDay), true })
	}
	ats := []types.T{t.Nullable(), iv.Nullable()}
	if swapped {
		ats[0], ats[1] = ats[1], ats[0]
	}
	return Resolved{Ret: rt, ArgTypes: ats, Kernel: k}, nil
}

// tsPlusMillis is the hot TIMESTAMP ± day-time interval (watermarks). It
// fails when a result leaves the supported range; an interval longer than
// that range is refused before it is scaled to micros, so nothing wraps.
func tsPlusMillis(rt, ivT types.T, sign int64, swapped bool) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		ta, ia := args[0], args[1]
		if swapped {
			ta, ia = ia, ta
		}
		var o1, o2 [1]int64
		ts, tm := operand(ta, &o1)
		iv, im := operand(ia, &o2)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		f := sign * 1000
		// The loop only tracks the smallest and largest result and
		// interval (no branch); only when they leave the range is each
		// valid row checked, for the error. An interval within the span
		// keeps x + y*f from wrapping for any x in range.
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		ylo, yhi := int64(math.MaxInt64), int64(math.MinInt64)
		if im == 0 {
			ylo, yhi = iv[0], iv[0]
			y := iv[0] * f
			ts = ts[:len(out)]
			for i := range out {
				r := ts[i] + y
				out[i] = r
				lo, hi = min(lo, r), max(hi, r)
			}
		} else {
			for i := range out {
				y := iv[i&im]
				r := ts[i&tm] + y*f
				out[i] = r
				lo, hi = min(lo, r), max(hi, r)
				ylo, yhi = min(ylo, y), max(yhi, y)
			}
		}
		bad := n > 0 && (lo < minMicros || hi > maxMicros || ylo < -spanMillis || yhi > spanMillis)
		if bad {
			for i := range n {
				x, y := ts[i&tm], iv[i&im]
				if val.valid(i) && (uint64(y+spanMillis) > uint64(2*spanMillis) || !inRangeMicros(x+y*f)) {
					val.release()
					buf.Release()
					return Vec{}, rangeErr(rt, x, signOp(sign), ivT, y)
				}
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

func signOp(sign int64) string {
	if sign < 0 {
		return "-"
	}
	return "+"
}

// temporalMap computes f(t, sign*iv) over an int64 temporal and an
// interval; f reports false when the result is out of range.
func temporalMap(rt, ivT types.T, sign int64, swapped bool, f func(t, iv int64) (int64, bool)) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		ta, ia := args[0], args[1]
		if swapped {
			ta, ia = ia, ta
		}
		var o1, o2 [1]int64
		ts, tm := operand(ta, &o1)
		iv, im := operand(ia, &o2)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		for i := range out {
			if val.valid(i) {
				r, ok := f(ts[i&tm], sign*iv[i&im])
				if !ok {
					val.release()
					buf.Release()
					return Vec{}, rangeErr(rt, ts[i&tm], signOp(sign), ivT, iv[i&im])
				}
				out[i] = r
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

// temporalMap32 is temporalMap for DATE and TIME (int32) values.
func temporalMap32(rt, ivT types.T, sign int64, swapped bool, f func(t, iv int64) (int64, bool)) Kernel {
	return strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		ta, ia := args[0], args[1]
		if swapped {
			ta, ia = ia, ta
		}
		var o1 [1]int32
		var o2 [1]int64
		ts, tm := operand(ta, &o1)
		iv, im := operand(ia, &o2)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int32](mem, n)
		for i := range out {
			if val.valid(i) {
				r, ok := f(int64(ts[i&tm]), sign*iv[i&im])
				if !ok {
					val.release()
					buf.Release()
					return Vec{}, rangeErr(rt, int64(ts[i&tm]), signOp(sign), ivT, iv[i&im])
				}
				out[i] = int32(r)
			}
		}
		return finish(rt, n, val, buf), nil
	})
}
