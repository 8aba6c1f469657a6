package functions

import (
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
	switch t.Kind {
	case types.Timestamp:
		if iv.Kind == types.IntervalDayTime {
			k = tsPlusMillis(rt, sign, swapped)
		} else {
			k = temporalMap(rt, sign, swapped, func(us, months int64) int64 { return addMonthsMicros(us, months) })
		}
	case types.Date:
		if iv.Kind == types.IntervalDayTime {
			k = temporalMap32(rt, sign, swapped, func(d, ms int64) int64 { return d + ms/msPerDay })
		} else {
			k = temporalMap32(rt, sign, swapped, addMonthsDays)
		}
	case types.Time:
		k = temporalMap32(rt, sign, swapped, func(t, ms int64) int64 { return floorMod(t+ms, msPerDay) })
	}
	ats := []types.T{t.Nullable(), iv.Nullable()}
	if swapped {
		ats[0], ats[1] = ats[1], ats[0]
	}
	return Resolved{Ret: rt, ArgTypes: ats, Kernel: k}, nil
}

// tsPlusMillis is the hot TIMESTAMP ± day-time interval (watermarks).
func tsPlusMillis(rt types.T, sign int64, swapped bool) Kernel {
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
		for i := range out {
			out[i] = ts[i&tm] + iv[i&im]*f
		}
		return finish(rt, n, val, buf), nil
	})
}

// temporalMap computes f(t, sign*iv) over an int64 temporal and an interval.
func temporalMap(rt types.T, sign int64, swapped bool, f func(t, iv int64) int64) Kernel {
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
				out[i] = f(ts[i&tm], sign*iv[i&im])
			}
		}
		return finish(rt, n, val, buf), nil
	})
}

// temporalMap32 is temporalMap for DATE and TIME (int32) values.
func temporalMap32(rt types.T, sign int64, swapped bool, f func(t, iv int64) int64) Kernel {
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
				out[i] = int32(f(int64(ts[i&tm]), sign*iv[i&im]))
			}
		}
		return finish(rt, n, val, buf), nil
	})
}
