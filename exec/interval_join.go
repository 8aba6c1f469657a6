package exec

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindIntervalJoin, func(t *subtask) (operator, error) { return newIntervalJoin(t) })
}

// intervalJoinOp is the interval join (planner.IntervalJoinSpec), Flink's
// row-time interval join (TimeIntervalJoin): a left row at lt and a right
// row at rt join when their keys match, rt+Lower <= lt <= rt+Upper and the
// residual holds. Each arriving row is joined with the rows of the other
// side held under its key whose times are within its bounds, and is kept
// (under its key, in time order) while a row of the other side that is not
// late could still join it: a left row at t while t + LeftRelative is above
// the watermark, a right row while t + RightRelative is. When the watermark
// passes that point the row leaves the state; a row of an outer side that
// never matched is then emitted padded with NULLs (one that cannot be kept
// at all is padded at once when it matched nothing). The output is
// append-only (+I).
//
// Watermark: the operator forwards its input watermark minus
// WatermarkDelay (the larger relative size), as Flink's
// KeyedCoProcessOperatorWithWatermarkDelay does: a joined or padded row
// carries times up to that far behind the input watermark, so downstream
// event-time operators do not find it late.
//
// Late rows (time at or behind the watermark when they arrive) are not
// dropped: as in Flink they join the rows of the other side still held
// (some partners within their bounds may have left the state), outer ones
// unmatched are padded, and they are kept if they still can match. Since
// they may have missed matches, they are counted with the late records
// (Metrics.LateRecords, SHOW JOBS). A row whose time or key is NULL joins
// nothing (the condition is not TRUE); an outer side's is padded at once.
//
// State: each side's rows in its key space, keyed [join key][time][seq],
// valued with the row's columns and whether it matched; held in memory
// per join key once read (one prefix scan), written back at checkpoint
// barriers (new rows, changed match flags, deletions of expired ones),
// never read-modify-written per row, and forgotten from memory (not from
// the store) past the subtask's share of the state memory budget or
// Options.StateCacheEntries keys in memory. Which keys hold rows, and the
// earliest time of each, is always in memory (a min-heap of keys by time,
// Flink's cleanup timers; rebuilt by a scan on restore), so expiry touches
// only the keys it expires. The watermark is kept in the checkpoint, so a
// restored join expires and counts late rows as the one it replaces.
type intervalJoinOp struct {
	t        *taskContext
	spec     *planner.IntervalJoinSpec
	owner    string
	side     [2]ivInput
	residual *evaluator
	outSch   *arrow.Schema
	outT     []types.T
	maxPar   int
	layout   string
	wm       int64
	// held is the rows in both sides' state, for Metrics.
	held atomic.Int64

	// per batch
	hashes []uint64
	keyBuf []byte
	rowBuf []byte
	pairs  []ivPair
	pairAt []int // pairAt[i] is the first pair of row i; pairAt[n] = len(pairs)
	kind   []ivRowKind
	mine   []*ivKey
	mask   []bool
	bs     []array.Builder
	rows   int
}

// ivRowKind is what becomes of a row of a batch.
type ivRowKind uint8

const (
	ivNull  ivRowKind = iota // a NULL key or time: joins nothing
	ivProbe                  // joins, and is not kept (it can match nothing later)
	ivKeep                   // joins, and is kept
)

// ivPair is a row of the batch and a candidate row of the other side.
type ivPair struct {
	row int
	k   *ivKey
	idx int
}

// ivInput is what the interval join knows of one input.
type ivInput struct {
	keys  []int
	keyT  []types.T
	keyR  []colReader
	width int
	colR  []colReader
	colT  []types.T
	time  int
	timeR colReader
	outer bool
	// rel: a row at t is kept while t+rel is above the watermark.
	rel int64
	// lo, hi: a row at t joins the other side's rows at [t+lo, t+hi].
	lo, hi int64
	st     *ivState
}

