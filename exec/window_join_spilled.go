package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// fireSpilled joins and emits w, a window whose rows went to the store
// (shrink), from the store, without holding all of it in memory: a
// window may hold more rows than the budget (q5's last windows, every
// auction's count under one key). Its rows still in memory are written
// first and dropped. Then, in each key group, the two sides' rows are
// read in key order, a chunk at a time, and merged by join key: a key's
// right rows are held while its left rows stream past them in chunks, so
// memory holds one key's right rows and a chunk of left rows. The pairs,
// marks and padded rows are those fireWindow makes (their order within
// the window aside).
func (j *windowJoinOp) fireSpilled(w *wjWindow, e *wjEmitter) error {
	if err := j.storeWindow(w); err != nil {
		return err
	}
	j.spill(w)
	var prefix [16]byte
	binary.BigEndian.PutUint64(prefix[:8], uint64(w.end))
	binary.BigEndian.PutUint64(prefix[8:], uint64(w.start))
	lo, hi := state.KeyGroupRange(j.t.subtask, j.maxPar, j.t.op.Parallelism)
	for kg := lo; kg <= hi; kg++ {
		var cur [2]wjCursor
		for s := range cur {
			cur[s] = wjCursor{space: j.space[s], kg: kg, from: prefix[:], stop: state.PrefixEnd(prefix[:]),
				size: j.t.batchSize, owner: j.owner}
		}
		if err := j.mergeSpilled(&cur, e); err != nil {
			return err
		}
		// Every row of the window in this key group was read: they go
		// with one range delete a side, and from the count of rows held.
		for s := range cur {
			if cur[s].read == 0 {
				continue
			}
			j.rows -= cur[s].read
			if err := j.space[s].DeletePrefix(kg, prefix[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// storeWindow writes w's rows that are not stored yet.
func (j *windowJoinOp) storeWindow(w *wjWindow) error {
	var wb state.WriteBatch
	put := func(s, kg int, g *wjGroup, r *wjRow) error {
		if r.stored {
			return nil
		}
		j.sbuf = j.storeKey(j.sbuf[:0], w, g, r.seq)
		j.space[s].Put(&wb, kg, j.sbuf, j.rowValue(r))
		r.stored = true
		return j.space[s].ApplyPart(&wb)
	}
	for s := range j.space {
		for _, g := range w.groups {
			for i := range g.rows[s] {
				if err := put(s, g.kg, g, &g.rows[s][i]); err != nil {
					return err
				}
			}
		}
		for i := range w.nullRows[s] {
			if err := put(s, w.nullRows[s][i].kg, nil, &w.nullRows[s][i]); err != nil {
				return err
			}
		}
	}
	if wb.Len() == 0 {
		return nil
	}
	return j.t.store.Apply(&wb)
}

// rowValue is the store value of r.
func (j *windowJoinOp) rowValue(r *wjRow) []byte {
	j.vbuf = checkpoint.AppendStateHeader(j.vbuf[:0], stateVersion)
	j.vbuf = binary.AppendUvarint(j.vbuf, uint64(len(r.row)))
	return append(j.vbuf, r.row...)
}

// mergeSpilled merges the two sides' rows of one key group of a spilled
// window by join key (cursors cur[0], left, and cur[1], right).
//
// A row's mark (matched) is final once all its pairs are evaluated: a
// left row's when it has been paired with its key's right rows (all read
// before its left rows), a right row's when its key's last left row has.
// Rows wait in two arenas (j.chunkRows, left, and j.held, right: the
// finished keys' rows, then the current key's from curKey) until a flush
// evaluates the pairs made so far and emits the final rows alone where
// their side is padded: a batch at a time, not a key at a time, so that
// a window of many small keys makes batches of its size. A flush comes
// before an arena would move (the pairs point into them: each has room
// for a batch, and grows only after a flush, for a key with more right
// rows than that), once a batch of rows waits, and at the end.
func (j *windowJoinOp) mergeSpilled(cur *[2]wjCursor, e *wjEmitter) error {
	left, right := &cur[0], &cur[1]
	if cap(j.chunkRows) < j.t.batchSize {
		j.chunkRows = make([]wjRow, 0, j.t.batchSize)
	}
	if cap(j.held) < j.t.batchSize {
		j.held = make([]wjRow, 0, j.t.batchSize)
	}
	j.chunkRows, j.held = j.chunkRows[:0], j.held[:0]
	curKey := 0 // j.held[curKey:] are the current key's right rows
	flush := func() error {
		if err := e.flushPairs(); err != nil {
			return err
		}
		for i := range j.chunkRows {
			if err := j.emitAlone(e, 0, &j.chunkRows[i]); err != nil {
				return err
			}
		}
		for i := range j.held[:curKey] {
			if err := j.emitAlone(e, 1, &j.held[i]); err != nil {
				return err
			}
		}
		n := copy(j.held, j.held[curKey:])
		j.chunkRows, j.held, curKey = j.chunkRows[:0], j.held[:n], 0
		return nil
	}
	var key []byte
	for {
		lk, lok, err := left.peekKey()
		if err != nil {
			return err
		}
		rk, rok, err := right.peekKey()
		if err != nil {
			return err
		}
		if !lok && !rok {
			return flush()
		}
		switch {
		case !rok || (lok && bytes.Compare(lk, rk) < 0):
			key = append(key[:0], lk...)
		default:
			key = append(key[:0], rk...)
		}
		// A NULL key (marker 0) joins nothing: its rows are only padded.
		null := key[0] == 0
		curKey = len(j.held)
		err = right.each(key, func(r wjRow) error {
			if len(j.held) == cap(j.held) {
				// The pairs point into j.held: evaluate them before it
				// moves (after a flush it may grow, none pointing in).
				if err := flush(); err != nil {
					return err
				}
			}
			j.held = append(j.held, r)
			return nil
		})
		if err != nil {
			return err
		}
		err = left.each(key, func(r wjRow) error {
			if len(j.chunkRows) == cap(j.chunkRows) {
				if err := flush(); err != nil {
					return err
				}
			}
			j.chunkRows = append(j.chunkRows, r)
			if null {
				return nil
			}
			l := &j.chunkRows[len(j.chunkRows)-1]
			for ri := curKey; ri < len(j.held); ri++ {
				if err := e.pair(l, &j.held[ri]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		curKey = len(j.held) // the key's right rows are final
		if len(j.chunkRows)+len(j.held) >= j.t.batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// emitAlone emits r, a row of side s whose pairs were all evaluated, as
// fireWindow emits the rows of a side alone: an unmatched row of an outer
// side padded with NULLs, a left row of a semi join that matched, of an
// anti join that did not.
func (j *windowJoinOp) emitAlone(e *wjEmitter, s int, r *wjRow) error {
	if !j.side[s].padded && !(s == 0 && j.spec.Type == planner.WindowSemi) {
		return nil
	}
	if (j.spec.Type == planner.WindowSemi) != r.matched {
		return nil
	}
	return e.single(s, r)
}

// wjCursor reads one side's stored rows of a window in one key group, in
// key order, a chunk of entries at a time (a scan calls no store method
// inside it).
type wjCursor struct {
	space      *state.KeySpace
	kg         int
	from, stop []byte
	size       int
	owner      string
	chunk      []storedEntry
	n, i       int
	done       bool
	// read counts the rows next returned.
	read int64
}

// fill reads the next chunk when the current one is used up.
func (c *wjCursor) fill() error {
	if c.i < c.n || c.done {
		return nil
	}
	c.n, c.i = 0, 0
	err := c.space.ScanRange(c.kg, c.from, c.stop, func(k, v []byte) error {
		if c.n == len(c.chunk) {
			c.chunk = append(c.chunk, storedEntry{})
		}
		e := &c.chunk[c.n]
		e.k, e.v = append(e.k[:0], k...), append(e.v[:0], v...)
		c.n++
		if c.n >= c.size {
			return errChunkFull
		}
		return nil
	})
	if err != nil && err != errChunkFull {
		return err
	}
	if err != errChunkFull {
		c.done = true
	}
	if c.n > 0 {
		c.from = append(append(c.from[:0:0], c.chunk[c.n-1].k...), 0)
	}
	return nil
}

// peekKey returns the join key part (marker and key) of the next row, and
// false when there is none.
func (c *wjCursor) peekKey() ([]byte, bool, error) {
	if err := c.fill(); err != nil {
		return nil, false, err
	}
	if c.i >= c.n {
		return nil, false, nil
	}
	k := c.chunk[c.i].k
	if len(k) < 25 {
		return nil, false, fmt.Errorf("%w: %s: window join key of %d bytes", errCorrupt, c.owner, len(k))
	}
	return k[16 : len(k)-8], true, nil
}

// each calls fn with every next row of join key key, in order.
func (c *wjCursor) each(key []byte, fn func(wjRow) error) error {
	for {
		k, ok, err := c.peekKey()
		if err != nil || !ok || !bytes.Equal(k, key) {
			return err
		}
		r, err := c.next()
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
}

// next returns the next row (peekKey found one).
func (c *wjCursor) next() (wjRow, error) {
	ent := &c.chunk[c.i]
	c.i++
	c.read++
	d, err := newStateDecoder(ent.v, c.owner)
	if err != nil {
		return wjRow{}, err
	}
	row := string(d.bytes())
	d.end()
	if d.err != nil {
		return wjRow{}, d.err
	}
	return wjRow{row: row, seq: binary.BigEndian.Uint64(ent.k[len(ent.k)-8:]), kg: c.kg, stored: true}, nil
}
