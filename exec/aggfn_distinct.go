package exec

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/state"
)

// distinctAcc is an aggregate over DISTINCT values (COUNT, SUM, AVG, ...):
// a counted set of the values seen, and the inner aggregate over the
// values whose count went from 0 to 1 (accumulated) or 1 to 0
// (retracted). The group aggregate keeps the set in its value key space
// (spaced), so a checkpoint writes only the changed values; window and
// session aggregates keep it inline, encoded with the accumulator.
type distinctAcc struct {
	inner    accumulator
	innerTag byte
	cls      byte
	spaced   bool
	ref      state.SetRef
	dref     distinctRef // the shared set, in the accumulator of its first aggregate
	inline   map[string]int64
	v        aggValue
}

func (a *distinctAcc) add(x *foldCtx, v *aggValue, sign int64) error {
	k := v.ordered()
	var n int64
	if a.spaced {
		set, err := x.set(&a.ref)
		if err != nil {
			return err
		}
		if sign < 0 && x.lenient && set.Count(k) == 0 {
			return nil
		}
		if n, err = x.sets.Add(set, k, sign); err != nil {
			return err
		}
	} else {
		n = a.inline[string(k)] + sign
		switch {
		case n < 0:
			return fmt.Errorf("retraction of a DISTINCT value never added")
		case n == 0:
			delete(a.inline, string(k))
		default:
			if a.inline == nil {
				a.inline = map[string]int64{}
			}
			a.inline[string(k)] = n
		}
	}
	if (sign > 0 && n == 1) || (sign < 0 && n == 0) {
		return a.inner.add(x, v, sign)
	}
	return nil
}

// merge adds src's values to the set; those new to it reach the inner
// aggregate, so a value both saw counts once.
func (a *distinctAcc) merge(x *foldCtx, src accumulator) error {
	o := src.(*distinctAcc)
	if a.spaced || o.spaced {
		return fmt.Errorf("DISTINCT aggregates in a key space cannot be merged")
	}
	for k, n := range o.inline {
		old := a.inline[k]
		if a.inline == nil {
			a.inline = map[string]int64{}
		}
		a.inline[k] = old + n
		if old == 0 {
			if err := a.v.fromOrdered(a.cls, k); err != nil {
				return err
			}
			if err := a.inner.add(x, &a.v, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *distinctAcc) result(dst *scalar) error { return a.inner.result(dst) }

func (a *distinctAcc) encode(dst []byte) []byte {
	dst = append(dst, a.innerTag)
	dst = a.inner.encode(dst)
	if a.spaced {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(a.inline)))
	// In value order, so that equal state encodes to equal bytes.
	keys := make([]string, 0, len(a.inline))
	for k := range a.inline {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst = appendBytes(dst, []byte(k))
		dst = binary.AppendVarint(dst, a.inline[k])
	}
	return dst
}

func (a *distinctAcc) decode(d *decoder) {
	if tag := d.byte(); d.err == nil && tag != a.innerTag {
		d.incompatible("DISTINCT aggregate stored over %q, the query's over %q", tag, a.innerTag)
		return
	}
	a.inner.decode(d)
	if a.spaced {
		return
	}
	n := d.uvarint()
	if d.err != nil {
		return
	}
	a.inline = make(map[string]int64, min(n, 1<<16))
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := string(d.bytes())
		c := d.varint()
		if c <= 0 && d.err == nil {
			d.incompatible("DISTINCT value counted %d times", c)
		}
		a.inline[k] = c
	}
}

func (a *distinctAcc) reset() {
	a.inner.reset()
	a.ref, a.dref = state.SetRef{}, distinctRef{}
	clear(a.inline)
}