func newIntervalJoin(t *subtask) (*intervalJoinOp, error) {
	sp := t.op.Spec.(*planner.IntervalJoinSpec)
	j := &intervalJoinOp{spec: sp, outSch: t.op.Schema.Arrow(), maxPar: t.job.graph.MaxParallelism, wm: minWatermark}
	for _, c := range t.op.Schema {
		j.outT = append(j.outT, c.Type)
	}
	if sp.Residual != nil {
		j.residual = compileExpr(sp.Residual)
	}
	mk := func(keys []int, width, time int, sch types.Schema, outer bool) ivInput {
		in := ivInput{keys: keys, keyR: make([]colReader, len(keys)), width: width, colR: make([]colReader, width), time: time, outer: outer}
		for _, c := range sch[:width] {
			in.colT = append(in.colT, c.Type)
		}
		for _, k := range keys {
			in.keyT = append(in.keyT, sch[k].Type)
		}
		return in
	}
	j.side[0] = mk(sp.LeftKeys, sp.LeftWidth, sp.LeftTime, sp.LeftSchema, sp.Type == planner.LeftJoin || sp.Type == planner.FullJoin)
	j.side[1] = mk(sp.RightKeys, sp.RightWidth, sp.RightTime, sp.RightSchema, sp.Type == planner.RightJoin || sp.Type == planner.FullJoin)
	// A left row at t joins right rows at [t-Upper, t-Lower]; a right row
	// at t left rows at [t+Lower, t+Upper].
	j.side[0].rel, j.side[0].lo, j.side[0].hi = sp.LeftRelative(), -sp.Upper, -sp.Lower
	j.side[1].rel, j.side[1].lo, j.side[1].hi = sp.RightRelative(), sp.Lower, sp.Upper
	j.layout = fmt.Sprintf("interval join %s bounds [%d, %d]", sp.Type, sp.Lower, sp.Upper)
	for s, in := range j.side {
		j.layout += fmt.Sprintf("; side %d keys %v time %d columns", s, in.keys, in.time)
		for _, c := range in.colT {
			j.layout += " " + c.Nullable().String()
		}
	}
	return j, nil
}

func (j *intervalJoinOp) open(t *taskContext) error {
	j.t = t
	j.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: j.owner, Layout: j.layout, Watermark: &j.wm})
	if err != nil {
		return err
	}
	j.side[0].st = newIvState(st.space(spaceJoinLeft, "left rows"), j.owner)
	j.side[1].st = newIvState(st.space(spaceJoinRight, "right rows"), j.owner)
	st.flushWith(j.side[0].st.flush)
	st.flushWith(j.side[1].st.flush)
	if t.restored == nil {
		return nil
	}
	for s := range j.side {
		if err := j.side[s].st.restore(); err != nil {
			return err
		}
	}
	j.setGauge()
	return nil
}

// watermarkDelay: the output watermark trails the input's by the larger
// relative size (see intervalJoinOp).
func (j *intervalJoinOp) watermarkDelay() int64 { return j.spec.WatermarkDelay() }

