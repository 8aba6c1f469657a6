package exec

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindTemporalJoin, func(t *subtask) (operator, error) { return newTemporalJoin(t) })
}

// temporalJoinOp is the event-time temporal join (planner.TemporalJoinSpec),
// Flink's TemporalRowTimeJoinOperator. Per join key it holds the probe rows
// not yet joined (input 0, in arrival order) and the versions of the
// versioned table (input 1, by row time: a later row of an equal time
// replaces the earlier one, a -D row is a deletion from its time on, a -U
// row is no version and is ignored).
//
// Nothing is emitted when a row arrives. Each key has at most one timer,
// at the earliest time it has work for: its earliest probe row, or the
// time from which an older version can be dropped. When the operator's
// watermark (the minimum over both inputs) reaches a key's timer, its
// probe rows with a time at or before the watermark are joined, in arrival
// order, with the latest version at or before their time (none, or a
// deletion, or one the residual condition rejects: nothing for an inner
// join, the row padded with NULLs for a left join), and removed; then
// every version older than the one valid at the watermark is dropped, and
// that one too when it is a deletion (no later probe row can see past it).
// So a key's state is its live version, the versions after the watermark,
// and the probe rows after the watermark. A probe row that arrives behind
// the watermark is not dropped: it joins at the next watermark, with what
// is left of its key's versions, as in Flink. A probe row with a NULL time
// has no version: a left join emits it padded at once. A version with a
// NULL time or a NULL key is never joined and not kept.
//
// State: everything is held in memory (the timers too) and changed entries
// are written back to the store in one batch at each barrier; a restore
// loads all of the subtask's entries. Store layout: key space 1, probe rows
// under join key + arrival sequence (8 bytes), value: header, time, row;
// key space 2, versions under join key + time (8 bytes, order preserving),
// value: header, deletion flag, row. Rows are colReader.encodeKey cells.
type temporalJoinOp struct {
	t      *taskContext
	spec   *planner.TemporalJoinSpec
	owner  string
	maxPar int
	probes *state.KeySpace
	vers   *state.KeySpace
	layout string

	residual *evaluator
	outSch   *arrow.Schema
	outT     []types.T

	side [2]temporalInput

	keys   map[string]*tjKey
	timers tjTimers
	// slots numbers the keys for the timers (which hold no pointer, so
	// that the heap costs the garbage collector nothing); free lists the
	// numbers of forgotten keys.
	slots []*tjKey
	free  []int32
	dirty []*tjKey
	seq   uint64
	// nProbes and nVersions count what is held (for tests and metrics).
	nProbes, nVersions int

	// per batch / per firing
	hashes []uint64
	keyBuf []byte
	rowBuf []byte
	outL   []string
	outR   []*tjVersion
	batch  state.WriteBatch
}

// temporalInput is what the operator reads of one input.
type temporalInput struct {
	keys  []int
	keyT  []types.T
	keyR  []colReader
	colR  []colReader // the first width columns
	colT  []types.T
	timeR colReader
	time  int
}

// tjKey is the state of one join key.
type tjKey struct {
	key      string
	kg       int
	probes   []*tjProbe   // arrival order
	versions []*tjVersion // by time, ascending
	// gone lists the stored entries removed since the last flush: the
	// space and the 8-byte suffix.
	gone   []tjGone
	timer  int64 // noTimer when none is set
	slot   int32
	listed bool
}

type tjProbe struct {
	seq    uint64
	time   int64
	row    string
	stored bool
}

type tjVersion struct {
	time    int64
	deleted bool
	row     string
	dirty   bool
	stored  bool
}

type tjGone struct {
	space  byte
	suffix [8]byte
}

const noTimer = maxWatermark

// The key spaces of a temporal join's store (spaceMeta: the layout).
const (
	spaceTemporalProbes   = 1
	spaceTemporalVersions = 2
)

