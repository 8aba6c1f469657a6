package exec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"time"
	"unsafe"

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
// row. A lazy side (append-only, its rows holding no match counts) does
// not load a key to add rows to it: the key is partial, holding its new
// rows only, until the other side joins with it. evict bounds memory: it
// writes back and drops the keys not used since its last pass (a second
// chance), until the side holds the bytes asked for; later uses load them
// again.
//
// In memory a key's rows are records without pointers (joinRow) in one
// slice, their columns and identities bytes of one slice (joinKey.data),
// so that the garbage collector never looks into them, and keys are found
// by a 64-bit hash of their encoding (chained when two share one).
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
	// lazy: an append-only side whose rows hold no match counts (an inner
	// side of a join that is no semi or anti join), whose new rows are
	// added to partial keys (joinKey.partial) without reading the store.
	lazy bool
	// room is the bytes the keys in memory have allocated for their
	// rows (joinKey.room, as last counted: joinKey.counted), for bytes.
	room  int64
	owner string
	// ttl (milliseconds; 0: none) and now (the batch's processing time,
	// Unix milliseconds): a row written before now - ttl has expired.
	ttl, now int64
	// expired counts the rows (with their multiplicity) dropped by the TTL.
	expired int64
	// keys holds the keys in memory by the hash of their encoding
	// (joinKeyHash); nkeys counts them.
	keys  map[uint64]*joinKey
	nkeys int
	// gen counts the times keys lost a key: a link to one of them
	// (joinKey.peer) made in an earlier generation may be stale.
	gen   uint64
	dirty []*joinKey
	// complete: the store holds no key that is not in keys (a fresh start,
	// no evict since), so a new key needs no store read.
	complete bool
	rows     int
	batch    state.WriteBatch
	buf      []byte
	vbuf     []byte
	idbuf    []byte
	run      []int32
	// sweeper walks the stored rows for those the TTL dropped that no key
	// in memory holds any more (sweepStore); written counts the rows
	// written since its last walk.
	sweeper *state.Sweeper
	written int
}

// joinSeed seeds the hash of join keys in memory (joinKeyHash).
var joinSeed = maphash.MakeSeed()

// joinKeyHash is the hash keys are found by in joinSideState.keys.
func joinKeyHash(key []byte) uint64 { return maphash.Bytes(joinSeed, key) }

// rowIsID reports whether a row's identity is its encoded columns.
func (s *joinSideState) rowIsID() bool { return s.spec == planner.NoUniqueKey && !s.appendOnly }

// joinKey is one join key's rows. Its fields are laid out by use, in
// three 64-byte lines (a 192-byte record is allocated on a line
// boundary): what finding it and listing it as changed reads, what
// joining a row with it and adding one reads, and the rest.
type joinKey struct {
	// key is the key's encoding: in inline when it fits, so that finding
	// a key by its hash reads no other memory than this record's.
	key  string
	hash uint64
	// next is the next key in memory of the same hash.
	next   *joinKey
	inline [joinInlineKey]byte
	kg     int32
	listed bool
	// rewrite (append-only sides): one of its stored rows changed or
	// went, so the next flush deletes its entries and writes all its rows
	// anew.
	rewrite bool
	// partial (lazy sides): the key's stored rows are not in memory, only
	// those added since it was made (and its entries those it wrote);
	// load reads the others before the other side joins with it.
	partial bool
	// ref: used since evict's last pass.
	ref bool

	// peer is the other side's rows of the same key, as found in the other
	// side's generation peerGen (see joinSideState.gen).
	peer    *joinKey
	peerGen uint64
	// rows are the key's rows, their columns and identities in data;
	// garbage counts the bytes of data no row refers to any more.
	rows []joinRow
	data []byte

	garbage int32
	// counted is the key's room as the side last counted it (recount).
	counted int32
	// byID indexes rows by identity once there are more than
	// joinScanRows (fewer are compared in turn); never on append-only
	// sides.
	byID map[string]int32
	// gone lists the identities of stored rows removed since the last
	// flush (each length-prefixed), deleted from the store by flush.
	gone []byte
	// entries (append-only sides) are the identities of the key's entries
	// in the store (each length-prefixed).
	entries []byte
}

