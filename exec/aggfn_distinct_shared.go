package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/state"
)

// Shared DISTINCT sets. The DISTINCT aggregates of a group aggregate over
// one argument column (COUNT(DISTINCT x), COUNT(DISTINCT x) FILTER (WHERE
// ...), SUM(DISTINCT x), ...) share one value set per group: each value
// of x the group saw, with one count per aggregate of how many of its
// rows (those its FILTER accepts) carry the value. A value reaches an
// aggregate's inner accumulator when its count goes from 0 to 1, and
// leaves it when it goes back to 0. One set per column rather than per
// aggregate: a row looks its value up once, a checkpoint writes one key
// per changed value, and memory holds one entry per value, as Flink's
// distinct MapView with filter arguments does.
//
// The sets live in their own key space (spaceDistinct): value v of the
// set of aggregate L (the first of the column's DISTINCT aggregates) of
// the group keyed k is the key k + byte(L) + ordered(v), its value the
// state header, the number of counts and the counts (varints), in the
// order of the aggregates. The aggregate operator's layout names each
// aggregate's set (aggLayout), so a restore into a query that shares
// otherwise fails as incompatible; state written before sets were shared
// (one set per aggregate in spaceValues) restores into the old mode.

// distinctShare is the DISTINCT aggregates over one argument column.
type distinctShare struct {
	leader  int   // the first member: its index keys the set, its accumulator holds the set's ref
	members []int // aggregate indexes, in order
	cls     byte
}

// distinctRef is a group's cached reference to its shared set.
type distinctRef struct {
	set   *distinctSet
	epoch uint64
}

// distinctSets are the shared DISTINCT sets of a group aggregate subtask.
// A set holds in memory the values its group's rows brought since it was
// made; while the store may hold others (after a restore, or once Drop
// forgot the sets to bound memory) a value the set lacks is read from the
// store, one key, never the whole set: a group's set may hold millions of
// values (q16's bidders of a day), more than the memory budget. Changed
// values are written back by Flush (at a checkpoint barrier) and Drop.
// Used by one goroutine.
type distinctSets struct {
	space    *state.KeySpace
	owner    string // the operator, for errors
	sets     map[string]*distinctSet
	dirty    []*distinctSet
	epoch    uint64
	complete bool
	// bytes is what the sets take in memory, as estimated (Bytes).
	bytes int64
	batch state.WriteBatch
	buf   []byte
	vbuf  []byte
	// The reads of prefetch: keys (owner and value) with their key
	// groups and sets; order sorts them.
	bk    batchKeys
	ksets []*distinctSet
	order []int32
	mkgs  []int
	mkeys [][]byte
	msets []*distinctSet
}

// distinctSet is one group's set of one column: values in slots, m
// counts per slot. Values of 8-byte encodings (integers, floats) are
// keyed by their bits, others by their bytes. A value whose counts went
// to 0 stays in the maps, not live, until Flush writes its delete: so a
// set the store may hold more of (not complete) does not read the value
// back from the store before then.
type distinctSet struct {
	owner string
	kg    int
	m     int
	fixed bool
	// complete: every value of the set is in memory (the store held
	// none of it when it was made), so a value it lacks is new.
	complete bool
	// bytes is the set's part of distinctSets.bytes.
	bytes int64
	ints  map[uint64]int32
	strs  map[string]int32
	ivals []uint64 // by slot, when fixed
	svals []string // by slot, otherwise
	n     []int64  // m counts per slot
	flags []uint8
	free  []int32 // slots to reuse
	dirty []int32
	live  int
	// listed: in distinctSets.dirty.
	listed bool
}

// Slot flags.
const (
	slotLive   = 1 << iota // the value is in the set
	slotDirty              // changed since the last flush
	slotStored             // the store holds the value
)

// Estimated bytes of memory of a set and of a value's slot besides its
// counts (8 bytes each): its place in the map from value to slot (at the
// maps' average load), in the slices by slot, and, for a value of another
// width, its string header and allocation (plus its bytes), as
// TestDistinctBytesMatchHeap measures them.
const (
	distinctSetBytes       = 256
	distinctFixedSlotBytes = 40
	distinctBytesSlotBytes = 60
)

func newDistinctSets(space *state.KeySpace, owner string) *distinctSets {
	return &distinctSets{space: space, owner: owner, sets: map[string]*distinctSet{}}
}

// StartsEmpty: the store holds no value yet (a job that did not restore).
func (c *distinctSets) StartsEmpty() { c.complete = true }

// Bytes is the memory the sets take, as estimated.
func (c *distinctSets) Bytes() int64 { return c.bytes }