func newTemporalJoin(t *subtask) (*temporalJoinOp, error) {
	sp := t.op.Spec.(*planner.TemporalJoinSpec)
	j := &temporalJoinOp{spec: sp, outSch: t.op.Schema.Arrow(), maxPar: t.job.graph.MaxParallelism, keys: map[string]*tjKey{}}
	for _, c := range t.op.Schema {
		j.outT = append(j.outT, c.Type)
	}
	if sp.Residual != nil {
		j.residual = compileExpr(sp.Residual)
	}
	mk := func(keys []int, width, time int, sch types.Schema) temporalInput {
		in := temporalInput{keys: keys, keyR: make([]colReader, len(keys)), colR: make([]colReader, width), time: time}
		for _, c := range sch[:width] {
			in.colT = append(in.colT, c.Type)
		}
		for _, k := range keys {
			in.keyT = append(in.keyT, sch[k].Type)
		}
		return in
	}
	j.side[0] = mk(sp.LeftKeys, sp.LeftWidth, sp.LeftTime, sp.LeftSchema)
	j.side[1] = mk(sp.RightKeys, sp.RightWidth, sp.RightTime, sp.RightSchema)
	j.layout = fmt.Sprintf("temporal join %s; probe keys %v time %d columns %v; versions keys %v time %d columns %v",
		sp.Type, sp.LeftKeys, sp.LeftTime, nullableTypes(j.side[0].colT), sp.RightKeys, sp.RightTime, nullableTypes(j.side[1].colT))
	return j, nil
}

func nullableTypes(ts []types.T) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Nullable().String())
	}
	return out
}

func (j *temporalJoinOp) open(t *taskContext) error {
	j.t = t
	j.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: j.owner, Layout: j.layout})
	if err != nil {
		return err
	}
	j.probes = st.space(spaceTemporalProbes, "probe rows")
	j.vers = st.space(spaceTemporalVersions, "versions")
	st.flushWith(j.flush)
	if t.restored == nil {
		return nil
	}
	return j.restore()
}