func (j *intervalJoinOp) process(input int, b Batch, out *emitter) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	if b.Ops != nil {
		for i := 0; i < n; i++ {
			if b.Op(i) != Insert {
				return fmt.Errorf("interval join received a %s row: its inputs must be append-only", b.Op(i))
			}
		}
	}
	rec := b.Rec
	me, other := &j.side[input], &j.side[1-input]
	for k, c := range me.keys {
		me.keyR[k].reset(me.keyT[k], rec.Column(c))
	}
	for c := range me.colR {
		me.colR[c].reset(me.colT[c], rec.Column(c))
	}
	me.timeR.reset(types.TimestampType, rec.Column(me.time))
	if cap(j.hashes) < n {
		j.hashes = make([]uint64, n)
		j.kind = make([]ivRowKind, n)
		j.mine = make([]*ivKey, n)
	}
	h := j.hashes[:n]
	clear(h)
	for k, c := range me.keys {
		functions.HashColumn(functions.Vec{Array: rec.Column(c), Type: me.keyT[k]}, n, h)
	}
	// Step 1: the candidate pairs of each row, by key and time.
	j.pairs, j.pairAt = j.pairs[:0], j.pairAt[:0]
	var late int64
	for i := 0; i < n; i++ {
		j.pairAt = append(j.pairAt, len(j.pairs))
		j.kind[i], j.mine[i] = ivNull, nil
		if me.timeR.isNull(i) {
			continue
		}
		key, ok := j.encodeKey(me, i)
		if !ok {
			continue
		}
		t := me.timeR.i64[i]
		if t <= j.wm {
			late++
		}
		kg := state.KeyGroup(h[i], j.maxPar)
		ok2, err := other.st.get(kg, key, false)
		if err != nil {
			return err
		}
		if ok2 != nil {
			lo, hi := t+me.lo, t+me.hi
			rows := ok2.rows
			for p := sort.Search(len(rows), func(x int) bool { return rows[x].t >= lo }); p < len(rows) && rows[p].t <= hi; p++ {
				j.pairs = append(j.pairs, ivPair{row: i, k: ok2, idx: p})
			}
		}
		j.kind[i] = ivProbe
		if t+me.rel > j.wm {
			mine, err := me.st.get(kg, key, true)
			if err != nil {
				return err
			}
			j.kind[i], j.mine[i] = ivKeep, mine
		}
	}
	j.pairAt = append(j.pairAt, len(j.pairs))
	if late > 0 {
		j.t.job.lateRecords.Add(late)
	}
	if err := j.evalResidual(input, rec); err != nil {
		return err
	}
	// Step 2: emit the joined rows, mark the other side's matches and keep
	// the rows, in order.
	for i := 0; i < n; i++ {
		matched := false
		for p := j.pairAt[i]; p < j.pairAt[i+1]; p++ {
			if j.residual != nil && !j.mask[p] {
				continue
			}
			matched = true
			pr := j.pairs[p]
			r := &pr.k.rows[pr.idx]
			if err := j.appendPair(input, me, i, r.row); err != nil {
				return err
			}
			if other.outer && !r.matched {
				r.matched = true
				other.st.touch(pr.k, r)
			}
		}
		switch j.kind[i] {
		case ivKeep:
			j.rowBuf = j.rowBuf[:0]
			for c := range me.colR {
				j.rowBuf = me.colR[c].encodeKey(j.rowBuf, i)
			}
			me.st.add(j.mine[i], me.timeR.i64[i], string(j.rowBuf), matched)
		default:
			if me.outer && !matched {
				j.appendPadded(input, me, i)
			}
		}
		if err := j.flushFull(out); err != nil {
			return err
		}
	}
	if err := j.flushOutput(out); err != nil {
		return err
	}
	j.setGauge()
	return j.shrink()
}

// encodeKey encodes row i's join key into j.keyBuf; ok is false when a key
// column is NULL.
func (j *intervalJoinOp) encodeKey(in *ivInput, i int) ([]byte, bool) {
	j.keyBuf = j.keyBuf[:0]
	for k := range in.keyR {
		if in.keyR[k].isNull(i) {
			return nil, false
		}
		j.keyBuf = in.keyR[k].encodeKey(j.keyBuf, i)
	}
	return j.keyBuf, true
}

// evalResidual evaluates the residual over every candidate pair of the
// batch at once and keeps the verdicts in j.mask.
func (j *intervalJoinOp) evalResidual(input int, rec arrow.RecordBatch) error {
	if j.residual == nil || len(j.pairs) == 0 {
		return nil
	}
	saved, savedRows := j.bs, j.rows
	j.bs, j.rows = nil, 0
	me := &j.side[input]
	for _, p := range j.pairs {
		if err := j.appendPair(input, me, p.row, p.k.rows[p.idx].row); err != nil {
			j.abortOutput()
			j.bs, j.rows = saved, savedRows
			return err
		}
	}
	bs := j.bs
	j.bs, j.rows = saved, savedRows
	var err error
	j.mask, err = residualMask(j.t, j.residual, j.outSch, bs, len(j.pairs), j.mask)
	return err
}

func (j *intervalJoinOp) builders() {
	if j.bs != nil {
		return
	}
	j.bs = make([]array.Builder, len(j.outT))
	for i, t := range j.outT {
		j.bs[i] = array.NewBuilder(j.t.mem, t.ArrowType())
	}
}