// joinRow is one stored row: its encoded columns (encodeKey form) are
// data[off:off+size] of its key, followed by its identity (idSize bytes)
// when that is neither its columns nor empty.
type joinRow struct {
	off          int
	size, idSize uint32
	n            int64 // equal rows (NoUniqueKey); 1 otherwise
	// matches is the number of rows of the other side it joins with
	// (counted with their multiplicity): outer sides only.
	matches int64
	// ts is when the row was last written (inserted, counted again, its
	// matches changed), in Unix milliseconds of processing time: with a
	// TTL it expires ts + TTL.
	ts int64
	// dirty: changed since the last flush (not on append-only sides: their
	// new rows are those not stored).
	dirty  bool
	stored bool
}

// joinInlineKey is the longest key encoding kept in its joinKey record
// (a BIGINT key takes 9 bytes).
const joinInlineKey = 16

// joinScanRows is the most rows of a key found by comparing identities in
// turn; a key with more indexes them (joinKey.byID).
const joinScanRows = 8

// cols returns r's encoded columns.
func (k *joinKey) cols(r *joinRow) []byte {
	end := r.off + int(r.size)
	return k.data[r.off:end:end]
}

// idOf returns the identity of r, a row of k.
func (s *joinSideState) idOf(k *joinKey, r *joinRow) []byte {
	if s.rowIsID() {
		return k.cols(r)
	}
	lo := r.off + int(r.size)
	return k.data[lo : lo+int(r.idSize) : lo+int(r.idSize)]
}

// put appends a row's columns and identity (unless that is its columns)
// to k's data and returns the row that refers to them.
func (s *joinSideState) put(k *joinKey, cols, id []byte) joinRow {
	if s.rowIsID() {
		id = nil
	}
	r := joinRow{off: len(k.data), size: uint32(len(cols)), idSize: uint32(len(id))}
	k.data = append(append(k.data, cols...), id...)
	return r
}

// release counts r's bytes, of k, as garbage, and rewrites k's data
// without the garbage when it is most of it.
func (s *joinSideState) release(k *joinKey, r *joinRow) {
	k.garbage += int32(r.size) + int32(r.idSize)
	if k.garbage < 256 || 2*int(k.garbage) < len(k.data) {
		return
	}
	data := make([]byte, 0, len(k.data)-int(k.garbage))
	for i := range k.rows {
		r := &k.rows[i]
		n := int(r.size) + int(r.idSize)
		off := len(data)
		data = append(data, k.data[r.off:r.off+n]...)
		r.off = off
	}
	k.data, k.garbage = data, 0
}

// find returns the index of the row of identity id in k, -1 when there is
// none.
func (s *joinSideState) find(k *joinKey, id []byte) int {
	if s.appendOnly {
		return -1 // its rows are never looked up
	}
	if k.byID != nil {
		if i, ok := k.byID[string(id)]; ok {
			return int(i)
		}
		return -1
	}
	for i := range k.rows {
		if string(s.idOf(k, &k.rows[i])) == string(id) {
			return i
		}
	}
	return -1
}

// indexRow adds row i of k to k.byID, making it when k has grown past
// joinScanRows.
func (s *joinSideState) indexRow(k *joinKey, i int) {
	if s.appendOnly {
		return
	}
	if k.byID == nil {
		if len(k.rows) <= joinScanRows {
			return
		}
		k.byID = make(map[string]int32, 2*len(k.rows))
		for j := range k.rows {
			k.byID[string(s.idOf(k, &k.rows[j]))] = int32(j)
		}
		return
	}
	k.byID[string(s.idOf(k, &k.rows[i]))] = int32(i)
}