// restore loads every probe row and version of the store, and sets each
// key's timer at its earliest work.
func (j *temporalJoinOp) restore() error {
	err := j.probes.Scan(func(kg int, k, v []byte) error {
		if len(k) < 8 {
			return fmt.Errorf("%w: %s: probe key of %d bytes", errCorrupt, j.owner, len(k))
		}
		d, err := newStateDecoder(v, j.owner)
		if err != nil {
			return err
		}
		p := &tjProbe{seq: binary.BigEndian.Uint64(k[len(k)-8:]), stored: true}
		p.time = d.varint()
		p.row = string(d.bytes())
		d.end()
		if d.err != nil {
			return d.err
		}
		key := j.key(kg, k[:len(k)-8])
		key.probes = append(key.probes, p)
		j.nProbes++
		j.seq = max(j.seq, p.seq+1)
		return nil
	})
	if err != nil {
		return err
	}
	err = j.vers.Scan(func(kg int, k, v []byte) error {
		if len(k) < 8 {
			return fmt.Errorf("%w: %s: version key of %d bytes", errCorrupt, j.owner, len(k))
		}
		d, err := newStateDecoder(v, j.owner)
		if err != nil {
			return err
		}
		ver := &tjVersion{time: decodeTime(k[len(k)-8:]), stored: true}
		ver.deleted = d.bool()
		ver.row = string(d.bytes())
		d.end()
		if d.err != nil {
			return d.err
		}
		key := j.key(kg, k[:len(k)-8])
		key.versions = append(key.versions, ver) // the scan is in key order: by time
		j.nVersions++
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range j.keys {
		sort.Slice(k.probes, func(a, b int) bool { return k.probes[a].seq < k.probes[b].seq })
		j.schedule(k)
	}
	return nil
}

// key returns the state of key in kg, created empty when there is none.
func (j *temporalJoinOp) key(kg int, key []byte) *tjKey {
	if k, ok := j.keys[string(key)]; ok {
		return k
	}
	k := &tjKey{key: string(key), kg: kg, timer: noTimer}
	j.keys[k.key] = k
	if n := len(j.free); n > 0 {
		k.slot, j.free = j.free[n-1], j.free[:n-1]
		j.slots[k.slot] = k
	} else {
		k.slot = int32(len(j.slots))
		j.slots = append(j.slots, k)
	}
	return k
}

// forget drops k, which holds nothing, from memory (its removed entries
// stay listed for the next flush).
func (j *temporalJoinOp) forget(k *tjKey) {
	delete(j.keys, k.key)
	j.slots[k.slot] = nil
	j.free = append(j.free, k.slot)
}

// touch lists k for the next flush.
func (j *temporalJoinOp) touch(k *tjKey) {
	if !k.listed {
		k.listed = true
		j.dirty = append(j.dirty, k)
	}
}

// setTimer sets k's timer at time when it has none or a later one.
func (j *temporalJoinOp) setTimer(k *tjKey, time int64) {
	if time >= k.timer {
		return
	}
	k.timer = time
	j.timers.push(tjTimer{time: time, slot: k.slot})
}

// schedule sets k's timer at its earliest work: its earliest probe row, a
// version after the first (which makes the first droppable), or a leading
// deletion. After k fired at a watermark, all of them are after it.
func (j *temporalJoinOp) schedule(k *tjKey) {
	t := int64(noTimer)
	for _, p := range k.probes {
		t = min(t, p.time)
	}
	if len(k.versions) > 1 {
		t = min(t, k.versions[1].time)
	}
	if len(k.versions) > 0 && k.versions[0].deleted {
		t = min(t, k.versions[0].time)
	}
	if t != noTimer {
		j.setTimer(k, t)
	}
}

func (j *temporalJoinOp) process(input int, b Batch, out *emitter) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	rec := b.Rec
	in := &j.side[input]
	for k, c := range in.keys {
		in.keyR[k].reset(in.keyT[k], rec.Column(c))
	}
	for c := range in.colR {
		in.colR[c].reset(in.colT[c], rec.Column(c))
	}
	in.timeR.reset(in.colT[in.time], rec.Column(in.time))
	if cap(j.hashes) < n {
		j.hashes = make([]uint64, n)
	}
	h := j.hashes[:n]
	clear(h)
	for k, c := range in.keys {
		functions.HashColumn(functions.Vec{Array: rec.Column(c), Type: in.keyT[k]}, n, h)
	}
	var padded []int
	for i := 0; i < n; i++ {
		op := b.Op(i)
		if input == 0 {
			if op != Insert {
				return fmt.Errorf("%s: the probe input of a temporal join must be append-only, got a %s row", j.owner, op)
			}
			if in.timeR.isNull(i) {
				if j.spec.Type == planner.LeftJoin {
					padded = append(padded, i)
				}
				continue
			}
			k := j.key(state.KeyGroup(h[i], j.maxPar), j.encodeKey(in, i))
			p := &tjProbe{seq: j.seq, time: in.timeR.int(i), row: string(j.encodeRow(in, i))}
			j.seq++
			k.probes = append(k.probes, p)
			j.nProbes++
			j.touch(k)
			j.setTimer(k, p.time)
			continue
		}
		if op == UpdateBefore || in.timeR.isNull(i) || j.nullKey(in, i) {
			continue
		}
		k := j.key(state.KeyGroup(h[i], j.maxPar), j.encodeKey(in, i))
		j.addVersion(k, &tjVersion{time: in.timeR.int(i), deleted: op == Delete, row: string(j.encodeRow(in, i)), dirty: true})
	}
	if len(padded) > 0 {
		if err := j.emitPaddedRows(in, padded, out); err != nil {
			return err
		}
	}
	return j.bound()
}

// bound writes the changes back early when more keys than the state cache
// holds changed since the last flush, so that memory holds the live state
// and not a log of changes.
func (j *temporalJoinOp) bound() error {
	if len(j.dirty) <= j.t.job.opts.StateCacheEntries {
		return nil
	}
	return j.flush()
}

// addVersion puts v among k's versions by time, replacing one of an
// equal time.
func (j *temporalJoinOp) addVersion(k *tjKey, v *tjVersion) {
	i := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].time >= v.time })
	switch {
	case i < len(k.versions) && k.versions[i].time == v.time:
		v.stored = k.versions[i].stored
		k.versions[i] = v
	default:
		k.versions = append(k.versions, nil)
		copy(k.versions[i+1:], k.versions[i:])
		k.versions[i] = v
		j.nVersions++
	}
	j.touch(k)
	if i > 0 || (v.deleted && i == 0) {
		j.setTimer(k, v.time)
	} else if len(k.versions) > 1 {
		j.setTimer(k, k.versions[1].time)
	}
}

func (j *temporalJoinOp) nullKey(in *temporalInput, i int) bool {
	for k := range in.keyR {
		if in.keyR[k].isNull(i) {
			return true
		}
	}
	return false
}

// encodeKey encodes row i's join key (NULLs included: a probe row with a
// NULL key finds no version, as none is kept).
func (j *temporalJoinOp) encodeKey(in *temporalInput, i int) []byte {
	j.keyBuf = j.keyBuf[:0]
	for k := range in.keyR {
		j.keyBuf = in.keyR[k].encodeKey(j.keyBuf, i)
	}
	return j.keyBuf
}

func (j *temporalJoinOp) encodeRow(in *temporalInput, i int) []byte {
	j.rowBuf = j.rowBuf[:0]
	for c := range in.colR {
		j.rowBuf = in.colR[c].encodeKey(j.rowBuf, i)
	}
	return j.rowBuf
}

