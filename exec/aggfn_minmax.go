package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/state"
)

// minMaxAcc is MIN or MAX. The current extreme is kept in its
// order-preserving encoding (aggValue.ordered), so one comparison serves
// every type. Over an updating input (retract) it also keeps every value
// with its count in a sorted set in the operator's value key space (as
// Flink's MinWithRetractAggFunction keeps a MapView): a retraction of the
// current extreme reads the next one from the set in logarithmic time;
// other retractions only decrement a count.
type minMaxAcc struct {
	orderedCell
	isMax   bool
	retract bool
	ref     state.SetRef
}

func (a *minMaxAcc) beyond(k []byte) bool {
	if !a.valid {
		return true
	}
	if a.isMax {
		return string(k) > string(a.cur)
	}
	return string(k) < string(a.cur)
}

func (a *minMaxAcc) add(x *foldCtx, v *aggValue, sign int64) error {
	k := v.ordered()
	if !a.retract {
		if sign < 0 {
			return fmt.Errorf("MIN/MAX over an append-only input received a retraction")
		}
		if a.beyond(k) {
			a.cur, a.valid = append(a.cur[:0], k...), true
		}
		return nil
	}
	set, err := x.set(&a.ref)
	if err != nil {
		return err
	}
	if sign < 0 && x.lenient && set.Count(k) == 0 {
		return nil
	}
	n, err := x.sets.Add(set, k, sign)
	if err != nil {
		return err
	}
	if sign > 0 {
		if a.beyond(k) {
			a.cur, a.valid = append(a.cur[:0], k...), true
		}
		return nil
	}
	if n == 0 && a.valid && string(k) == string(a.cur) {
		var next string
		var ok bool
		if a.isMax {
			next, ok = set.Max()
		} else {
			next, ok = set.Min()
		}
		a.cur, a.valid = append(a.cur[:0], next...), ok
	}
	return nil
}

func (a *minMaxAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*minMaxAcc)
	if a.retract {
		return fmt.Errorf("MIN/MAX over an updating input cannot be merged")
	}
	if o.valid && a.beyond(o.cur) {
		a.cur, a.valid = append(a.cur[:0], o.cur...), true
	}
	return nil
}

func (a *minMaxAcc) reset() { a.valid, a.cur, a.ref = false, a.cur[:0], state.SetRef{} }

// minMaxIntAcc is MIN or MAX of an integer-like argument over an
// append-only input (the window aggregates' common case): an int64
// compare, no encoding.
type minMaxIntAcc struct {
	isMax bool
	valid bool
	cur   int64
}

func (a *minMaxIntAcc) offer(v int64) {
	if !a.valid || (a.isMax && v > a.cur) || (!a.isMax && v < a.cur) {
		a.cur, a.valid = v, true
	}
}

func (a *minMaxIntAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("MIN/MAX over an append-only input received a retraction")
	}
	a.offer(v.i)
	return nil
}

func (a *minMaxIntAcc) merge(_ *foldCtx, src accumulator) error {
	if o := src.(*minMaxIntAcc); o.valid {
		a.offer(o.cur)
	}
	return nil
}

func (a *minMaxIntAcc) result(dst *scalar) error {
	dst.null, dst.i = !a.valid, a.cur
	return nil
}

func (a *minMaxIntAcc) encode(dst []byte) []byte {
	if !a.valid {
		return append(dst, 0)
	}
	return binary.AppendVarint(append(dst, 1), a.cur)
}

func (a *minMaxIntAcc) decode(d *decoder) {
	a.valid, a.cur = d.bool(), 0
	if a.valid {
		a.cur = d.varint()
	}
}

func (a *minMaxIntAcc) reset() { a.valid, a.cur = false, 0 }