// lookup returns the set of owner (m counts per value, of class cls) in
// key group kg, making it when it is not in memory (it reads nothing),
// and points ref at it.
func (c *distinctSets) lookup(ref *distinctRef, kg int, owner []byte, m int, cls byte) (*distinctSet, error) {
	if ref.set != nil && ref.epoch == c.epoch {
		return ref.set, nil
	}
	s, ok := c.sets[string(owner)]
	if !ok {
		s = &distinctSet{owner: string(owner), kg: kg, m: m, fixed: cls == 'i' || cls == 'f', complete: c.complete, bytes: distinctSetBytes}
		if s.fixed {
			s.ints = map[uint64]int32{}
		} else {
			s.strs = map[string]int32{}
		}
		c.sets[s.owner] = s
		c.bytes += s.bytes
	}
	ref.set, ref.epoch = s, c.epoch
	return s, nil
}

// find returns the slot of value v of s, reading it from the store when
// s is not complete and lacks it; ok false: the set holds no v.
func (c *distinctSets) find(s *distinctSet, v []byte) (slot int32, ok bool, err error) {
	if slot, ok = s.find(v); ok || s.complete {
		return slot, ok, nil
	}
	c.buf = append(append(c.buf[:0], s.owner...), v...)
	raw, ok, err := c.space.Get(s.kg, c.buf)
	if err != nil || !ok {
		return 0, false, err
	}
	d, err := newStateDecoder(raw, c.owner)
	if err != nil {
		return 0, false, err
	}
	slot = c.insert(s, v)
	decodeDistinctCounts(&d, s.counts(slot))
	s.flags[slot] |= slotStored
	return slot, true, d.err
}

// prefetch reads, in key order, the stored values that the shared sets
// of a batch's rows lack (rows 0 to len(keys)-1 of the batch f read,
// keys[i] the group key of row i, in key group kgs[i]), so that the fold
// that follows finds each in memory: one pass over the store in key
// order rather than a random read per value, as Cache.Prefetch does for
// the groups. A value the store lacks is remembered as absent (a slot
// not live), so that the fold does not read it again.
func (c *distinctSets) prefetch(f *aggFold, kgs []int, keys [][]byte) error {
	if c.complete || len(f.shares) == 0 {
		return nil
	}
	c.bk.reset()
	c.ksets = c.ksets[:0]
	var ref distinctRef
	for k := range f.shares {
		sh := &f.shares[k]
		r := &f.argR[sh.leader]
		for i, key := range keys {
			if r.isNull(i) {
				continue
			}
			start := len(c.bk.buf)
			c.bk.buf = append(append(c.bk.buf, key...), byte(sh.leader))
			ref = distinctRef{}
			s, err := c.lookup(&ref, kgs[i], c.bk.buf[start:], len(sh.members), sh.cls)
			if err != nil {
				return err
			}
			f.v.load(r, i, sh.cls)
			v := f.v.ordered()
			if _, ok := s.find(v); ok || s.complete {
				c.bk.buf = c.bk.buf[:start]
				continue
			}
			c.bk.buf = append(c.bk.buf, v...)
			c.bk.add(kgs[i])
			c.ksets = append(c.ksets, s)
		}
	}
	if len(c.ksets) == 0 {
		return nil
	}
	c.bk.seal()
	bkeys, bkgs := c.bk.keys, c.bk.kgs
	c.order = c.order[:0]
	for j := range bkeys {
		c.order = append(c.order, int32(j))
	}
	slices.SortFunc(c.order, func(x, y int32) int {
		if d := cmp.Compare(bkgs[x], bkgs[y]); d != 0 {
			return d
		}
		return bytes.Compare(bkeys[x], bkeys[y])
	})
	c.mkgs, c.mkeys, c.msets = c.mkgs[:0], c.mkeys[:0], c.msets[:0]
	for _, j := range c.order {
		if n := len(c.mkeys); n > 0 && bkgs[j] == c.mkgs[n-1] && bytes.Equal(bkeys[j], c.mkeys[n-1]) {
			continue // a repeat of the value before it
		}
		c.mkgs, c.mkeys, c.msets = append(c.mkgs, bkgs[j]), append(c.mkeys, bkeys[j]), append(c.msets, c.ksets[j])
	}
	err := c.space.GetSorted(c.mkgs, c.mkeys, func(j int, raw []byte, ok bool) error {
		s := c.msets[j]
		slot := c.insert(s, c.mkeys[j][len(s.owner):])
		if !ok {
			s.flags[slot] &^= slotLive
			s.live--
			return nil
		}
		d, err := newStateDecoder(raw, c.owner)
		if err != nil {
			return err
		}
		decodeDistinctCounts(&d, s.counts(slot))
		s.flags[slot] |= slotStored
		return d.err
	})
	clear(c.mkeys)
	clear(c.msets)
	clear(c.ksets)
	return err
}