// appendPair appends the joined row of row i of input and a stored row of
// the other side.
func (j *intervalJoinOp) appendPair(input int, me *ivInput, i int, other string) error {
	j.builders()
	nl := j.spec.LeftWidth
	j.rows++
	if input == 0 {
		for c := range me.colR {
			appendCell(j.bs[c], &me.colR[c], i)
		}
		return appendEncodedRow(j.bs[nl:], j.outT[nl:], other)
	}
	if err := appendEncodedRow(j.bs[:nl], j.outT[:nl], other); err != nil {
		return err
	}
	for c := range me.colR {
		appendCell(j.bs[nl+c], &me.colR[c], i)
	}
	return nil
}

// appendPadded appends row i of input with the other side's columns NULL.
func (j *intervalJoinOp) appendPadded(input int, me *ivInput, i int) {
	j.builders()
	j.rows++
	lo := 0
	if input == 1 {
		lo = j.spec.LeftWidth
	}
	for c := range me.colR {
		appendCell(j.bs[lo+c], &me.colR[c], i)
	}
	for c := range j.bs {
		if c < lo || c >= lo+len(me.colR) {
			j.bs[c].AppendNull()
		}
	}
}

// appendStoredPadded appends a stored row of side s with the other side's
// columns NULL.
func (j *intervalJoinOp) appendStoredPadded(s int, row string) error {
	j.builders()
	j.rows++
	nl := j.spec.LeftWidth
	if s == 0 {
		for c := nl; c < len(j.bs); c++ {
			j.bs[c].AppendNull()
		}
		return appendEncodedRow(j.bs[:nl], j.outT[:nl], row)
	}
	for c := 0; c < nl; c++ {
		j.bs[c].AppendNull()
	}
	return appendEncodedRow(j.bs[nl:], j.outT[nl:], row)
}

// flushFull emits the output built so far once it has a batch's rows.
func (j *intervalJoinOp) flushFull(out *emitter) error {
	if j.rows < j.t.batchSize {
		return nil
	}
	return j.flushOutput(out)
}

func (j *intervalJoinOp) flushOutput(out *emitter) error {
	if j.bs == nil {
		return nil
	}
	bs, rows := j.bs, j.rows
	j.bs, j.rows = nil, 0
	return emitColumns(j.outSch, bs, rows, nil, out)
}

func (j *intervalJoinOp) abortOutput() {
	if j.bs != nil {
		releaseAll(j.bs)
	}
	j.bs, j.rows = nil, 0
}

// watermark expires the rows of both sides that no row still to come can
// join, emitting the unmatched ones of outer sides padded.
func (j *intervalJoinOp) watermark(wm int64, out *emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	for s := range j.side {
		if err := j.expire(s, out); err != nil {
			return err
		}
	}
	if err := j.flushOutput(out); err != nil {
		return err
	}
	j.setGauge()
	return nil
}

// expire removes side s's rows at t with t+rel at or below the watermark.
func (j *intervalJoinOp) expire(s int, out *emitter) error {
	in := &j.side[s]
	st := in.st
	for len(st.timers) > 0 {
		if st.timers[0].first+in.rel > j.wm {
			return nil
		}
		k := st.timers[0].k
		if err := st.load(k); err != nil {
			return err
		}
		cut := 0
		for cut < len(k.rows) && k.rows[cut].t+in.rel <= j.wm {
			r := &k.rows[cut]
			if in.outer && !r.matched {
				if err := j.appendStoredPadded(s, r.row); err != nil {
					return err
				}
				if err := j.flushFull(out); err != nil {
					return err
				}
			}
			if r.stored {
				st.deletes = append(st.deletes, ivDelete{k: k, t: r.t, seq: r.seq})
			}
			cut++
		}
		st.removeFront(k, cut)
	}
	return nil
}

func (j *intervalJoinOp) setGauge() {
	j.held.Store(j.side[0].st.held + j.side[1].st.held)
}

// joinRows reports the rows held (joinRowsGauge).
func (j *intervalJoinOp) joinRows() int64 { return j.held.Load() }

