package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/functions"
)

// FIRST_VALUE, LAST_VALUE and LISTAGG depend on the order of their input,
// which a retraction cannot undo without keeping every row: the planner
// refuses them over an updating input. NULL values are skipped, as in
// Flink.

// firstLastAcc is FIRST_VALUE or LAST_VALUE: the first (last) non-NULL
// value in arrival order, kept in its ordered encoding.
type firstLastAcc struct {
	orderedCell
	last bool
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

// orderedCell is an optional value of class cls in its order-preserving
// encoding (aggfn.go's orderedKey): the state of MIN/MAX and of
// FIRST_VALUE/LAST_VALUE. Its encoding is a presence byte, then the
// value's bytes.
type orderedCell struct {
	cls   byte
	valid bool
	cur   []byte
	v     aggValue
}

func (c *orderedCell) result(dst *scalar) error {
	if !c.valid {
		dst.null = true
		return nil
	}
	if err := c.v.fromOrdered(c.cls, unsafeString(c.cur)); err != nil {
		return err
	}
	dst.setValue(&c.v)
	return nil
}

func (c *orderedCell) encode(dst []byte) []byte {
	if !c.valid {
		return append(dst, 0)
	}
	return appendBytes(append(dst, 1), c.cur)
}

// decode reads what encode wrote; a value of another length than its class
// has is an incompatible state.
func (c *orderedCell) decode(d *decoder) {
	c.valid = d.bool()
	c.cur = c.cur[:0]
	if c.valid {
		c.cur = append(c.cur, d.bytes()...)
		if c.cls != 's' && len(c.cur) != orderedLen(c.cls) {
			d.incompatible("a value of %d bytes", len(c.cur))
		}
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

// jsonAggAcc is JSON_ARRAYAGG or JSON_OBJECTAGG: its argument is each
// row's JSON_ARRAY(v) or JSON_OBJECT(k, v) text, whose members (none when
// ABSENT ON NULL left out a NULL) are joined in arrival order into one
// array or object; no rows give [] or {}. A key of JSON_OBJECTAGG seen
// again keeps its first place and takes the last value, as Flink's map.
type jsonAggAcc struct {
	object bool
	listAggAcc
}

func (a *jsonAggAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("JSON_ARRAYAGG/JSON_OBJECTAGG received a retraction")
	}
	if len(v.s) <= 2 {
		return nil // [] or {}: a NULL left out
	}
	if a.n > 0 {
		a.buf = append(a.buf, ',')
	}
	a.buf = append(a.buf, v.s[1:len(v.s)-1]...)
	a.n++
	return nil
}

func (a *jsonAggAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*jsonAggAcc)
	a.sep = ","
	return a.listAggAcc.merge(nil, &o.listAggAcc)
}

func (a *jsonAggAcc) result(dst *scalar) error {
	open, close := byte('['), byte(']')
	if a.object {
		open, close = '{', '}'
	}
	b := append(append(append(dst.b[:0], open), a.buf...), close)
	if a.object && a.n > 1 {
		s, err := functions.JSONObjectLastWins(string(b))
		if err != nil {
			return err
		}
		b = append(b[:0], s...)
	}
	dst.null, dst.b = false, b
	return nil
}
