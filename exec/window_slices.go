package exec

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"slices"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// windowSlices keeps the groups of a HOP window aggregation by slice, as
// Flink's window slicing does: the time axis is cut at every slide into
// slices, a row folds into the one group of its slice and key (not into
// each of the size/slide windows it belongs to), and a window that fires
// merges the groups of its size/slide slices key by key. A row thus costs
// one group update instead of size/slide, and the state holds a group per
// slice and key instead of one per window and key.
//
// A slice's groups are keyed as a window's ([slice end][slice start][key
// columns]); a slice stays until the last window it belongs to (the one
// ending size-slide after it) fires. The windows fired are those the
// watermark passes: a window whose end the previous watermark had already
// passed fired then, or had no rows.
//
// Slicing needs the size to be a multiple of the slide and aggregates
// whose states merge exactly (aggDef.flatMergeable); other HOP windows are
// kept whole. A job restored from state of whole windows keeps them
// whole.
type windowSlices struct {
	on             bool
	slide, size, n int64 // n = size / slide: the slices of a window
	offset         int64
	window         []int64 // the pending slices of the window firing, oldest first
	ends           []int64 // the window ends a watermark fires
	refs           []sliceRef
	merge          sliceMerge
	stored         []int
	open           []int64 // scratch of openWindows
}

// sliceRef is a pending group listed by its slice: window[j]'s i-th
// listed key, in key group kg.
type sliceRef struct{ kg, j, i int32 }

// canSlice reports whether the windows of w can be kept in slices with
// fold's aggregates laid out in codec.
func canSlice(w planner.WindowSpec, codec windowCodec) bool {
	if w.Kind == "" || w.Kind[0] != 'H' || w.Attached || w.Slide <= 0 || w.Size%w.Slide != 0 || !codec.flat {
		return false
	}
	for j := range codec.fold.defs {
		if !codec.fold.defs[j].flatMergeable() {
			return false
		}
	}
	return true
}

func newWindowSlices(w planner.WindowSpec, fold *aggFold, nw int) windowSlices {
	return windowSlices{on: true, slide: w.Slide, size: w.Size, n: w.Size / w.Slide, offset: w.Offset,
		merge: sliceMerge{fold: fold, nw: nw, index: map[string]int32{}}}
}

// sliceEnd is the end of the slice of event time ts.
func (s *windowSlices) sliceEnd(ts int64) int64 {
	return ts - floorMod(ts-s.offset, s.slide) + s.slide
}

// lastEnd is the end of the last window the slice ending at end belongs
// to.
func (s *windowSlices) lastEnd(end int64) int64 { return end + s.size - s.slide }

// sliceMerge merges the groups of a window's slices by key, in one key
// group at a time: the merged groups' words in one block, their state keys
// (of any of the slices: only the key columns after the window bounds are
// read) in order of first appearance.
type sliceMerge struct {
	fold  *aggFold
	nw    int
	index map[string]int32 // by key columns (a state key without its window bounds)
	words []uint64
	keys  []string
	// arena holds the keys of groups read from the store, which keys and
	// index reference until reset.
	arena []byte
}

func (m *sliceMerge) reset() {
	clear(m.index)
	m.words, m.keys = m.words[:0], m.keys[:0]
	m.arena = m.arena[:0]
}

// keep returns a string of k's bytes, valid until reset: a copy in the
// arena, whose earlier strings keep the array they were made in when it
// grows.
func (m *sliceMerge) keep(k []byte) string {
	if len(m.arena)+len(k) > cap(m.arena) {
		m.arena = make([]byte, 0, max(64<<10, 2*cap(m.arena), len(k)))
	}
	n := len(m.arena)
	m.arena = append(m.arena, k...)
	return unsafeString(m.arena[n:len(m.arena):len(m.arena)])
}

// add merges the group of state key key, words w, into the window's.
func (m *sliceMerge) add(key string, w []uint64) error {
	cols := key[windowKeyBytes:]
	if i, ok := m.index[cols]; ok {
		return m.fold.flatMerge(m.words[int(i)*m.nw:(int(i)+1)*m.nw], w)
	}
	m.index[cols] = int32(len(m.keys))
	m.keys = append(m.keys, key)
	m.words = append(m.words, w[:m.nw]...)
	return nil
}

// emit emits the merged groups as those of the window [end-size, end).
func (m *sliceMerge) emit(end, size int64, emit func(end, start int64, key string, g *aggGroup) error) error {
	for i, key := range m.keys {
		g := aggGroup{w: &m.words[i*m.nw]}
		if err := emit(end, end-size, key, &g); err != nil {
			return err
		}
	}
	return nil
}

// pending reports whether the slice ending at end has groups.
func (w *windowTimers) pending(end int64) bool {
	if _, ok := w.keys[end]; ok {
		return true
	}
	return w.scan[end]
}