// shrink bounds the memory of the rows held: past the subtask's share of
// the state memory budget, or past the cache's size in join keys whose
// rows are in memory (state.backend.cache.max-entries, as the regular
// join's keys and the aggregates' groups), both sides are written back and
// their rows forgotten until read again. The index of the keys holding
// rows (with each key's earliest time, for expiry) stays in memory and
// counts against the share.
func (j *intervalJoinOp) shrink() error {
	l, r := j.side[0].st, j.side[1].st
	held := l.bytes() + r.bytes()
	j.t.reportState(held, len(l.keys)+len(r.keys))
	limit, maxKeys := j.t.share.Limit(), j.t.job.opts.StateCacheEntries
	if held <= limit && l.loaded+r.loaded <= maxKeys {
		return nil
	}
	// Down to three quarters of the limit, each side in proportion to
	// its rows in memory; the index stays.
	rows := l.rowBytes + r.rowBytes
	room := max(0, limit*3/4-l.keyBytes-r.keyBytes)
	loaded := l.loaded + r.loaded
	for s := range j.side {
		st := j.side[s].st
		if err := st.drop(scaleDown(st.rowBytes, rows, room), int(scaleDown(int64(st.loaded), int64(loaded), int64(maxKeys)))); err != nil {
			return err
		}
	}
	j.t.reportState(l.bytes()+r.bytes(), len(l.keys)+len(r.keys))
	return nil
}

// endInput expires every row: the watermark of ended inputs is +infinity.
func (j *intervalJoinOp) endInput(out *emitter) error {
	return j.watermark(maxWatermark, out)
}

func (j *intervalJoinOp) close() error {
	j.abortOutput()
	return nil
}

// ivState is one side's rows of an interval join by join key (see
// intervalJoinOp for the layout). Every key with rows is in keys, its rows
// in memory (loaded) or only in the store; timers orders the keys by
// their earliest row.
type ivState struct {
	space   *state.KeySpace
	owner   string
	keys    map[string]*ivKey
	timers  ivTimers
	dirty   []*ivKey
	deletes []ivDelete
	// rows is the rows in memory and rowBytes their memory; held all
	// rows (memory or store); loaded the keys whose rows are in memory;
	// keyBytes the memory of the keys' index (always in memory).
	rows     int
	rowBytes int64
	held     int64
	loaded   int
	keyBytes int64
	seq      uint64
	batch    state.WriteBatch
	buf      []byte
	kbuf     []byte
}

// ivKey is one join key's rows, in order of (time, seq).
type ivKey struct {
	key    string
	kg     int
	rows   []ivRow
	loaded bool
	// n is the key's rows (in rows when loaded; 0: all expired, the key
	// is forgotten at the next flush), first the earliest time.
	n      int
	first  int64
	hi     int // index in timers (-1: none, no rows)
	listed bool
}

// ivRow is one kept row.
type ivRow struct {
	t       int64
	seq     uint64
	row     string // the columns, colReader.encodeKey form
	matched bool
	dirty   bool
	stored  bool
}

// ivDelete is a stored row that expired: its key, time and sequence number.
type ivDelete struct {
	k   *ivKey
	t   int64
	seq uint64
}

func newIvState(space *state.KeySpace, owner string) *ivState {
	return &ivState{space: space, owner: owner, keys: map[string]*ivKey{}}
}

// get returns the rows of key (in key group kg), loaded; nil when create
// is false and the key has none.
func (s *ivState) get(kg int, key []byte, create bool) (*ivKey, error) {
	if k, ok := s.keys[string(key)]; ok {
		return k, s.load(k)
	}
	if !create {
		return nil, nil
	}
	k := &ivKey{key: string(key), kg: kg, loaded: true, hi: -1}
	s.keys[k.key] = k
	s.loaded++
	s.keyBytes += ivKeyBytes(k)
	return k, nil
}

// load reads k's rows from the store when they are not in memory.
func (s *ivState) load(k *ivKey) error {
	if k.loaded {
		return nil
	}
	err := s.space.ScanPrefix(k.kg, []byte(k.key), func(sk, v []byte) error {
		r, err := s.decode(sk[len(k.key):], v)
		if err != nil {
			return err
		}
		k.rows = append(k.rows, r)
		return nil
	})
	if err != nil {
		return err
	}
	if len(k.rows) != k.n {
		return fmt.Errorf("%w: %s: a join key holds %d rows in the store, %d expected", state.ErrCorrupt, s.owner, len(k.rows), k.n)
	}
	k.loaded = true
	s.loaded++
	s.rows += len(k.rows)
	s.rowBytes += ivRowsBytes(k.rows)
	return nil
}

