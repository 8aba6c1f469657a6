package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// SUM and AVG: a count of values and a running sum, in an int64 for
// integer arguments, a float64 for floating ones, 128 bits for decimals.
// Retraction subtracts. The sum may leave the result's range on the way
// (a retraction can bring it back): the result is checked when computed.

type sumIntAcc struct {
	c   *planner.AggCall
	avg bool
	n   int64
	s   int64
}

func (a *sumIntAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	s, ok := addInt(a.s, v.i, sign)
	if !ok {
		return accOverflow(a.c)
	}
	a.s, a.n = s, a.n+sign
	return nil
}

func (a *sumIntAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*sumIntAcc)
	s, ok := addInt(a.s, o.s, 1)
	if !ok {
		return accOverflow(a.c)
	}
	a.s, a.n = s, a.n+o.n
	return nil
}

func (a *sumIntAcc) result(dst *scalar) error {
	if a.n <= 0 {
		dst.null = true
		return nil
	}
	dst.null = false
	if a.avg {
		dst.i = a.s / a.n
		return nil
	}
	if !fitsKind(a.s, a.c.T.Kind) {
		return fmt.Errorf("%w: %s overflows %s: the sum %d is out of its range", ErrOverflow, a.c.Text, a.c.T.Nullable(), a.s)
	}
	dst.i = a.s
	return nil
}

func (a *sumIntAcc) encode(dst []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, a.n), a.s)
}
func (a *sumIntAcc) decode(d *decoder) { a.n, a.s = d.varint(), d.varint() }
func (a *sumIntAcc) reset()            { a.n, a.s = 0, 0 }

type sumFloatAcc struct {
	avg bool
	n   int64
	s   float64
}

func (a *sumFloatAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	a.s += v.f * float64(sign)
	a.n += sign
	return nil
}

func (a *sumFloatAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*sumFloatAcc)
	a.s, a.n = a.s+o.s, a.n+o.n
	return nil
}

func (a *sumFloatAcc) result(dst *scalar) error {
	if a.n <= 0 {
		dst.null = true
		return nil
	}
	dst.null, dst.f = false, a.s
	if a.avg {
		dst.f = a.s / float64(a.n)
	}
	return nil
}

func (a *sumFloatAcc) encode(dst []byte) []byte {
	return appendFloat(binary.AppendVarint(dst, a.n), a.s)
}
func (a *sumFloatAcc) decode(d *decoder) { a.n, a.s = d.varint(), d.float() }
func (a *sumFloatAcc) reset()            { a.n, a.s = 0, 0 }

type sumDecAcc struct {
	c   *planner.AggCall
	avg bool
	n   int64
	s   decimal128.Num
}

func (a *sumDecAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	s, ok := addDecimal(a.s, v.d, sign)
	if !ok {
		return accOverflow(a.c)
	}
	a.s, a.n = s, a.n+sign
	return nil
}

func (a *sumDecAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*sumDecAcc)
	s, ok := addDecimal(a.s, o.s, 1)
	if !ok {
		return accOverflow(a.c)
	}
	a.s, a.n = s, a.n+o.n
	return nil
}

func (a *sumDecAcc) result(dst *scalar) error {
	c := a.c
	if a.n <= 0 {
		dst.null = true
		return nil
	}
	dst.null = false
	if !a.avg {
		if !a.s.FitsInPrecision(int32(c.T.Precision)) {
			return fmt.Errorf("%w: %s overflows %s: the sum %s has more than %d digits", ErrOverflow, c.Text, c.T.Nullable(), types.FormatDecimal(a.s, c.ArgT.Scale), c.T.Precision)
		}
		dst.d = a.s
		return nil
	}
	avg, ok := avgDecimal(a.s, a.n, c.T.Scale-c.ArgT.Scale, c.T.Precision)
	if !ok {
		return fmt.Errorf("%w: %s overflows %s: the average of %d values summing to %s has more than %d integer digits", ErrOverflow, c.Text, c.T.Nullable(), a.n, types.FormatDecimal(a.s, c.ArgT.Scale), c.T.Precision-c.T.Scale)
	}
	dst.d = avg
	return nil
}

func (a *sumDecAcc) encode(dst []byte) []byte {
	return appendDecimal(binary.AppendVarint(dst, a.n), a.s)
}
func (a *sumDecAcc) decode(d *decoder) { a.n, a.s = d.varint(), d.decimal() }
func (a *sumDecAcc) reset()            { a.n, a.s = 0, decimal128.Num{} }
