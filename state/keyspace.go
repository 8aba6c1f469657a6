package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RaduBerinde/btreemap"
)

// KeySpace is one named part of a Store's keys, so that an operator can
// keep several kinds of keyed state (its groups, the value sets of its
// MIN/MAX and DISTINCT aggregates, later a join's two sides), each with
// its own codec, in one store. A space's keys are prefixed by its one-byte
// id under the key group, so restoring and rescaling by key group carry
// every space along. Ids are part of the state format: an operator gives
// each of its spaces a fixed id. Id 0 is, by convention, the operator's
// small per-key-group metadata (watermark, state layout).
type KeySpace struct {
	store  Store
	prefix []byte // nil: the store's keys as they are (NewCache)
	name   string
	buf    []byte
	// sbuf and skeys are GetSorted's prefixed keys.
	sbuf  []byte
	skeys [][]byte
}

// NewKeySpace returns the key space id, called name in errors, of store.
func NewKeySpace(store Store, id byte, name string) *KeySpace {
	return &KeySpace{store: store, prefix: []byte{id}, name: name}
}

// Name is the space's name.
func (s *KeySpace) Name() string { return s.name }

// Store is the store the space is part of.
func (s *KeySpace) Store() Store { return s.store }

func (s *KeySpace) key(key []byte) []byte {
	if s.prefix == nil {
		return key
	}
	s.buf = append(append(s.buf[:0], s.prefix...), key...)
	return s.buf
}

// Get returns the value of key in key group kg, as Store.Get.
func (s *KeySpace) Get(kg int, key []byte) ([]byte, bool, error) {
	return s.store.Get(kg, s.key(key))
}

// GetSorted reads keys (keys[i] in key group kgs[i], in key group then
// key order, without repeats) of the space together (state.GetSorted).
func (s *KeySpace) GetSorted(kgs []int, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if s.prefix == nil {
		return GetSorted(s.store, kgs, keys, fn)
	}
	s.sbuf = s.sbuf[:0]
	for _, k := range keys {
		s.sbuf = append(append(s.sbuf, s.prefix...), k...)
	}
	s.skeys = s.skeys[:0]
	off := 0
	for _, k := range keys {
		n := len(s.prefix) + len(k)
		s.skeys = append(s.skeys, s.sbuf[off:off+n:off+n])
		off += n
	}
	return GetSorted(s.store, kgs, s.skeys, fn)
}

// Put records in b a put of key in the space.
func (s *KeySpace) Put(b *WriteBatch, kg int, key, value []byte) {
	b.Put(kg, s.key(key), value)
}

// Delete records in b a delete of key in the space.
func (s *KeySpace) Delete(b *WriteBatch, kg int, key []byte) {
	b.Delete(kg, s.key(key))
}

// ApplyPart hands b to the store and empties it when it holds a part's
// worth (PartOps operations or PartBytes bytes), so that writing back
// many entries (a flush, an eviction) holds one part in memory, not all
// of them. The store is a working copy: the parts of one flush need not
// be applied atomically (a restore reads checkpoints, which are taken
// after the whole flush).
func (s *KeySpace) ApplyPart(b *WriteBatch) error {
	if len(b.ops) < PartOps && len(b.buf) < PartBytes {
		return nil
	}
	if err := s.store.Apply(b); err != nil {
		return err
	}
	b.Reset()
	return nil
}

// A write-back part (KeySpace.ApplyPart): at most PartOps operations or
// PartBytes bytes of keys and values.
const (
	PartOps   = 16 << 10
	PartBytes = 4 << 20
)

// Scan calls fn for every entry of the space, in key group then key
// order, with the key without the space's prefix.
func (s *KeySpace) Scan(fn func(kg int, key, value []byte) error) error {
	p := s.prefix
	return s.store.Scan(func(kg int, k, v []byte) error {
		if len(k) < len(p) || string(k[:len(p)]) != string(p) {
			return nil
		}
		return fn(kg, k[len(p):], v)
	})
}

// ScanPrefix calls fn, in key order, for every entry of the space in key
// group kg whose key starts with prefix (keys without the space's prefix).
func (s *KeySpace) ScanPrefix(kg int, prefix []byte, fn func(key, value []byte) error) error {
	p := append(append([]byte(nil), s.prefix...), prefix...)
	return s.store.ScanPrefix(kg, p, func(k, v []byte) error { return fn(k[len(s.prefix):], v) })
}