// watermark fires the timers at or before wm: the keys' probe rows up to
// wm are joined and emitted, and their expired versions dropped.
func (j *temporalJoinOp) watermark(wm int64, out *emitter) error {
	j.outL, j.outR = j.outL[:0], j.outR[:0]
	for j.timers.Len() > 0 && j.timers[0].time <= wm {
		tm := j.timers.pop()
		k := j.slots[tm.slot]
		if k == nil || k.timer != tm.time {
			continue // replaced by an earlier timer, or fired, or its key forgotten
		}
		k.timer = noTimer
		j.fire(k, wm)
	}
	if len(j.outL) > 0 {
		if err := j.applyResidual(); err != nil {
			return err
		}
		if err := j.emitJoined(out); err != nil {
			return err
		}
	}
	return j.bound()
}

// fire joins k's probe rows up to wm (into j.outL/j.outR) and drops what
// no later probe row can join.
func (j *temporalJoinOp) fire(k *tjKey, wm int64) {
	kept := k.probes[:0]
	for _, p := range k.probes {
		if p.time > wm {
			kept = append(kept, p)
			continue
		}
		var v *tjVersion
		if i := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].time > p.time }); i > 0 && !k.versions[i-1].deleted {
			v = k.versions[i-1]
		}
		if v != nil || j.spec.Type == planner.LeftJoin {
			j.outL, j.outR = append(j.outL, p.row), append(j.outR, v)
		}
		if p.stored {
			k.gone = append(k.gone, tjGone{space: spaceTemporalProbes, suffix: seqSuffix(p.seq)})
		}
		j.nProbes--
	}
	clear(k.probes[len(kept):])
	k.probes = kept
	// The version valid at wm is the last one at or before it; older ones
	// can no longer be joined, and neither can a deletion left first.
	drop := sort.Search(len(k.versions), func(i int) bool { return k.versions[i].time > wm }) - 1
	if drop >= 0 && k.versions[drop].deleted {
		drop++
	}
	for i := 0; i < max(drop, 0); i++ {
		if v := k.versions[i]; v.stored {
			k.gone = append(k.gone, tjGone{space: spaceTemporalVersions, suffix: timeSuffix(v.time)})
		}
		j.nVersions--
	}
	if drop > 0 {
		n := copy(k.versions, k.versions[drop:])
		clear(k.versions[n:])
		k.versions = k.versions[:n]
	}
	j.touch(k)
	j.schedule(k)
	if len(k.probes) == 0 && len(k.versions) == 0 {
		j.forget(k)
	}
}