// newJoinSideState returns a side's state in space. matched says that
// the side's rows count their matches (an outer side) or that the join
// needs a key's rows when a row of this side comes (a semi or anti join),
// so that its keys are always loaded whole.
func newJoinSideState(space *state.KeySpace, spec planner.JoinInputSpec, appendOnly, matched bool, owner string, fresh bool) *joinSideState {
	s := &joinSideState{space: space, spec: spec, owner: owner, keys: map[uint64]*joinKey{}, complete: fresh}
	if spec == planner.NoUniqueKey && appendOnly {
		// Unique across restarts of the subtask: identities written by an
		// earlier run have an older base.
		s.appendOnly, s.seqBase = true, uint64(time.Now().UnixNano())
		s.lazy = !matched
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
// With create (a row of this side is added to the key) a lazy side makes
// a key not in memory partial instead of loading it; without it (the
// other side joins with the key) every row of the key is in memory.
func (s *joinSideState) lookup(kg int, key []byte, create bool) (*joinKey, error) {
	return s.lookupHash(kg, key, joinKeyHash(key), create)
}

// lookupHash is lookup of a key whose joinKeyHash is h.
func (s *joinSideState) lookupHash(kg int, key []byte, h uint64, create bool) (*joinKey, error) {
	for k := s.keys[h]; k != nil; k = k.next {
		if k.key == string(key) {
			k.ref = true
			if k.partial && !create {
				if err := s.load(k); err != nil {
					return nil, err
				}
			}
			return k, nil
		}
	}
	var k *joinKey
	if create && s.lazy && !s.complete {
		k = s.newKey(kg, key)
		k.partial = true
	}
	if k == nil && !s.complete {
		err := s.space.ScanPrefix(kg, key, func(sk, v []byte) error {
			if k == nil {
				k = s.newKey(kg, key)
			}
			if s.appendOnly {
				k.entries = appendBytes(k.entries, sk[len(key):])
				return s.decodeEntry(v, k)
			}
			return s.decodeRow(v, k, sk[len(key):])
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
	k.hash, k.next = h, s.keys[h]
	k.ref = true
	s.keys[h] = k
	s.nkeys++
	s.recount(k)
	return k, nil
}

// load reads the stored rows of k, a partial key. The rows k holds are
// written first (so that all are stored, and k's entries list every one
// of them), then all are read back, in the order they were written.
func (s *joinSideState) load(k *joinKey) error {
	if k.listed {
		s.batch.Reset()
		if err := s.flushRuns(k); err != nil {
			return err
		}
		if s.batch.Len() > 0 {
			if err := s.space.Store().Apply(&s.batch); err != nil {
				return err
			}
			s.batch.Reset()
		}
	}
	s.rows -= len(k.rows)
	k.rows, k.data, k.garbage, k.entries = k.rows[:0], k.data[:0], 0, k.entries[:0]
	k.partial = false
	key := []byte(k.key)
	err := s.space.ScanPrefix(int(k.kg), key, func(sk, v []byte) error {
		k.entries = appendBytes(k.entries, sk[len(key):])
		return s.decodeEntry(v, k)
	})
	s.recount(k)
	return err
}

// joinRowBytes is the memory a row's record takes in its key's rows;
// joinKeyBytes what a key takes besides its rows: its record, and its
// place in the map and the dirty list; joinIndexBytes what a row's entry
// in its key's index (joinKey.byID) takes besides its identity's bytes.
const (
	joinRowBytes   = int64(unsafe.Sizeof(joinRow{}))
	joinKeyBytes   = int64(unsafe.Sizeof(joinKey{})) + 48
	joinIndexBytes = 48
)

// room is the memory k's rows take: the room allocated for their records,
// their bytes, the index and the lists of stored identities, as allocated
// rather than as used (a key's data that doubled holds up to half again).
func (k *joinKey) room() int64 {
	n := int64(cap(k.data)) + int64(cap(k.rows))*joinRowBytes + int64(cap(k.gone)+cap(k.entries))
	if k.byID != nil {
		n += int64(len(k.byID))*joinIndexBytes + int64(len(k.data)) - int64(k.garbage)
	}
	return n
}

// recount counts k's room again, after a change to its rows.
func (s *joinSideState) recount(k *joinKey) {
	n := int32(min(k.room(), math.MaxInt32)) // a key past 2 GiB counts 2 GiB
	s.room += int64(n) - int64(k.counted)
	k.counted = n
}

// bytes is about the memory the side's keys in memory take.
func (s *joinSideState) bytes() int64 {
	return s.room + int64(s.nkeys)*joinKeyBytes
}

// evict writes every change back (flush), then drops keys from memory
// until the side holds at most maxBytes and maxKeys: first those not used
// since the last evict (the others lose their second chance), then, if
// that is not enough, any. Later uses of a dropped key read it from the
// store again. Keys returned by lookup before evict must not be used
// after it.
func (s *joinSideState) evict(maxBytes int64, maxKeys int) error {
	if err := s.flush(); err != nil {
		return err
	}
	over := func() bool { return s.bytes() > maxBytes || s.nkeys > maxKeys }
	for pass := 0; pass < 2 && over(); pass++ {
		for _, head := range s.keys {
			for k := head; k != nil; {
				next := k.next
				if k.ref && pass == 0 {
					k.ref = false
				} else {
					s.rows -= len(k.rows)
					s.forget(k)
					k.peer = nil
					s.complete = false
					if !over() {
						return nil
					}
				}
				k = next
			}
		}
	}
	return nil
}

// unlink clears the links of s's keys to keys that o has dropped since
// they were made (see joinKey.peer), so that no dropped key stays
// reachable.
func (s *joinSideState) unlink(o *joinSideState) {
	for _, head := range s.keys {
		for k := head; k != nil; k = k.next {
			if k.peer != nil && k.peerGen != o.gen {
				k.peer = nil
			}
		}
	}
}

// forget removes k from the keys in memory.
func (s *joinSideState) forget(k *joinKey) {
	switch p := s.keys[k.hash]; {
	case p == k && k.next == nil:
		delete(s.keys, k.hash)
	case p == k:
		s.keys[k.hash] = k.next
	default:
		for p.next != k {
			p = p.next
		}
		p.next = k.next
	}
	k.next = nil
	s.nkeys--
	s.gen++
	s.room -= int64(k.counted)
	k.counted = 0
}

// peerOf returns the other side's (o's) rows of mine's key (encoded as
// key, of hash h), nil when it has none: through mine's link while o has
// forgotten no key since it was made, else by o.lookup (which then makes
// the link).
func (s *joinSideState) peerOf(o *joinSideState, mine *joinKey, key []byte, h uint64) (*joinKey, error) {
	if mine.peer != nil && mine.peerGen == o.gen {
		return mine.peer, nil
	}
	k, err := o.lookupHash(int(mine.kg), key, h, false)
	if k != nil {
		mine.peer, mine.peerGen = k, o.gen
	}
	return k, err
}

// newKey returns an empty key.
func (s *joinSideState) newKey(kg int, key []byte) *joinKey {
	k := &joinKey{kg: int32(kg)}
	if len(key) <= len(k.inline) && len(key) > 0 {
		n := copy(k.inline[:], key)
		k.key = unsafe.String(&k.inline[0], n)
	} else {
		k.key = string(key)
	}
	return k
}

// touchRow lists row i of k as changed (its match count): a write.
func (s *joinSideState) touchRow(k *joinKey, i int) {
	k.rows[i].ts = s.now
	s.touch(k, i)
}

// live drops the rows of k whose TTL has passed and returns the others.
func (s *joinSideState) live(k *joinKey) []joinRow {
	if k == nil {
		return nil
	}
	if s.ttl <= 0 {
		return k.rows
	}
	for i := 0; i < len(k.rows); {
		r := &k.rows[i]
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
	for _, head := range s.keys {
		for k := head; k != nil; {
			next := k.next
			s.live(k)
			if len(k.rows) == 0 && !k.listed {
				s.forget(k)
			}
			k = next
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

// touch lists row i of k as changed.
func (s *joinSideState) touch(k *joinKey, i int) {
	s.written++
	r := &k.rows[i]
	switch {
	case s.appendOnly:
		if r.stored {
			k.rewrite = true
		}
	default:
		r.dirty = true
	}
	s.list(k)
}

// list lists k as changed.
func (s *joinSideState) list(k *joinKey) {
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
	if !s.appendOnly {
		if i := s.find(k, id); i >= 0 {
			r := &k.rows[i]
			if s.spec == planner.NoUniqueKey {
				r.n++
			} else {
				old := *r
				nr := s.put(k, row, id)
				r.off, r.size, r.idSize, r.matches = nr.off, nr.size, nr.idSize, matches
				s.release(k, &old)
			}
			r.ts = s.now
			s.touch(k, i)
			s.recount(k)
			return
		}
	}
	r := s.put(k, row, id)
	r.n, r.matches, r.ts = 1, matches, s.now
	k.rows = append(k.rows, r)
	s.indexRow(k, len(k.rows)-1)
	s.rows++
	s.touch(k, len(k.rows)-1)
	s.recount(k)
}

// remove takes one row of identity id out of k; false when k has none.
func (s *joinSideState) remove(k *joinKey, id []byte) bool {
	i := s.find(k, id)
	if i < 0 {
		return false
	}
	r := &k.rows[i]
	r.ts = s.now
	if r.n > 1 {
		r.n--
		s.touch(k, i)
		return true
	}
	s.removeAt(k, i)
	return true
}

// removeAt removes the row at index i of k (one of its n: the last). The
// last row takes its index.
func (s *joinSideState) removeAt(k *joinKey, i int) {
	s.written++
	r := k.rows[i]
	switch {
	case s.appendOnly:
		if r.stored {
			k.rewrite = true
		}
	case r.stored:
		k.gone = appendBytes(k.gone, s.idOf(k, &r))
	}
	s.list(k)
	if k.byID != nil {
		delete(k.byID, string(s.idOf(k, &r)))
	}
	last := len(k.rows) - 1
	if i != last {
		k.rows[i] = k.rows[last]
		if k.byID != nil {
			k.byID[string(s.idOf(k, &k.rows[i]))] = int32(i)
		}
	}
	k.rows = k.rows[:last]
	s.rows--
	s.release(k, &r)
	s.recount(k)
}

// flush writes the changed rows to the store and forgets the keys left
// without rows.
func (s *joinSideState) flush() error {
	s.batch.Reset()
	for _, k := range s.dirty {
		if s.appendOnly {
			if err := s.flushRuns(k); err != nil {
				return err
			}
		} else if err := s.flushRows(k); err != nil {
			return err
		}
		k.listed = false
		if len(k.rows) == 0 {
			s.forget(k)
		} else {
			s.recount(k)
		}
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	if s.batch.Len() == 0 {
		return nil
	}
	return s.space.Store().Apply(&s.batch)
}

// flushRows writes the changes of k's rows (an entry per row): first the
// deletes of the rows gone (an identity that went and came back is then
// written again), then the rows changed.
func (s *joinSideState) flushRows(k *joinKey) error {
	for g := k.gone; len(g) > 0; {
		n, m := binary.Uvarint(g)
		s.buf = append(append(s.buf[:0], k.key...), g[m:m+int(n)]...)
		g = g[m+int(n):]
		s.space.Delete(&s.batch, int(k.kg), s.buf)
		if err := s.space.ApplyPart(&s.batch); err != nil {
			return err
		}
	}
	k.gone = k.gone[:0]
	for i := range k.rows {
		r := &k.rows[i]
		if !r.dirty {
			continue
		}
		s.buf = append(append(s.buf[:0], k.key...), s.idOf(k, r)...)
		s.vbuf = s.encodeRow(s.vbuf[:0], k, r)
		s.space.Put(&s.batch, int(k.kg), s.buf, s.vbuf)
		r.stored, r.dirty = true, false
		if err := s.space.ApplyPart(&s.batch); err != nil {
			return err
		}
	}
	return nil
}

// joinRunRows is the most rows one run entry holds.
const joinRunRows = 4096

// flushRuns writes an append-only side's key k: its new rows as a run,
// or, when a stored row changed or went, all its rows in place of its
// entries.
func (s *joinSideState) flushRuns(k *joinKey) error {
	if k.rewrite {
		for e := k.entries; len(e) > 0; {
			n, m := binary.Uvarint(e)
			s.buf = append(append(s.buf[:0], k.key...), e[m:m+int(n)]...)
			e = e[m+int(n):]
			s.space.Delete(&s.batch, int(k.kg), s.buf)
		}
		k.entries = k.entries[:0]
		for i := range k.rows {
			k.rows[i].stored = false
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
			if r := &k.rows[i]; !r.stored {
				s.run = append(s.run, int32(i))
				r.stored = true
			}
		}
		s.vbuf = appendJoinRunHeader(s.vbuf[:0], len(s.run))
		for _, i := range s.run {
			r := &k.rows[i]
			s.vbuf = appendJoinRunRow(s.vbuf, k.cols(r), r.matches, r.ts)
		}
		s.idbuf = s.nextID(s.idbuf)
		s.buf = append(append(s.buf[:0], k.key...), s.idbuf...)
		s.space.Put(&s.batch, int(k.kg), s.buf, s.vbuf)
		k.entries = appendBytes(k.entries, s.idbuf)
		if err := s.space.ApplyPart(&s.batch); err != nil {
			return err
		}
	}
}

// A run entry (joinRunVersion) is the state header, the number of rows,
// and each row's matches, time and columns (length-prefixed):
// appendJoinRunHeader, then appendJoinRunRow once per row.
func appendJoinRunHeader(dst []byte, rows int) []byte {
	dst = checkpoint.AppendStateHeader(dst, joinRunVersion)
	return binary.AppendUvarint(dst, uint64(rows))
}

func appendJoinRunRow(dst, cols []byte, matches, ts int64) []byte {
	dst = binary.AppendVarint(dst, matches)
	dst = binary.AppendVarint(dst, ts)
	dst = binary.AppendUvarint(dst, uint64(len(cols)))
	return append(dst, cols...)
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
		if err := s.decodeRow(v, k, nil); err != nil {
			return err
		}
		if r := &k.rows[len(k.rows)-1]; r.n != 1 {
			return fmt.Errorf("%w: %s: an append-only join row with count %d", state.ErrCorrupt, s.owner, r.n)
		}
		return nil
	}
	d := decoder{src: rest, owner: s.owner}
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > uint64(len(d.src))) {
		return fmt.Errorf("%w: %s: a join run of %d rows in %d bytes", state.ErrCorrupt, s.owner, n, len(d.src))
	}
	k.data = growBytes(k.data, len(d.src))
	k.rows = growRows(k.rows, int(n))
	for i := uint64(0); i < n && d.err == nil; i++ {
		matches := d.varint()
		ts := d.varint()
		r := s.put(k, d.bytes(), nil)
		r.n, r.matches, r.ts, r.stored = 1, matches, ts, true
		k.rows = append(k.rows, r)
		s.rows++
	}
	d.end()
	return d.err
}

// growBytes returns b with room for n more bytes.
func growBytes(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	return append(make([]byte, 0, max(2*cap(b), len(b)+n)), b...)
}

// growRows returns rows with room for n more.
func growRows(rows []joinRow, n int) []joinRow {
	if cap(rows)-len(rows) >= n {
		return rows
	}
	return append(make([]joinRow, 0, max(2*cap(rows), len(rows)+n)), rows...)
}

// encodeRow appends the store value of r, a row of k.
func (s *joinSideState) encodeRow(dst []byte, k *joinKey, r *joinRow) []byte {
	v := checkpoint.AppendStateHeader(dst, stateVersion)
	v = binary.AppendVarint(v, r.n)
	v = binary.AppendVarint(v, r.matches)
	v = binary.AppendVarint(v, r.ts)
	if !s.rowIsID() {
		v = appendBytes(v, k.cols(r))
	}
	return v
}

// decodeRow adds to k the stored row src of identity id (as stored).
func (s *joinSideState) decodeRow(src []byte, k *joinKey, id []byte) error {
	d, err := newStateDecoder(src, s.owner)
	if err != nil {
		return err
	}
	n := d.varint()
	matches := d.varint()
	ts := d.varint()
	cols := id
	if !s.rowIsID() {
		cols = d.bytes()
	}
	d.end()
	if d.err == nil && n <= 0 {
		return fmt.Errorf("%w: %s: a join row with count %d", state.ErrCorrupt, s.owner, n)
	}
	if d.err != nil {
		return d.err
	}
	if s.appendOnly {
		id = nil
	}
	r := s.put(k, cols, id)
	r.n, r.matches, r.ts, r.stored = n, matches, ts, true
	k.rows = append(k.rows, r)
	s.indexRow(k, len(k.rows)-1)
	s.rows++
	return nil
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