// ivRowBytes is about the memory of a row in memory: its ivRow in the
// key's slice and its columns.
func ivRowBytes(r *ivRow) int64 { return int64(unsafe.Sizeof(ivRow{})) + int64(len(r.row)) }

// ivRowsBytes is ivRowBytes of every row of rows.
func ivRowsBytes(rows []ivRow) int64 {
	var n int64
	for i := range rows {
		n += ivRowBytes(&rows[i])
	}
	return n
}

// ivKeyBytes is about the memory of a key in the index: its ivKey, its
// key string, its map entry and its timer.
func ivKeyBytes(k *ivKey) int64 { return int64(unsafe.Sizeof(ivKey{})) + int64(len(k.key)) + 48 + 24 }

// bytes is the memory of the side's state: its index and the rows in
// memory.
func (s *ivState) bytes() int64 { return s.keyBytes + s.rowBytes }

// add keeps a row at t (columns row) under k, in time order.
func (s *ivState) add(k *ivKey, t int64, row string, matched bool) {
	r := ivRow{t: t, seq: s.seq, row: row, matched: matched, dirty: true}
	s.seq++
	i := len(k.rows)
	for i > 0 && k.rows[i-1].t > t {
		i--
	}
	k.rows = append(k.rows, ivRow{})
	copy(k.rows[i+1:], k.rows[i:])
	k.rows[i] = r
	k.n++
	s.rows++
	s.rowBytes += ivRowBytes(&r)
	s.held++
	switch {
	case k.hi < 0:
		k.first = t
		heap.Push(&s.timers, ivTimer{first: t, k: k})
	case t < k.first:
		k.first = t
		s.timers[k.hi].first = t
		heap.Fix(&s.timers, k.hi)
	}
	s.list(k)
}

// touch lists r of k as changed (its match flag).
func (s *ivState) touch(k *ivKey, r *ivRow) {
	r.dirty = true
	s.list(k)
}

func (s *ivState) list(k *ivKey) {
	if !k.listed {
		k.listed = true
		s.dirty = append(s.dirty, k)
	}
}

// removeFront drops k's first n rows (expired, their store entries listed
// in deletes already).
func (s *ivState) removeFront(k *ivKey, n int) {
	s.rowBytes -= ivRowsBytes(k.rows[:n])
	clear(k.rows[:n])
	k.rows = k.rows[n:]
	k.n -= n
	s.rows -= n
	s.held -= int64(n)
	if k.n > 0 {
		k.first = k.rows[0].t
		s.timers[k.hi].first = k.first
		heap.Fix(&s.timers, k.hi)
		return
	}
	// The key stays (empty, its rows' memory with it) until the next
	// write-back, so that a key whose rows come and go does not allocate
	// each time.
	heap.Remove(&s.timers, k.hi)
	k.rows = k.rows[:0]
}

// appendStoreKey appends the key of k's row at t with sequence number seq
// in the side's key space: the join key, the time (sign flipped, so that
// keys sort by time) and the sequence number.
func appendStoreKey(dst []byte, k *ivKey, t int64, seq uint64) []byte {
	dst = append(dst, k.key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t)^1<<63)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// appendIvRow appends r's value in the store: the state header, whether
// it matched (uvarint 0/1) and its columns (length-prefixed).
func appendIvRow(dst []byte, r *ivRow) []byte {
	dst = checkpoint.AppendStateHeader(dst, stateVersion)
	m := uint64(0)
	if r.matched {
		m = 1
	}
	dst = binary.AppendUvarint(dst, m)
	return appendBytes(dst, []byte(r.row))
}

// decode reads a stored row from the end of its key (time, seq) and its
// value.
func (s *ivState) decode(suffix, v []byte) (ivRow, error) {
	if len(suffix) != 16 {
		return ivRow{}, fmt.Errorf("%w: %s: an interval join row key ends in %d bytes", state.ErrCorrupt, s.owner, len(suffix))
	}
	r := ivRow{t: int64(binary.BigEndian.Uint64(suffix) ^ 1<<63), seq: binary.BigEndian.Uint64(suffix[8:]), stored: true}
	d, err := newStateDecoder(v, s.owner)
	if err != nil {
		return ivRow{}, err
	}
	r.matched = d.uvarint() != 0
	r.row = string(d.bytes())
	d.end()
	return r, d.err
}