// ScanRange calls fn, in key order, for every entry of the space in key
// group kg whose key is in [start, end) (keys without the space's prefix;
// end nil: to the end of the space).
func (s *KeySpace) ScanRange(kg int, start, end []byte, fn func(key, value []byte) error) error {
	lo := append(append([]byte(nil), s.prefix...), start...)
	var hi []byte
	if end != nil {
		hi = append(append([]byte(nil), s.prefix...), end...)
	} else {
		hi = PrefixEnd(s.prefix)
	}
	return s.store.ScanRange(kg, lo, hi, func(k, v []byte) error { return fn(k[len(s.prefix):], v) })
}

// DeleteRange deletes every entry of the space in key group kg whose key
// is in [start, end) (keys without the space's prefix; end nil: to the
// end of the space), as Store.DeleteRange.
func (s *KeySpace) DeleteRange(kg int, start, end []byte) error {
	lo := append(append([]byte(nil), s.prefix...), start...)
	var hi []byte
	if end != nil {
		hi = append(append([]byte(nil), s.prefix...), end...)
	} else if s.prefix != nil {
		hi = PrefixEnd(s.prefix)
	}
	return s.store.DeleteRange(kg, lo, hi)
}

// DeletePrefix deletes every entry of the space in key group kg whose key
// starts with prefix (without the space's prefix), as one DeleteRange.
func (s *KeySpace) DeletePrefix(kg int, prefix []byte) error {
	return s.DeleteRange(kg, prefix, PrefixEnd(prefix))
}

// PrefixEnd is the first key after every key that starts with prefix (nil
// when there is none: prefix is all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// CountedSets are counted sets of byte values, one per owner (say, one
// aggregate of one group), kept in a key space: value v of owner o is the
// key o+v with its count. A set is loaded from the store on first use (one
// prefix scan of its owner) and then kept in memory in value order, so
// that the smallest and largest value are found in logarithmic time; its
// changed values are written back, in one batch, by Flush (at a checkpoint
// barrier). Between flushes the store is never read again for a loaded
// set, so CountedSets are the only path to their key space. Owners must be
// prefix-free (no owner a prefix of another).
//
// Used by one goroutine.
type CountedSets struct {
	space *KeySpace
	sets  map[string]*CountedSet
	dirty []*CountedSet
	// epoch changes whenever a set leaves the map (Flush forgets empty
	// sets, Drop all): a SetRef of an older epoch looks its set up again.
	epoch    uint64
	complete bool
	batch    WriteBatch
	buf      []byte
	vbuf     []byte
	codec    Codec[int64]
}

// CountedSet is one owner's counted set.
type CountedSet struct {
	owner  string
	kg     int
	counts map[string]*setValue
	order  *btreemap.BTreeMap[string, *setValue]
	dirty  []*setValue
	// listed: in CountedSets.dirty.
	listed bool
}

type setValue struct {
	v      string
	n      int64
	dirty  bool
	stored bool
}

// SetRef is an owner's cached reference to its set (see CountedSets.Lookup).
type SetRef struct {
	set   *CountedSet
	epoch uint64
}

// NewCountedSets returns the counted sets of space; codec encodes the
// counts (a versioned encoding: see the operator's state format).
func NewCountedSets(space *KeySpace, codec Codec[int64]) *CountedSets {
	return &CountedSets{space: space, sets: map[string]*CountedSet{}, codec: codec}
}

// StartsEmpty tells the sets that their store holds no value yet (as
// Cache.StartsEmpty): until Drop, a new set needs no store read.
func (c *CountedSets) StartsEmpty() { c.complete = true }

// Cached returns the set ref points at, if it is still in memory.
func (c *CountedSets) Cached(ref *SetRef) (*CountedSet, bool) {
	if ref.set != nil && ref.epoch == c.epoch {
		return ref.set, true
	}
	return nil, false
}

// Lookup returns the set of owner in key group kg, loading it from the
// store when it is not in memory, and points ref at it (see Cached).
func (c *CountedSets) Lookup(ref *SetRef, kg int, owner []byte) (*CountedSet, error) {
	if s, ok := c.Cached(ref); ok {
		return s, nil
	}
	s, err := c.get(kg, owner)
	if err != nil {
		return nil, err
	}
	ref.set, ref.epoch = s, c.epoch
	return s, nil
}

