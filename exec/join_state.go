package exec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// joinSideState is one input's rows in a regular join, by join key: per
// key, the rows under their identity (planner.JoinInputSpec): the whole
// row (NoUniqueKey, with a count of equal rows), the unique key's value
// (HasUniqueKey) or nothing (JoinKeyContainsUniqueKey: one row per key).
// An outer side's rows also count their matches on the other side.
//
// A key's rows are loaded from the store on its first use (one prefix
// scan) and then kept in memory; changed rows are written back in one
// batch by flush (at a checkpoint barrier), never read-modify-written per
// row. drop forgets every key (to bound memory); later uses load again.
//
// Store layout, in the side's key space: key = join key + identity;
// value = state header, count, matches, the time of the last write and,
// when the identity is not the row, the row. An append-only side's rows
// are stored in runs instead (joinRunVersion): key = join key + a
// sequence number, value = the rows a flush wrote for that key (the new
// ones; all of the key's when one of its stored rows changed or went, the
// old entries deleted), so a flush writes one entry per key and a load
// reads one per run. Entries of the older per-row form are still read.
//
// With a TTL (planner.JoinSpec.TTL), a row not written for that long is
// dropped when its key is next read, or at a checkpoint while its key is
// in memory; it is counted (expired), and nothing is emitted for it, as
// in Flink.
type joinSideState struct {
	space *state.KeySpace
	spec  planner.JoinInputSpec
	// appendOnly: the input never retracts, so its rows need no identity
	// to be found by: each gets a sequence number (seqBase and seq) as its
	// identity, and none is looked up (NoUniqueKey only).
	appendOnly   bool
	seqBase, seq uint64
	owner        string
	// ttl (milliseconds; 0: none) and now (the batch's processing time,
	// Unix milliseconds): a row written before now - ttl has expired.
	ttl, now int64
	// expired counts the rows (with their multiplicity) dropped by the TTL.
	expired int64
	keys    map[string]*joinKey
	// gen counts the times keys lost a key: a link to one of them
	// (joinKey.peer) made in an earlier generation may be stale.
	gen   uint64
	dirty []*joinKey
	// complete: the store holds no key that is not in keys (a fresh start,
	// no drop since), so a new key needs no store read.
	complete bool
	rows     int
	batch    state.WriteBatch
	buf      []byte
	vbuf     []byte
	idbuf    []byte
	run      []*joinRow
	// sweeper walks the stored rows for those the TTL dropped that no key
	// in memory holds any more (sweepStore); written counts the rows
	// written since its last walk.
	sweeper *state.Sweeper
	written int
}

// The chunks of a key's rows (joinKey.slab) and of their columns
// (joinKey.arena) double from the first size up to the largest, so that a
// key's rows lie together in memory (a probe reads them in a few cache
// lines) without an allocation each.
const (
	joinSlabFirst, joinSlabMax   = 4, 256
	joinArenaFirst, joinArenaMax = 256, 64 << 10
)

// keep returns row as a string held in k's arena.
func (k *joinKey) keep(row []byte) string {
	if len(row) > joinArenaMax/8 {
		return string(row)
	}
	if cap(k.arena)-len(k.arena) < len(row) {
		size := min(max(2*cap(k.arena), joinArenaFirst), joinArenaMax)
		for size < len(row) {
			size *= 2
		}
		k.arena = make([]byte, 0, size)
	}
	off := len(k.arena)
	k.arena = append(k.arena, row...)
	return unsafeString(k.arena[off:len(k.arena):len(k.arena)])
}

// newRow returns a zeroed row from k's slab.
func (k *joinKey) newRow() *joinRow {
	if len(k.slab) == 0 {
		k.slab = make([]joinRow, min(max(2*cap(k.slab), joinSlabFirst), joinSlabMax))
	}
	r := &k.slab[0]
	k.slab = k.slab[1:]
	return r
}

// rowIsID reports whether a row's identity is its encoded columns.
func (s *joinSideState) rowIsID() bool { return s.spec == planner.NoUniqueKey && !s.appendOnly }

