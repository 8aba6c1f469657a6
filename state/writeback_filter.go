package state

import (
	"bytes"

	"github.com/cespare/xxhash/v2"
)

// writeBackFilter tells the keys an asynchronous checkpoint's queued
// write-back cannot change, so that a read of one goes to the instance
// at once instead of waiting until the write-back is committed: a bloom
// filter of the queued batches' keys (10 bits a key, 7 probes: about 1%
// of the keys it lacks still wait) and the queued range deletions.
//
// A key not in the write-back has, in the instance, the value it had at
// the barrier, and the writes since are in the held batch over it; the
// write-back's commit touches only its own keys.
type writeBackFilter struct {
	bits   []uint64
	ranges [][2][]byte
}

// newFilterBits returns a filter of n bits and no range.
func newFilterBits(n int) *writeBackFilter { return &writeBackFilter{bits: make([]uint64, (n+63)/64)} }

const writeBackProbes = 7

// newWriteBackFilter returns the filter of q, built on the store's
// goroutine before the checkpoint's goroutine starts with q.
func newWriteBackFilter(q []queuedWrite) *writeBackFilter {
	n := 0
	f := &writeBackFilter{}
	for _, w := range q {
		if w.batch == nil {
			f.ranges = append(f.ranges, [2][]byte{w.lo, w.hi})
			continue
		}
		n += w.batch.Len()
	}
	if n == 0 {
		return f
	}
	f.bits = make([]uint64, (n*10+63)/64)
	var k []byte
	for _, w := range q {
		if w.batch == nil {
			continue
		}
		b := w.batch
		for i := range b.ops {
			op := &b.ops[i]
			k = append(kgAppend(k[:0], op.kg), b.key(op)...)
			f.add(k)
		}
	}
	return f
}

func kgAppend(dst []byte, kg int) []byte { return append(dst, byte(kg>>8), byte(kg)) }

// probe returns the i-th bit of key's probes (double hashing).
func (f *writeBackFilter) probe(h uint64, i uint64) (word int, mask uint64) {
	bit := (h + i*(h>>32|h<<32|1)) % (uint64(len(f.bits)) * 64)
	return int(bit / 64), 1 << (bit % 64)
}

// addRange records a range deletion of [lo, hi).
func (f *writeBackFilter) addRange(lo, hi []byte) {
	f.ranges = append(f.ranges, [2][]byte{lo, hi})
}

func (f *writeBackFilter) add(key []byte) {
	h := xxhash.Sum64(key)
	for i := range uint64(writeBackProbes) {
		w, m := f.probe(h, i)
		f.bits[w] |= m
	}
}

// mayHold reports whether the write-back may change key (a store key:
// key group prefix, then the key).
func (f *writeBackFilter) mayHold(key []byte) bool {
	for _, r := range f.ranges {
		if bytes.Compare(key, r[0]) >= 0 && bytes.Compare(key, r[1]) < 0 {
			return true
		}
	}
	if len(f.bits) == 0 {
		return false
	}
	h := xxhash.Sum64(key)
	for i := range uint64(writeBackProbes) {
		if w, m := f.probe(h, i); f.bits[w]&m == 0 {
			return false
		}
	}
	return true
}

// lookupRuns returns the value the sorted runs (sortedRun) give key of
// key group kg: the last run's operation on it (found; deleted for a
// delete), or found false if none has one.
func lookupRuns(runs []*WriteBatch, kg int, key []byte) (value []byte, deleted, found bool) {
	for r := len(runs) - 1; r >= 0; r-- {
		b := runs[r]
		lo, hi := 0, len(b.ops)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			op := &b.ops[m]
			c := op.kg - kg
			if c == 0 {
				c = bytes.Compare(b.key(op), key)
			}
			if c < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(b.ops) {
			if op := &b.ops[lo]; op.kg == kg && bytes.Equal(b.key(op), key) {
				if op.del {
					return nil, true, true
				}
				return b.value(op), false, true
			}
		}
	}
	return nil, false, false
}
