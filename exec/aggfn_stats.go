package exec

import (
	"encoding/binary"
	"math"

	"github.com/streamsql/streamsql/planner"
)

// varAcc is VAR_POP, VAR_SAMP, STDDEV_POP and STDDEV_SAMP, in float64 by
// Welford's method: the count, the mean and the sum of squared deviations
// (m2). A retraction runs the update backwards; merging two (sessions)
// uses Chan's formula. VAR_SAMP and STDDEV_SAMP of one value are NULL, as
// every result of no value.
type varAcc struct {
	fn   planner.AggFunc
	n    int64
	mean float64
	m2   float64
}

func (a *varAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	x := v.float64()
	if sign > 0 {
		a.n++
		d := x - a.mean
		a.mean += d / float64(a.n)
		a.m2 += d * (x - a.mean)
		return nil
	}
	if a.n <= 1 {
		a.n, a.mean, a.m2 = 0, 0, 0
		return nil
	}
	old := a.mean
	a.n--
	a.mean = (old*float64(a.n+1) - x) / float64(a.n)
	a.m2 -= (x - old) * (x - a.mean)
	if a.m2 < 0 {
		a.m2 = 0 // rounding
	}
	return nil
}

func (a *varAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*varAcc)
	if o.n == 0 {
		return nil
	}
	if a.n == 0 {
		a.n, a.mean, a.m2 = o.n, o.mean, o.m2
		return nil
	}
	n := a.n + o.n
	d := o.mean - a.mean
	a.mean += d * float64(o.n) / float64(n)
	a.m2 += o.m2 + d*d*float64(a.n)*float64(o.n)/float64(n)
	a.n = n
	return nil
}

func (a *varAcc) result(dst *scalar) error {
	samp := a.fn == planner.AggVarSamp || a.fn == planner.AggStddevSamp
	if a.n == 0 || (samp && a.n == 1) {
		dst.null = true
		return nil
	}
	d := float64(a.n)
	if samp {
		d--
	}
	r := a.m2 / d
	if a.fn == planner.AggStddevPop || a.fn == planner.AggStddevSamp {
		r = math.Sqrt(r)
	}
	dst.null, dst.f = false, r
	return nil
}

func (a *varAcc) encode(dst []byte) []byte {
	return appendFloat(appendFloat(binary.AppendVarint(dst, a.n), a.mean), a.m2)
}
func (a *varAcc) decode(d *decoder) { a.n, a.mean, a.m2 = d.varint(), d.float(), d.float() }
func (a *varAcc) reset()            { a.n, a.mean, a.m2 = 0, 0, 0 }

// float64 is the value as a float64 (the statistics' arithmetic; the
// planner casts a DECIMAL argument to DOUBLE).
func (v *aggValue) float64() float64 {
	if v.cls == 'i' {
		return float64(v.i)
	}
	return v.f
}