// joinKey is one join key's rows.
type joinKey struct {
	key  string
	kg   int
	rows []*joinRow
	byID map[string]int // identity -> index in rows
	// changed rows since the last flush (not on append-only sides: their
	// new rows are those not stored).
	changed []*joinRow
	listed  bool
	// entries (append-only sides) are the identities of the key's entries
	// in the store; rewrite: one of its stored rows changed or went, so
	// the next flush deletes them and writes all its rows anew.
	entries []string
	rewrite bool
	// peer is the other side's rows of the same key, as found in the other
	// side's generation peerGen (see joinSideState.gen).
	peer    *joinKey
	peerGen uint64
	// slab and arena hand out its rows and (on append-only sides) their
	// columns.
	slab  []joinRow
	arena []byte
}

// joinRow is one stored row.
type joinRow struct {
	key *joinKey
	id  string // "" on append-only sides (see joinKey.entries)
	row string // encoded columns (encodeKey form); == id for NoUniqueKey
	n   int64  // equal rows (NoUniqueKey); 1 otherwise
	// matches is the number of rows of the other side it joins with
	// (counted with their multiplicity): outer sides only.
	matches int64
	// ts is when the row was last written (inserted, counted again, its
	// matches changed), in Unix milliseconds of processing time: with a
	// TTL it expires ts + TTL.
	ts     int64
	dirty  bool
	stored bool
	gone   bool // removed: delete from the store at flush
}

func newJoinSideState(space *state.KeySpace, spec planner.JoinInputSpec, appendOnly bool, owner string, fresh bool) *joinSideState {
	s := &joinSideState{space: space, spec: spec, owner: owner, keys: map[string]*joinKey{}, complete: fresh}
	if spec == planner.NoUniqueKey && appendOnly {
		// Unique across restarts of the subtask: identities written by an
		// earlier run have an older base.
		s.appendOnly, s.seqBase = true, uint64(time.Now().UnixNano())
	}
	return s
}

// nextID returns the identity of an append-only side's next row.
func (s *joinSideState) nextID(dst []byte) []byte {
	s.seq++
	dst = binary.BigEndian.AppendUint64(dst[:0], s.seqBase)
	return binary.BigEndian.AppendUint64(dst, s.seq)
}