// insert adds v (not in s) with zero counts, counting its bytes.
func (c *distinctSets) insert(s *distinctSet, v []byte) int32 {
	n := len(s.flags)
	slot := s.insert(v)
	var b int64
	if len(s.flags) > n {
		b = distinctFixedSlotBytes + 8*int64(s.m)
		if !s.fixed {
			b = distinctBytesSlotBytes + 8*int64(s.m)
		}
	}
	if !s.fixed {
		b += int64(len(v))
	}
	s.bytes += b
	c.bytes += b
	return slot
}

// appendDistinctCounts appends the value of a shared set's entry: the
// state header, the number of counts, the counts.
func appendDistinctCounts(dst []byte, counts []int64) []byte {
	dst = binary.AppendUvarint(checkpoint.AppendStateHeader(dst, stateVersion), uint64(len(counts)))
	for _, n := range counts {
		dst = binary.AppendVarint(dst, n)
	}
	return dst
}

// decodeDistinctCounts reads what appendDistinctCounts wrote (after the
// header) into counts, which must have as many.
func decodeDistinctCounts(d *decoder, counts []int64) {
	if m := d.uvarint(); d.err == nil && m != uint64(len(counts)) {
		d.incompatible("DISTINCT set with %d counts per value, the query's with %d", m, len(counts))
	}
	some := false
	for j := range counts {
		if d.err != nil {
			return
		}
		counts[j] = d.varint()
		if counts[j] < 0 && d.err == nil {
			d.incompatible("DISTINCT value counted %d times", counts[j])
		}
		some = some || counts[j] > 0
	}
	if !some && d.err == nil {
		d.incompatible("DISTINCT value counted by no aggregate")
	}
	d.end()
}

// find returns the slot of value v; ok false: not in the set.
func (s *distinctSet) find(v []byte) (int32, bool) {
	if s.fixed {
		slot, ok := s.ints[binary.BigEndian.Uint64(v)]
		return slot, ok
	}
	slot, ok := s.strs[string(v)]
	return slot, ok
}

// insert adds v (not in the set) with zero counts and returns its slot
// (distinctSets.insert counts its bytes).
func (s *distinctSet) insert(v []byte) int32 {
	var slot int32
	if k := len(s.free); k > 0 {
		slot = s.free[k-1]
		s.free = s.free[:k-1]
		clear(s.n[int(slot)*s.m : int(slot+1)*s.m])
		s.flags[slot] &= slotDirty | slotStored
	} else {
		slot = int32(len(s.flags))
		s.flags = append(s.flags, 0)
		for range s.m {
			s.n = append(s.n, 0)
		}
		if s.fixed {
			s.ivals = append(s.ivals, 0)
		} else {
			s.svals = append(s.svals, "")
		}
	}
	if s.fixed {
		k := binary.BigEndian.Uint64(v)
		s.ivals[slot] = k
		s.ints[k] = slot
	} else {
		k := string(v)
		s.svals[slot] = k
		s.strs[k] = slot
	}
	s.flags[slot] |= slotLive
	s.live++
	return slot
}

// counts are the m counts of slot.
func (s *distinctSet) counts(slot int32) []int64 { return s.n[int(slot)*s.m : int(slot+1)*s.m] }

// touch marks slot changed, for the next flush; a slot whose counts are
// all 0 leaves the set (the flush deletes it from the maps and reuses
// its slot).
func (c *distinctSets) touch(s *distinctSet, slot int32) {
	live := false
	for _, n := range s.counts(slot) {
		if n != 0 {
			live = true
			break
		}
	}
	if !live && s.flags[slot]&slotLive != 0 {
		s.flags[slot] &^= slotLive
		s.live--
	}
	if s.flags[slot]&slotDirty == 0 {
		s.flags[slot] |= slotDirty
		s.dirty = append(s.dirty, slot)
		if !s.listed {
			s.listed = true
			c.dirty = append(c.dirty, s)
		}
	}
}