func (c *CountedSets) get(kg int, owner []byte) (*CountedSet, error) {
	if s, ok := c.sets[string(owner)]; ok {
		return s, nil
	}
	s := &CountedSet{owner: string(owner), kg: kg, counts: map[string]*setValue{},
		order: btreemap.New[string, *setValue](16, func(a, b string) int {
			switch {
			case a < b:
				return -1
			case a > b:
				return 1
			}
			return 0
		})}
	if !c.complete {
		err := c.space.ScanPrefix(kg, owner, func(k, v []byte) error {
			var n int64
			if err := c.codec.Decode(v, &n); err != nil {
				return err
			}
			if n <= 0 {
				return fmt.Errorf("%w: %s: value count %d", ErrCorrupt, c.space.name, n)
			}
			sv := &setValue{v: string(k[len(owner):]), n: n, stored: true}
			s.counts[sv.v] = sv
			s.order.ReplaceOrInsert(sv.v, sv)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	c.sets[s.owner] = s
	return s, nil
}

// Add adds delta (negative: removes) to the count of v and returns the
// new count. A count that would go negative is an error and changes
// nothing. No allocation unless v is new to the set.
func (c *CountedSets) Add(s *CountedSet, v []byte, delta int64) (int64, error) {
	sv := s.counts[string(v)]
	if sv == nil {
		if delta < 0 {
			return 0, fmt.Errorf("%s: removal of a value never added", c.space.name)
		}
		if delta == 0 {
			return 0, nil
		}
		sv = &setValue{v: string(v)}
		s.counts[sv.v] = sv
		s.order.ReplaceOrInsert(sv.v, sv)
	}
	if sv.n+delta < 0 {
		return sv.n, fmt.Errorf("%s: removal of a value more often than it was added", c.space.name)
	}
	sv.n += delta
	if sv.n == 0 {
		delete(s.counts, sv.v)
		s.order.Delete(sv.v)
	}
	if !sv.dirty {
		sv.dirty = true
		s.dirty = append(s.dirty, sv)
		if !s.listed {
			s.listed = true
			c.dirty = append(c.dirty, s)
		}
	}
	return sv.n, nil
}

// Count is the count of v in s (0: not in it).
func (s *CountedSet) Count(v []byte) int64 {
	if sv := s.counts[string(v)]; sv != nil {
		return sv.n
	}
	return 0
}

// Len is the number of distinct values of s.
func (s *CountedSet) Len() int { return len(s.counts) }

// Min returns the smallest value of s; ok is false when s is empty. The
// slice must not be modified; it is valid until the value leaves s.
func (s *CountedSet) Min() (v string, ok bool) {
	v, _, ok = s.order.Min()
	return v, ok
}

// Max returns the largest value of s, as Min.
func (s *CountedSet) Max() (v string, ok bool) {
	v, _, ok = s.order.Max()
	return v, ok
}

// Ascend calls fn for every value of s and its count, in value order,
// until fn returns false.
func (s *CountedSet) Ascend(fn func(v string, n int64) bool) {
	for v, sv := range s.order.Ascend(btreemap.Min[string](), btreemap.Max[string]()) {
		if !fn(v, sv.n) {
			return
		}
	}
}

// Flush writes the changed values of every set to the store in one
// batch, and forgets the sets left empty.
func (c *CountedSets) Flush() error {
	c.batch.Reset()
	forgot := false
	for _, s := range c.dirty {
		for _, sv := range s.dirty {
			c.buf = append(append(c.buf[:0], s.owner...), sv.v...)
			switch {
			case sv.n > 0:
				c.vbuf = c.codec.Encode(c.vbuf[:0], &sv.n)
				c.space.Put(&c.batch, s.kg, c.buf, c.vbuf)
				sv.stored = true
			case sv.stored:
				c.space.Delete(&c.batch, s.kg, c.buf)
			}
			sv.dirty = false
			if err := c.space.ApplyPart(&c.batch); err != nil {
				return err
			}
		}
		clear(s.dirty)
		s.dirty, s.listed = s.dirty[:0], false
		if len(s.counts) == 0 {
			delete(c.sets, s.owner)
			forgot = true
		}
	}
	clear(c.dirty)
	c.dirty = c.dirty[:0]
	if forgot {
		c.epoch++
	}
	if c.batch.Len() == 0 {
		return nil
	}
	return c.space.store.Apply(&c.batch)
}

// Drop writes back every change (Flush) and forgets every set, which
// later uses load from the store again (to bound memory, with
// Cache.Trim).
func (c *CountedSets) Drop() error {
	if err := c.Flush(); err != nil {
		return err
	}
	clear(c.sets)
	c.epoch++
	c.complete = false
	return nil
}

// Sets is the number of sets in memory.
func (c *CountedSets) Sets() int { return len(c.sets) }

// VarintCodec encodes counts as varints (no version header: for tests and
// stores of our own).
type VarintCodec struct{}

func (VarintCodec) Encode(dst []byte, n *int64) []byte { return binary.AppendVarint(dst, *n) }

func (VarintCodec) Decode(src []byte, n *int64) error {
	v, m := binary.Varint(src)
	if m <= 0 || m != len(src) {
		return errors.Join(ErrCorrupt, fmt.Errorf("count %x", src))
	}
	*n = v
	return nil
}