// fireSlices emits the windows that watermark a.wm passes and prev had
// not, in order of window end, from the slices; a slice leaves with the
// last window it belongs to.
func (a *windowAggOp) fireSlices(prev int64, out *emitter) error {
	s := &a.slices
	s.ends = s.ends[:0]
	for _, end := range a.timers.ends {
		for j := int64(0); j < s.n; j++ {
			if e := end + j*s.slide; windowFired(e, a.wm) && !windowFired(e, prev) {
				s.ends = append(s.ends, e)
			}
		}
	}
	if len(s.ends) == 0 {
		return nil
	}
	slices.Sort(s.ends)
	s.ends = slices.Compact(s.ends)
	em := newWindowEmitter(a, out)
	defer em.release()
	flushed := false
	for _, e := range s.ends {
		s.window = s.window[:0]
		scan := false
		for j := s.n - 1; j >= 0; j-- {
			if se := e - j*s.slide; a.timers.pending(se) {
				s.window = append(s.window, se)
				scan = scan || a.timers.scan[se]
			}
		}
		if len(s.window) == 0 {
			continue
		}
		// The window is the last of its oldest slice: the slice goes.
		drop := s.lastEnd(s.window[0]) == e
		var err error
		if scan {
			// Some slice's groups are found in the store: write the
			// cached ones back first.
			if !flushed {
				if err := a.cache.Flush(); err != nil {
					return err
				}
				flushed = true
			}
			err = a.fireSliceStored(e, drop, em.emit)
		} else {
			err = a.fireSliceListed(e, drop, em.emit)
		}
		if err != nil {
			return err
		}
		if drop {
			// Found, not assumed first: a restore into another parallelism
			// can bring key groups of a subtask whose watermark was behind,
			// whose slices end before this one.
			heap.Remove(&a.timers, slices.Index(a.timers.ends, s.window[0]))
			a.timers.fired(s.window[0])
		}
	}
	if err := em.flush(); err != nil {
		return err
	}
	return a.cache.Evict()
}

// fireSliceListed emits the window ending at e from the groups its
// slices (s.window) list, merged in each key group; drop: its oldest
// slice's groups leave the cache and the store.
func (a *windowAggOp) fireSliceListed(e int64, drop bool, emit func(end, start int64, key string, g *aggGroup) error) error {
	s := &a.slices
	s.refs = s.refs[:0]
	for j, se := range s.window {
		for i, tk := range a.timers.keys[se] {
			s.refs = append(s.refs, sliceRef{kg: int32(tk.kg), j: int32(j), i: int32(i)})
		}
	}
	slices.SortFunc(s.refs, func(x, y sliceRef) int {
		if c := cmp.Compare(x.kg, y.kg); c != 0 {
			return c
		}
		if c := cmp.Compare(x.j, y.j); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	s.stored = s.stored[:0]
	for lo := 0; lo < len(s.refs); {
		hi := lo + 1
		for hi < len(s.refs) && s.refs[hi].kg == s.refs[lo].kg {
			hi++
		}
		s.merge.reset()
		for _, r := range s.refs[lo:hi] {
			tk := a.timers.keys[s.window[r.j]][r.i]
			a.buf = append(a.buf[:0], tk.key...)
			en, created, err := a.cache.Get(tk.kg, a.buf)
			if err != nil {
				return err
			}
			if created {
				a.cache.Discard(en)
				continue
			}
			if err := s.merge.add(en.Key, a.codec.words(&en.Value)); err != nil {
				return err
			}
			if drop && r.j == 0 {
				if en.Stored() && (len(s.stored) == 0 || s.stored[len(s.stored)-1] != tk.kg) {
					s.stored = append(s.stored, tk.kg)
				}
				// Its words were copied: the entry's value is the
				// next new group's.
				a.cache.Discard(en)
				a.keepSpare(en.Value)
			}
		}
		if err := s.merge.emit(e, s.size, emit); err != nil {
			return err
		}
		lo = hi
	}
	if !drop {
		return nil
	}
	return a.deleteWindow(s.window[0], s.stored)
}

// fireSliceStored emits the window ending at e from the store (the cache
// written back), each key group's groups of its slices merged; drop: its
// oldest slice's groups leave the cache and the store.
func (a *windowAggOp) fireSliceStored(e int64, drop bool, emit func(end, start int64, key string, g *aggGroup) error) error {
	s := &a.slices
	space := a.cache.Space()
	s.stored = s.stored[:0]
	var prefix [8]byte
	lo, hi := state.KeyGroupRange(a.t.subtask, a.maxPar, a.t.op.Parallelism)
	for kg := lo; kg <= hi && kg < a.maxPar; kg++ {
		s.merge.reset()
		for j, se := range s.window {
			binary.BigEndian.PutUint64(prefix[:], uint64(se))
			found := false
			err := space.ScanRange(kg, prefix[:], state.PrefixEnd(prefix[:]), func(k, v []byte) error {
				key := s.merge.keep(k)
				if err := a.codec.DecodeKeyed(v, key, &a.scratch); err != nil {
					return err
				}
				found = true
				if drop && j == 0 {
					if en := a.cache.Peek(k); en != nil {
						a.cache.Discard(en)
					}
				}
				return s.merge.add(key, a.codec.words(&a.scratch))
			})
			if err != nil {
				return err
			}
			if found && drop && j == 0 {
				s.stored = append(s.stored, kg)
			}
		}
		if err := s.merge.emit(e, s.size, emit); err != nil {
			return err
		}
	}
	if !drop {
		return nil
	}
	return a.deleteWindow(s.window[0], s.stored)
}

// openWindows is the number of windows not fired under watermark wm that
// the pending slices ending at ends belong to.
func (s *windowSlices) openWindows(ends []int64, wm int64) int {
	s.open = s.open[:0]
	for _, end := range ends {
		for e := end; e <= s.lastEnd(end); e += s.slide {
			if !windowFired(e, wm) {
				s.open = append(s.open, e)
			}
		}
	}
	slices.Sort(s.open)
	return len(slices.Compact(s.open))
}