// empty removes every value of s (a group whose state TTL passed): those
// in memory, and when s is not complete those only the store holds.
func (c *distinctSets) empty(s *distinctSet) error {
	if !s.complete {
		var gone []string
		err := c.space.ScanPrefix(s.kg, []byte(s.owner), func(k, _ []byte) error {
			if _, ok := s.find(k[len(s.owner):]); !ok {
				gone = append(gone, string(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		var b state.WriteBatch
		for _, k := range gone {
			c.space.Delete(&b, s.kg, []byte(k))
			if err := c.space.ApplyPart(&b); err != nil {
				return err
			}
		}
		if err := c.space.Store().Apply(&b); err != nil {
			return err
		}
		s.complete = true
	}
	for slot := range s.flags {
		if s.flags[slot]&slotLive != 0 {
			clear(s.counts(int32(slot)))
			c.touch(s, int32(slot))
		}
	}
	return nil
}

// value appends slot's value, as ordered() encodes it.
func (s *distinctSet) value(dst []byte, slot int32) []byte {
	if s.fixed {
		return binary.BigEndian.AppendUint64(dst, s.ivals[slot])
	}
	return append(dst, s.svals[slot]...)
}

// flushChunk is how many changed values Flush writes in one batch.
const flushChunk = 1 << 15

// Flush writes the changed values of every set to the store (in batches
// of flushChunk values: the checkpoint that follows sees them all) and
// forgets the sets left empty.
func (c *distinctSets) Flush() error {
	c.batch.Reset()
	forgot := false
	for _, s := range c.dirty {
		for _, slot := range s.dirty {
			c.buf = s.value(append(c.buf[:0], s.owner...), slot)
			f := s.flags[slot]
			switch {
			case f&slotLive != 0:
				c.vbuf = appendDistinctCounts(c.vbuf[:0], s.counts(slot))
				c.space.Put(&c.batch, s.kg, c.buf, c.vbuf)
				f |= slotStored
			case f&slotStored != 0:
				c.space.Delete(&c.batch, s.kg, c.buf)
				f &^= slotStored
			}
			if c.batch.Len() >= flushChunk {
				// A checkpoint can change millions of values: written in
				// chunks, they are never all in memory twice.
				if err := c.space.Store().Apply(&c.batch); err != nil {
					return err
				}
				c.batch.Reset()
			}
			if f&slotLive == 0 {
				if s.fixed {
					delete(s.ints, s.ivals[slot])
				} else {
					delete(s.strs, s.svals[slot])
					s.bytes -= int64(len(s.svals[slot]))
					c.bytes -= int64(len(s.svals[slot]))
					s.svals[slot] = ""
				}
				s.free = append(s.free, slot)
			}
			s.flags[slot] = f &^ slotDirty
		}
		s.dirty, s.listed = s.dirty[:0], false
		if s.live == 0 {
			delete(c.sets, s.owner)
			c.bytes -= s.bytes
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
	return c.space.Store().Apply(&c.batch)
}

// Drop flushes and forgets every set (to bound memory; later uses load
// from the store again).
func (c *distinctSets) Drop() error {
	if err := c.Flush(); err != nil {
		return err
	}
	clear(c.sets)
	c.epoch++
	c.complete = false
	c.bytes = 0
	return nil
}

// addShared folds row i (its value in v, loaded) into the shared set of
// sh: pass[k] tells whether member k's FILTER accepts the row.
func (f *aggFold) addShared(accs []accumulator, x *foldCtx, sh *distinctShare, pass []bool, v *aggValue, sign int64) error {
	lead := accs[sh.leader].(*distinctAcc)
	x.owner = append(append(x.owner[:0], x.key...), byte(sh.leader))
	set, err := x.dsets.lookup(&lead.dref, x.kg, x.owner, len(sh.members), sh.cls)
	if err != nil {
		return err
	}
	k := v.ordered()
	slot, ok, err := x.dsets.find(set, k)
	if err != nil {
		return err
	}
	if !ok || set.flags[slot]&slotLive == 0 {
		if sign < 0 {
			if x.lenient {
				return nil
			}
			return fmt.Errorf("retraction of a DISTINCT value never added")
		}
		if ok { // counted to 0 since the last flush
			set.flags[slot] |= slotLive
			set.live++
		} else {
			slot = x.dsets.insert(set, k)
		}
	}
	cs := set.counts(slot)
	for m, j := range sh.members {
		if !pass[m] {
			continue
		}
		n := cs[m] + sign
		if n < 0 {
			if x.lenient {
				continue
			}
			return fmt.Errorf("retraction of a DISTINCT value never added")
		}
		cs[m] = n
		if (sign > 0 && n == 1) || (sign < 0 && n == 0) {
			x.idx = j
			if err := accs[j].(*distinctAcc).inner.add(x, v, sign); err != nil {
				return err
			}
		}
	}
	x.dsets.touch(set, slot)
	return nil
}
