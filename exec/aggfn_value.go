package exec

import (
	"encoding/binary"
	"fmt"
)

// FIRST_VALUE, LAST_VALUE and LISTAGG depend on the order of their input,
// which a retraction cannot undo without keeping every row: the planner
// refuses them over an updating input. NULL values are skipped, as in
// Flink.

// firstLastAcc is FIRST_VALUE or LAST_VALUE: the first (last) non-NULL
// value in arrival order, kept in its ordered encoding.
type firstLastAcc struct {
	cls   byte
	last  bool
	valid bool
	cur   []byte
	v     aggValue
}

func (a *firstLastAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("FIRST_VALUE/LAST_VALUE received a retraction")
	}
	if !a.valid || a.last {
		a.cur, a.valid = append(a.cur[:0], v.ordered()...), true
	}
	return nil
}

// merge: src is the later session (sessions merge in time order only
// approximately: FIRST_VALUE keeps this one's value, LAST_VALUE src's).
func (a *firstLastAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*firstLastAcc)
	if o.valid && (!a.valid || a.last) {
		a.cur, a.valid = append(a.cur[:0], o.cur...), true
	}
	return nil
}

func (a *firstLastAcc) result(dst *scalar) error {
	if !a.valid {
		dst.null = true
		return nil
	}
	if err := a.v.fromOrdered(a.cls, unsafeString(a.cur)); err != nil {
		return err
	}
	dst.setValue(&a.v)
	return nil
}

func (a *firstLastAcc) encode(dst []byte) []byte {
	if !a.valid {
		return append(dst, 0)
	}
	return appendBytes(append(dst, 1), a.cur)
}

func (a *firstLastAcc) decode(d *decoder) {
	a.valid = d.bool()
	a.cur = a.cur[:0]
	if a.valid {
		a.cur = append(a.cur, d.bytes()...)
	}
}

func (a *firstLastAcc) reset() { a.valid, a.cur = false, a.cur[:0] }

// listAggAcc is LISTAGG(s [, sep]): the non-NULL values in arrival order
// joined by sep.
type listAggAcc struct {
	sep string
	n   int64
	buf []byte
}

func (a *listAggAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("LISTAGG received a retraction")
	}
	if a.n > 0 {
		a.buf = append(a.buf, a.sep...)
	}
	a.buf = append(a.buf, v.s...)
	a.n++
	return nil
}

func (a *listAggAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*listAggAcc)
	if o.n == 0 {
		return nil
	}
	if a.n > 0 {
		a.buf = append(a.buf, a.sep...)
	}
	a.buf = append(a.buf, o.buf...)
	a.n += o.n
	return nil
}

func (a *listAggAcc) result(dst *scalar) error {
	if a.n == 0 {
		dst.null = true
		return nil
	}
	dst.null, dst.b = false, append(dst.b[:0], a.buf...)
	return nil
}

func (a *listAggAcc) encode(dst []byte) []byte {
	return appendBytes(binary.AppendVarint(dst, a.n), a.buf)
}

func (a *listAggAcc) decode(d *decoder) {
	a.n = d.varint()
	a.buf = append(a.buf[:0], d.bytes()...)
}

func (a *listAggAcc) reset() { a.n, a.buf = 0, a.buf[:0] }