// lookup returns the rows of key in key group kg, loading them when they
// are not in memory; nil when create is false and the key has no row.
func (s *joinSideState) lookup(kg int, key []byte, create bool) (*joinKey, error) {
	if k, ok := s.keys[string(key)]; ok {
		return k, nil
	}
	var k *joinKey
	if !s.complete {
		err := s.space.ScanPrefix(kg, key, func(sk, v []byte) error {
			if k == nil {
				k = s.newKey(kg, key)
			}
			if s.appendOnly {
				k.entries = append(k.entries, string(sk[len(key):]))
				return s.decodeEntry(v, k)
			}
			r := k.newRow()
			*r = joinRow{key: k, id: string(sk[len(key):]), stored: true}
			if err := s.decodeRow(v, r); err != nil {
				return err
			}
			if !s.appendOnly {
				k.byID[r.id] = len(k.rows)
			}
			k.rows = append(k.rows, r)
			s.rows++
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if k == nil {
		if !create {
			return nil, nil
		}
		k = s.newKey(kg, key)
	}
	s.keys[k.key] = k
	return k, nil
}

// forget removes k from the keys in memory.
func (s *joinSideState) forget(k *joinKey) {
	delete(s.keys, k.key)
	s.gen++
}

// peerOf returns the other side's (o's) rows of mine's key (encoded as
// key), nil when it has none: through mine's link while o has forgotten
// no key since it was made, else by o.lookup (which then makes the link).
func (s *joinSideState) peerOf(o *joinSideState, mine *joinKey, key []byte) (*joinKey, error) {
	if mine.peer != nil && mine.peerGen == o.gen {
		return mine.peer, nil
	}
	k, err := o.lookup(mine.kg, key, false)
	if k != nil {
		mine.peer, mine.peerGen = k, o.gen
	}
	return k, err
}

// newKey returns an empty key (without identities on an append-only
// side: its rows are never looked up).
func (s *joinSideState) newKey(kg int, key []byte) *joinKey {
	k := &joinKey{key: string(key), kg: kg}
	if !s.appendOnly {
		k.byID = map[string]int{}
	}
	return k
}

// touchRow lists r as changed (its match count): a write.
func (s *joinSideState) touchRow(r *joinRow) {
	r.ts = s.now
	s.touch(r.key, r)
}

// live drops the rows of k whose TTL has passed and returns the others.
func (s *joinSideState) live(k *joinKey) []*joinRow {
	if s.ttl <= 0 || k == nil {
		if k == nil {
			return nil
		}
		return k.rows
	}
	for i := 0; i < len(k.rows); {
		r := k.rows[i]
		if s.now-r.ts <= s.ttl {
			i++
			continue
		}
		s.expired += r.n
		r.n = 1
		s.removeAt(k, i)
	}
	return k.rows
}

// sweep drops the expired rows of every key in memory (at a checkpoint:
// keys nobody reads expire too). Keys only in the store wait until they
// are read.
func (s *joinSideState) sweep() {
	if s.ttl <= 0 {
		return
	}
	for _, k := range s.keys {
		s.live(k)
		if len(k.rows) == 0 && !k.listed {
			s.forget(k)
		}
	}
}

// minSweep is the fewest stored rows a checkpoint's sweepStore visits.
const minSweep = 1000

// sweepStore deletes from the store the rows whose TTL has passed, after a
// flush (so the rows in memory, all live after sweep, are stored as they
// are): the rows of keys dropped from memory are read again only when
// their key comes back, which may be never. Each call visits at least
// twice as many stored rows as were written since the last (and
// minSweep), resuming where the last stopped, so cleanup keeps pace with
// the rows added: the store holds about the rows of the last TTL.
func (s *joinSideState) sweepStore(kgStart, kgEnd int) error {
	if s.ttl <= 0 {
		return nil
	}
	if s.sweeper == nil {
		s.sweeper = state.NewSweeper(s.space, kgStart, kgEnd)
	}
	var err error
	_, _, serr := s.sweeper.Sweep(max(minSweep, 2*s.written), func(_ int, _, v []byte) bool {
		n, newest, derr := s.entryTimes(v)
		// Live as in live: written no longer than the TTL ago. A row
		// exactly the TTL old is kept in memory, so the store keeps it too
		// (else it would be counted here and again when memory drops it).
		if derr != nil || s.now-newest <= s.ttl {
			err = cmp.Or(err, derr)
			return false
		}
		s.expired += n
		return true
	})
	s.written = 0
	return cmp.Or(serr, err)
}

// entryTimes reads a stored entry's rows (with their multiplicity) and
// the newest of their write times: a single row, or an append-only run,
// which expires only as a whole.
func (s *joinSideState) entryTimes(v []byte) (n, newest int64, err error) {
	ver, rest, err := checkpoint.ReadStateHeader(v, s.owner, stateVersion, joinRunVersion)
	if err != nil {
		return 0, 0, err
	}
	d := decoder{src: rest, owner: s.owner}
	if ver == stateVersion {
		n, _, newest = d.varint(), d.varint(), d.varint()
		return n, newest, d.err
	}
	rows := d.uvarint()
	for i := uint64(0); i < rows && d.err == nil; i++ {
		d.varint() // matches
		newest = max(newest, d.varint())
		d.bytes()
	}
	return int64(rows), newest, d.err
}

// touch lists r of k as changed.
func (s *joinSideState) touch(k *joinKey, r *joinRow) {
	s.written++
	switch {
	case s.appendOnly:
		if r.stored {
			k.rewrite = true
		}
	case !r.dirty:
		r.dirty = true
		k.changed = append(k.changed, r)
	}
	if !k.listed {
		k.listed = true
		s.dirty = append(s.dirty, k)
	}
}

// add adds a row with identity id and encoded columns row to k, with
// matches (an outer side's count of matches); an equal identity already
// there counts one more (NoUniqueKey) or is replaced (a unique key seen
// again without its retraction: the newer row wins, as in Flink).
func (s *joinSideState) add(k *joinKey, id, row []byte, matches int64) {
	if s.appendOnly {
		r := k.newRow()
		*r = joinRow{key: k, row: k.keep(row), n: 1, matches: matches, ts: s.now}
		k.rows = append(k.rows, r)
		s.rows++
		s.touch(k, r)
		return
	}
	if i, ok := k.byID[string(id)]; ok {
		r := k.rows[i]
		if s.spec == planner.NoUniqueKey {
			r.n++
		} else {
			r.row, r.matches = string(row), matches
		}
		r.ts = s.now
		s.touch(k, r)
		return
	}
	r := k.newRow()
	*r = joinRow{key: k, id: string(id), n: 1, matches: matches, ts: s.now}
	if s.rowIsID() {
		r.row = r.id
	} else {
		r.row = string(row)
	}
	k.byID[r.id] = len(k.rows)
	k.rows = append(k.rows, r)
	s.rows++
	s.touch(k, r)
}

// remove takes one row of identity id out of k; false when k has none.
func (s *joinSideState) remove(k *joinKey, id []byte) bool {
	i, ok := k.byID[string(id)]
	if !ok {
		return false
	}
	r := k.rows[i]
	r.ts = s.now
	if r.n > 1 {
		r.n--
		s.touch(k, r)
		return true
	}
	s.removeAt(k, i)
	return true
}

// removeAt removes the row at index i of k (one of its n: the last).
func (s *joinSideState) removeAt(k *joinKey, i int) {
	r := k.rows[i]
	s.touch(k, r)
	r.n = 0
	r.gone = true
	last := len(k.rows) - 1
	if i != last {
		k.rows[i] = k.rows[last]
		if !s.appendOnly {
			k.byID[k.rows[i].id] = i
		}
	}
	k.rows[last] = nil
	k.rows = k.rows[:last]
	if !s.appendOnly {
		delete(k.byID, r.id)
	}
	s.rows--
}

// flushPart is the number of writes flush hands the store at a time.
const flushPart = 16 << 10

// flush writes the changed rows to the store and forgets the keys left
// without rows.
func (s *joinSideState) flush() error {
	s.batch.Reset()
	for _, k := range s.dirty {
		if s.appendOnly {
			if err := s.flushRuns(k); err != nil {
				return err
			}
		}
		for _, r := range k.changed {
			s.buf = append(append(s.buf[:0], k.key...), r.id...)
			switch {
			case !r.gone:
				s.vbuf = s.encodeRow(s.vbuf[:0], r)
				s.space.Put(&s.batch, k.kg, s.buf, s.vbuf)
				r.stored = true
			case r.stored:
				s.space.Delete(&s.batch, k.kg, s.buf)
			}
			r.dirty = false
			// Written in parts: the store is a working copy (a failed
			// flush fails the checkpoint; a restore starts from the last
			// complete one), and a part's buffer stays small.
			if s.batch.Len() >= flushPart {
				if err := s.space.Store().Apply(&s.batch); err != nil {
					return err
				}
				s.batch.Reset()
			}
		}
		clear(k.changed)
		k.changed, k.listed = k.changed[:0], false
		if len(k.rows) == 0 {
			s.forget(k)
		}
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	if s.batch.Len() == 0 {
		return nil
	}
	return s.space.Store().Apply(&s.batch)
}

// joinRunRows is the most rows one run entry holds.
const joinRunRows = 4096

// flushRuns writes an append-only side's key k: its new rows as a run,
// or, when a stored row changed or went, all its rows in place of its
// entries.
func (s *joinSideState) flushRuns(k *joinKey) error {
	if k.rewrite {
		for _, e := range k.entries {
			s.buf = append(append(s.buf[:0], k.key...), e...)
			s.space.Delete(&s.batch, k.kg, s.buf)
		}
		clear(k.entries)
		k.entries = k.entries[:0]
		for _, r := range k.rows {
			r.stored = false
		}
		k.rewrite = false
	}
	for first := 0; ; {
		for first < len(k.rows) && k.rows[first].stored {
			first++
		}
		if first == len(k.rows) {
			return nil
		}
		s.run = s.run[:0]
		for i := first; i < len(k.rows) && len(s.run) < joinRunRows; i++ {
			if r := k.rows[i]; !r.stored {
				s.run = append(s.run, r)
				r.stored = true
			}
		}
		s.vbuf = appendJoinRun(s.vbuf[:0], s.run)
		clear(s.run)
		s.idbuf = s.nextID(s.idbuf)
		s.buf = append(append(s.buf[:0], k.key...), s.idbuf...)
		s.space.Put(&s.batch, k.kg, s.buf, s.vbuf)
		k.entries = append(k.entries, string(s.idbuf))
		if s.batch.Len() >= flushPart {
			if err := s.space.Store().Apply(&s.batch); err != nil {
				return err
			}
			s.batch.Reset()
		}
	}
}

// appendJoinRun appends the run entry of rows: the state header
// (joinRunVersion), the number of rows, and each row's matches, time and
// columns (length-prefixed).
func appendJoinRun(dst []byte, rows []*joinRow) []byte {
	dst = checkpoint.AppendStateHeader(dst, joinRunVersion)
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for _, r := range rows {
		dst = binary.AppendVarint(dst, r.matches)
		dst = binary.AppendVarint(dst, r.ts)
		dst = binary.AppendUvarint(dst, uint64(len(r.row)))
		dst = append(dst, r.row...)
	}
	return dst
}

// joinRunVersion is the version of an append-only side's run entries
// (joinSideState.flushRuns); its single rows (stateVersion) are still
// read.
const joinRunVersion = 2

// decodeEntry adds the rows of a stored entry of an append-only side to
// k: a run, or one row of the older per-row form.
func (s *joinSideState) decodeEntry(v []byte, k *joinKey) error {
	ver, rest, err := checkpoint.ReadStateHeader(v, s.owner, stateVersion, joinRunVersion)
	if err != nil {
		return err
	}
	if ver == stateVersion {
		r := k.newRow()
		*r = joinRow{key: k, stored: true}
		if err := s.decodeRow(v, r); err != nil {
			return err
		}
		if r.n != 1 {
			return fmt.Errorf("%w: %s: an append-only join row with count %d", state.ErrCorrupt, s.owner, r.n)
		}
		k.rows = append(k.rows, r)
		s.rows++
		return nil
	}
	// One copy, never written again: the rows are views of it.
	d := decoder{src: append([]byte(nil), rest...), owner: s.owner}
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > uint64(len(d.src))) {
		return fmt.Errorf("%w: %s: a join run of %d rows in %d bytes", state.ErrCorrupt, s.owner, n, len(d.src))
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		r := k.newRow()
		*r = joinRow{key: k, n: 1, stored: true}
		r.matches = d.varint()
		r.ts = d.varint()
		r.row = unsafeString(d.bytes())
		k.rows = append(k.rows, r)
		s.rows++
	}
	d.end()
	return d.err
}

// drop flushes and forgets every key.
func (s *joinSideState) drop() error {
	if err := s.flush(); err != nil {
		return err
	}
	clear(s.keys)
	s.gen++
	s.rows = 0
	s.complete = false
	return nil
}

func (s *joinSideState) encodeRow(dst []byte, r *joinRow) []byte {
	v := checkpoint.AppendStateHeader(dst, stateVersion)
	v = binary.AppendVarint(v, r.n)
	v = binary.AppendVarint(v, r.matches)
	v = binary.AppendVarint(v, r.ts)
	if !s.rowIsID() {
		v = binary.AppendUvarint(v, uint64(len(r.row)))
		v = append(v, r.row...)
	}
	return v
}

func (s *joinSideState) decodeRow(src []byte, r *joinRow) error {
	d, err := newStateDecoder(src, s.owner)
	if err != nil {
		return err
	}
	r.n = d.varint()
	r.matches = d.varint()
	r.ts = d.varint()
	if !s.rowIsID() {
		r.row = string(d.bytes())
	} else {
		r.row = r.id
	}
	d.end()
	if d.err == nil && r.n <= 0 {
		return fmt.Errorf("%w: %s: a join row with count %d", state.ErrCorrupt, s.owner, r.n)
	}
	return d.err
}

// appendEncodedRow appends the cells of row (encodeKey form, one per
// type of ts) to bs.
func appendEncodedRow(bs []array.Builder, ts []types.T, row string) error {
	for i, t := range ts {
		var err error
		if row, err = appendEncodedCell(bs[i], t, row); err != nil {
			return err
		}
	}
	if row != "" {
		return fmt.Errorf("%w: a join row has %d bytes more than its columns", state.ErrCorrupt, len(row))
	}
	return nil
}

// appendEncodedCell appends the first cell of src (colReader.encodeKey's
// form) to b and returns the rest.
func appendEncodedCell(b array.Builder, t types.T, src string) (string, error) {
	if len(src) >= 9 && src[0] != 0 { // the common integer columns, not NULL
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(int64(binary.BigEndian.Uint64([]byte(src[1:9]))))
			return src[9:], nil
		case *array.Int32Builder:
			bb.Append(int32(binary.BigEndian.Uint64([]byte(src[1:9]))))
			return src[9:], nil
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(binary.BigEndian.Uint64([]byte(src[1:9]))))
			return src[9:], nil
		}
	}
	if src == "" {
		return "", fmt.Errorf("%w: a join row ends before its columns", state.ErrCorrupt)
	}
	if src[0] == 0 {
		b.AppendNull()
		return src[1:], nil
	}
	src = src[1:]
	need := func(n int) bool { return len(src) >= n }
	switch class(t.Kind) {
	case 'f':
		if !need(8) {
			break
		}
		f := math.Float64frombits(binary.BigEndian.Uint64([]byte(src[:8])))
		appendTyped(b, t, 0, f, decimal128.Num{}, "")
		return src[8:], nil
	case 'd':
		if !need(16) {
			break
		}
		hi := binary.BigEndian.Uint64([]byte(src[:8]))
		lo := binary.BigEndian.Uint64([]byte(src[8:16]))
		appendTyped(b, t, 0, 0, decimal128.New(int64(hi), lo), "")
		return src[16:], nil
	case 's':
		n, m := binary.Uvarint([]byte(src[:min(len(src), binary.MaxVarintLen64)]))
		if m <= 0 || uint64(len(src)-m) < n {
			break
		}
		s := src[m : m+int(n)]
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(s)
		case *array.BinaryBuilder:
			bb.AppendString(s)
		default:
			return "", fmt.Errorf("join: column of type %s in a %T", t, b)
		}
		return src[m+int(n):], nil
	default:
		if !need(8) {
			break
		}
		v := int64(binary.BigEndian.Uint64([]byte(src[:8])))
		switch bb := b.(type) {
		case *array.NullBuilder:
			bb.AppendNull()
		case *array.Int64Builder:
			bb.Append(v)
		default:
			appendTyped(b, t, v, 0, decimal128.Num{}, "")
		}
		return src[8:], nil
	}
	return "", fmt.Errorf("%w: a join row's %s cell is cut short", state.ErrCorrupt, t)
}

// appendCell appends row i of the column r reads to b (of r's type).
func appendCell(b array.Builder, r *colReader, i int) {
	if r.isNull(i) {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.StringBuilder:
		bb.Append(r.str.Value(i))
	case *array.BinaryBuilder:
		bb.Append(r.bin.Value(i))
	case *array.BooleanBuilder:
		bb.Append(r.bl.Value(i))
	case *array.Float32Builder:
		bb.Append(r.f32[i])
	case *array.Float64Builder:
		bb.Append(r.f64[i])
	case *array.Decimal128Builder:
		bb.Append(r.dec[i])
	case *array.Int64Builder:
		bb.Append(r.i64[i])
	case *array.Int32Builder:
		bb.Append(r.i32[i])
	case *array.Int16Builder:
		bb.Append(r.i16[i])
	case *array.Int8Builder:
		bb.Append(r.i8[i])
	case *array.Date32Builder:
		bb.Append(arrow.Date32(r.i32[i]))
	case *array.Time32Builder:
		bb.Append(arrow.Time32(r.i32[i]))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(r.i64[i]))
	case *array.NullBuilder:
		bb.AppendNull()
	default:
		panic(fmt.Sprintf("exec: join column builder %T", b))
	}
}