// flush writes the changed rows and deletes the expired stored ones, in
// one batch.
func (s *ivState) flush() error {
	s.batch.Reset()
	for _, d := range s.deletes {
		s.kbuf = appendStoreKey(s.kbuf[:0], d.k, d.t, d.seq)
		s.space.Delete(&s.batch, d.k.kg, s.kbuf)
	}
	clear(s.deletes)
	s.deletes = s.deletes[:0]
	for _, k := range s.dirty {
		k.listed = false
		for i := range k.rows {
			r := &k.rows[i]
			if !r.dirty {
				continue
			}
			s.buf = appendIvRow(s.buf[:0], r)
			s.kbuf = appendStoreKey(s.kbuf[:0], k, r.t, r.seq)
			s.space.Put(&s.batch, k.kg, s.kbuf, s.buf) // the batch copies both
			r.dirty, r.stored = false, true
		}
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	for key, k := range s.keys {
		if k.n == 0 {
			delete(s.keys, key)
			s.keyBytes -= ivKeyBytes(k)
			if k.loaded {
				s.loaded--
			}
		}
	}
	if s.batch.Len() == 0 {
		return nil
	}
	return s.space.Store().Apply(&s.batch)
}

// drop flushes and forgets the rows of keys (not the keys and their
// earliest times) until the rows in memory take at most rowBytes and
// keys at most loaded keys. It walks the timers' heap from its end, so
// that the keys whose rows expire soonest (near its root), which expiry
// would read back, are forgotten last.
func (s *ivState) drop(rowBytes int64, loaded int) error {
	if err := s.flush(); err != nil {
		return err
	}
	// After the flush every key has rows, so a timer.
	for t := len(s.timers) - 1; t >= 0; t-- {
		k := s.timers[t].k
		if s.rowBytes <= rowBytes && s.loaded <= loaded {
			break
		}
		if !k.loaded {
			continue
		}
		s.rowBytes -= ivRowsBytes(k.rows)
		s.rows -= len(k.rows)
		s.loaded--
		k.rows, k.loaded = nil, false
	}
	return nil
}

// restore rebuilds the keys and their earliest times from the store (the
// rows stay there until used).
func (s *ivState) restore() error {
	err := s.space.Scan(func(kg int, key, v []byte) error {
		if len(key) < 16 {
			return fmt.Errorf("%w: %s: an interval join row key of %d bytes", state.ErrCorrupt, s.owner, len(key))
		}
		jk := key[:len(key)-16]
		r, err := s.decode(key[len(jk):], v)
		if err != nil {
			return err
		}
		k, ok := s.keys[string(jk)]
		if !ok {
			k = &ivKey{key: string(jk), kg: kg, first: r.t, hi: -1}
			s.keys[k.key] = k
			s.keyBytes += ivKeyBytes(k)
			heap.Push(&s.timers, ivTimer{first: r.t, k: k})
		}
		if r.t < k.first {
			k.first = r.t
			s.timers[k.hi].first = r.t
			heap.Fix(&s.timers, k.hi)
		}
		k.n++
		s.held++
		s.seq = max(s.seq, r.seq+1)
		return nil
	})
	return err
}

// ivTimers is a min-heap of the keys with rows by their earliest row's
// time (kept in the entry too, so that comparisons read no key).
type ivTimers []ivTimer

type ivTimer struct {
	first int64
	k     *ivKey
}

func (h ivTimers) Len() int           { return len(h) }
func (h ivTimers) Less(a, b int) bool { return h[a].first < h[b].first }
func (h ivTimers) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].k.hi, h[b].k.hi = a, b
}
func (h *ivTimers) Push(x any) {
	e := x.(ivTimer)
	e.k.hi = len(*h)
	*h = append(*h, e)
}
func (h *ivTimers) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = ivTimer{}
	*h = old[:len(old)-1]
	e.k.hi = -1
	return e
}