// applyResidual evaluates the residual condition over the joined pairs
// and forgets the version of each pair it rejects.
func (j *temporalJoinOp) applyResidual() error {
	if j.residual == nil {
		return nil
	}
	var idx []int
	for i, v := range j.outR {
		if v != nil {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	bs := j.builders()
	nl := j.spec.LeftWidth
	for _, i := range idx {
		if err := appendEncodedRow(bs[:nl], j.outT[:nl], j.outL[i]); err != nil {
			releaseAll(bs)
			return err
		}
		if err := appendEncodedRow(bs[nl:], j.outT[nl:], j.outR[i].row); err != nil {
			releaseAll(bs)
			return err
		}
	}
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		b.Release()
	}
	cand := array.NewRecordBatch(j.outSch, cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	defer cand.Release()
	m, err := j.residual.evalArray(j.t.fctx, cand)
	if err != nil {
		return err
	}
	defer m.Release()
	mask := m.(*array.Boolean)
	for r, i := range idx {
		if !mask.IsValid(r) || !mask.Value(r) {
			j.outR[i] = nil
		}
	}
	if j.spec.Type == planner.LeftJoin {
		return nil
	}
	// An inner join emits only the pairs that passed.
	w := 0
	for i := range j.outL {
		if j.outR[i] != nil {
			j.outL[w], j.outR[w] = j.outL[i], j.outR[i]
			w++
		}
	}
	j.outL, j.outR = j.outL[:w], j.outR[:w]
	return nil
}

// emitJoined emits the rows of j.outL/j.outR (a nil version: padded), in
// batches of the job's batch size.
func (j *temporalJoinOp) emitJoined(out *emitter) error {
	nl := j.spec.LeftWidth
	size := max(j.t.batchSize, 1)
	for start := 0; start < len(j.outL); start += size {
		end := min(start+size, len(j.outL))
		bs := j.builders()
		for i := start; i < end; i++ {
			if err := appendEncodedRow(bs[:nl], j.outT[:nl], j.outL[i]); err != nil {
				releaseAll(bs)
				return err
			}
			if v := j.outR[i]; v != nil {
				if err := appendEncodedRow(bs[nl:], j.outT[nl:], v.row); err != nil {
					releaseAll(bs)
					return err
				}
			} else {
				for _, b := range bs[nl:] {
					b.AppendNull()
				}
			}
		}
		if err := emitColumns(j.outSch, bs, end-start, nil, out); err != nil {
			return err
		}
	}
	clear(j.outR)
	return nil
}

// emitPaddedRows emits rows of the probe batch padded with NULLs.
func (j *temporalJoinOp) emitPaddedRows(in *temporalInput, rows []int, out *emitter) error {
	bs := j.builders()
	nl := j.spec.LeftWidth
	for _, i := range rows {
		for c := range in.colR {
			appendCell(bs[c], &in.colR[c], i)
		}
		for _, b := range bs[nl:] {
			b.AppendNull()
		}
	}
	return emitColumns(j.outSch, bs, len(rows), nil, out)
}

func (j *temporalJoinOp) builders() []array.Builder {
	bs := make([]array.Builder, len(j.outT))
	for i, t := range j.outT {
		bs[i] = array.NewBuilder(j.t.mem, t.ArrowType())
	}
	return bs
}

// flush writes the changes since the last flush in one batch: first the
// removed entries, then the new and changed ones (a key emptied and used
// again in between deletes its old entries before it writes its new ones).
func (j *temporalJoinOp) flush() error {
	j.batch.Reset()
	var kb []byte
	for _, k := range j.dirty {
		for _, g := range k.gone {
			kb = append(append(kb[:0], k.key...), g.suffix[:]...)
			if g.space == spaceTemporalProbes {
				j.probes.Delete(&j.batch, k.kg, kb)
			} else {
				j.vers.Delete(&j.batch, k.kg, kb)
			}
		}
		k.gone = k.gone[:0]
	}
	var v []byte
	for _, k := range j.dirty {
		for _, p := range k.probes {
			if p.stored {
				continue
			}
			s := seqSuffix(p.seq)
			kb = append(append(kb[:0], k.key...), s[:]...)
			v = binary.AppendVarint(checkpoint.AppendStateHeader(v[:0], stateVersion), p.time)
			v = appendBytes(v, []byte(p.row))
			j.probes.Put(&j.batch, k.kg, kb, v)
			p.stored = true
		}
		for _, ver := range k.versions {
			if !ver.dirty {
				continue
			}
			s := timeSuffix(ver.time)
			kb = append(append(kb[:0], k.key...), s[:]...)
			v = checkpoint.AppendStateHeader(v[:0], stateVersion)
			if ver.deleted {
				v = append(v, 1)
			} else {
				v = append(v, 0)
			}
			v = appendBytes(v, []byte(ver.row))
			j.vers.Put(&j.batch, k.kg, kb, v)
			ver.dirty, ver.stored = false, true
		}
		k.listed = false
	}
	clear(j.dirty)
	j.dirty = j.dirty[:0]
	if j.batch.Len() == 0 {
		return nil
	}
	return j.t.store.Apply(&j.batch)
}

func seqSuffix(seq uint64) (s [8]byte) {
	binary.BigEndian.PutUint64(s[:], seq)
	return s
}

// timeSuffix encodes a time so that byte order is time order.
func timeSuffix(t int64) (s [8]byte) {
	binary.BigEndian.PutUint64(s[:], uint64(t)^(1<<63))
	return s
}

func decodeTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// endInput joins what is left: every input has ended, so no version will
// come (the sources' last watermark normally did this already).
func (j *temporalJoinOp) endInput(out *emitter) error { return j.watermark(maxWatermark, out) }

func (j *temporalJoinOp) close() error { return nil }

// tjTimer is the timer of the key in a slot; one whose time is no longer
// the key's is stale and skipped (a slot reused by another key with a
// timer at the same time fires that key at its time, as it should).
type tjTimer struct {
	time int64
	slot int32
}

// tjTimers is a min-heap of timers by time (typed, without container/heap's
// interface calls: it is popped and pushed for every key that fires).
type tjTimers []tjTimer

func (h tjTimers) Len() int { return len(h) }

func (h *tjTimers) push(t tjTimer) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].time <= s[i].time {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *tjTimers) pop() tjTimer {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = tjTimer{}
	s = s[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].time < s[l].time {
			m = r
		}
		if s[i].time <= s[m].time {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
