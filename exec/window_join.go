package exec

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindWindowJoin, func(t *subtask) (operator, error) { return newWindowJoin(t) })
}

// windowJoinOp is the window join (planner.WindowJoinSpec), Flink's
// WindowJoinOperator: each input's rows are kept by window and join key
// until the watermark passes the window's end; then the window's rows of
// each key are joined (the residual evaluated over all pairs of a batch at
// once), the pairs emitted (+I), the unmatched rows of outer sides emitted
// padded with NULLs (semi and anti joins: the left rows with a match, or
// without one), and the window's rows dropped. A row whose window has
// fired when it arrives is late: counted (SHOW JOBS), never joined. A row
// with a NULL key joins nothing; it is kept only when its side is padded.
//
// State: the rows of open windows are held in memory by window and key,
// and each row is also in the subtask's store, in its side's key space
// under [window end][window start][key marker and key][sequence number]:
// new rows are written at each checkpoint, and a fired window's stored
// rows are deleted when it fires. A restore rebuilds the open windows from
// the store. The watermark is kept as the window aggregates keep it
// (stateDecl.Watermark), so a restore neither fires a window twice nor
// takes rows into a fired one.
type windowJoinOp struct {
	t      *taskContext
	spec   *planner.WindowJoinSpec
	owner  string
	layout string
	maxPar int
	space  [2]*state.KeySpace
	side   [2]wjInput

	residual *evaluator
	pairSch  *arrow.Schema
	pairT    []types.T
	outSch   *arrow.Schema
	outT     []types.T

	wm      int64
	windows map[int64]*wjWindow // by window end
	ends    wjEnds              // the open windows' ends, a min-heap
	rows    int64               // rows held
	// bytes is about the memory of the rows and keys held in memory.
	bytes int64
	seq   uint64
	// unstored are the rows added since the last checkpoint.
	unstored []wjRef
	gauge    windowGauge

	// spare are the groups of fired windows, for new ones.
	spare []*wjGroup

	hashes []uint64
	keyBuf []byte
	buf    []byte
	offs   []int // row i's columns are buf[offs[i]:offs[i+1]]
	koffs  []int // row i's key starts at keyBuf[koffs[i]]; -1: a NULL key
	sbuf   []byte
	vbuf   []byte
	// kgs are the key groups of a firing window's stored rows.
	kgs []int
	// held and chunkRows are a spilled window's rows as it fires: one
	// key's right rows, a chunk of its left rows (fireSpilled).
	held, chunkRows []wjRow
}

// wjInput is what the window join knows of one input.
type wjInput struct {
	keys   []int
	keyT   []types.T
	keyR   []colReader
	hash   []int
	hashT  []types.T
	width  int
	colR   []colReader
	colT   []types.T
	startR colReader
	endR   colReader
	start  int
	end    int
	// padded: its unmatched rows are emitted (outer side, or the left of
	// an anti join).
	padded bool
}

// wjWindow is one open window: its rows by key, in order of first arrival,
// and the rows with a NULL key.
type wjWindow struct {
	start, end int64
	byKey      map[string]*wjGroup
	groups     []*wjGroup
	nullRows   [2][]wjRow
	// spilled: rows of it were dropped from memory (shrink); it reads
	// them back from the store when it fires.
	spilled bool
}

// wjGroup is a window's rows of one join key, per side.
type wjGroup struct {
	kg   int
	key  string
	rows [2][]wjRow
}

type wjRow struct {
	row     string // encodeKey form of the first width columns
	seq     uint64
	kg      int // its key group (the hash of the row's hash columns)
	stored  bool
	matched bool
}

// wjRef names a row held in memory: window, group (nil: NULL key), side
// and index.
type wjRef struct {
	w    *wjWindow
	g    *wjGroup
	kg   int
	side int
	i    int
}

func newWindowJoin(t *subtask) (*windowJoinOp, error) {
	sp := t.op.Spec.(*planner.WindowJoinSpec)
	j := &windowJoinOp{spec: sp, outSch: t.op.Schema.Arrow(), pairSch: sp.PairSchema.Arrow(),
		maxPar: t.job.graph.MaxParallelism, wm: minWatermark, windows: map[int64]*wjWindow{}}
	for _, c := range t.op.Schema {
		j.outT = append(j.outT, c.Type)
	}
	for _, c := range sp.PairSchema {
		j.pairT = append(j.pairT, c.Type)
	}
	if sp.Residual != nil {
		j.residual = compileExpr(sp.Residual)
	}
	mk := func(keys, hash []int, width, start, end int, sch types.Schema, padded bool) wjInput {
		in := wjInput{keys: keys, keyR: make([]colReader, len(keys)), hash: hash, width: width,
			colR: make([]colReader, width), start: start, end: end, padded: padded}
		for _, c := range sch[:width] {
			in.colT = append(in.colT, c.Type)
		}
		for _, k := range keys {
			in.keyT = append(in.keyT, sch[k].Type)
		}
		for _, k := range hash {
			in.hashT = append(in.hashT, sch[k].Type)
		}
		return in
	}
	j.side[0] = mk(sp.LeftKeys, sp.LeftHash, sp.LeftWidth, sp.LeftStart, sp.LeftEnd, sp.LeftSchema,
		sp.Type.PadsRight() || sp.Type == planner.WindowAnti)
	j.side[1] = mk(sp.RightKeys, sp.RightHash, sp.RightWidth, sp.RightStart, sp.RightEnd, sp.RightSchema, sp.Type.PadsLeft())
	j.layout = fmt.Sprintf("window join %s %s; left keys %v columns %v; right keys %v columns %v",
		sp.Type, sp.Window.Kind, j.side[0].keyT, j.side[0].colT, j.side[1].keyT, j.side[1].colT)
	return j, nil
}

func (j *windowJoinOp) open(t *taskContext) error {
	j.t = t
	j.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: j.owner, Layout: j.layout, Watermark: &j.wm})
	if err != nil {
		return err
	}
	j.space[0] = st.space(spaceJoinLeft, "left rows")
	j.space[1] = st.space(spaceJoinRight, "right rows")
	st.flushWith(j.storeNew)
	if t.restored == nil {
		return nil
	}
	// The restored windows' rows stay in the store: each window is made
	// spilled, so that it fires from the store (fireSpilled), whatever
	// its size; rows that come after are held until the next spill.
	for s := range j.space {
		err := j.space[s].Scan(func(kg int, k, _ []byte) error { return j.restoreRow(k) })
		if err != nil {
			return err
		}
	}
	j.gauge.set2(j)
	return nil
}

// restoreRow counts the stored row of key k in the window it names, made
// spilled when there is none (restore).
func (j *windowJoinOp) restoreRow(k []byte) error {
	if len(k) < 25 {
		return fmt.Errorf("%w: %s: window join key of %d bytes", errCorrupt, j.owner, len(k))
	}
	end := int64(binary.BigEndian.Uint64(k))
	start := int64(binary.BigEndian.Uint64(k[8:]))
	j.seq = max(j.seq, binary.BigEndian.Uint64(k[len(k)-8:]))
	j.window(start, end).spilled = true
	j.rows++
	return nil
}

// The memory of the rows held, for the state memory budget: each row's
// bytes; the lists of rows (a group's, a window's rows without a key, the
// rows not stored yet) by the room they have allocated, wjRowSize or
// wjRefSize an element, since a list grows by doubling; wjGroupBytes a
// window's key besides its bytes.
const (
	wjRowSize    = int64(unsafe.Sizeof(wjRow{}))
	wjRefSize    = int64(unsafe.Sizeof(wjRef{}))
	wjGroupBytes = int64(unsafe.Sizeof(wjGroup{})) + 64
)

// hold appends r to the list *rows, counting the room it allocates.
func (j *windowJoinOp) hold(rows *[]wjRow, r wjRow) {
	c := cap(*rows)
	*rows = append(*rows, r)
	j.bytes += int64(len(r.row)) + int64(cap(*rows)-c)*wjRowSize
}

// release drops the list *rows from memory and from the count.
func (j *windowJoinOp) release(rows *[]wjRow) {
	for _, r := range *rows {
		j.bytes -= int64(len(r.row))
	}
	j.bytes -= int64(cap(*rows)) * wjRowSize
	*rows = nil
}

// shrink bounds the memory of the rows held: past the subtask's share of
// the state memory budget, every row is written to the store (storeNew)
// and the windows that fire last drop their rows from memory, down to
// three quarters of the share; such a window (spilled) reads its rows
// back from the store when it fires.
func (j *windowJoinOp) shrink() error {
	j.t.reportState(j.bytes, int(j.rows))
	limit := j.t.share.Limit()
	if j.bytes <= limit {
		return nil
	}
	if err := j.storeNew(); err != nil {
		return err
	}
	ends := slices.Sorted(maps.Keys(j.windows))
	for i := len(ends) - 1; i >= 0 && j.bytes > limit-limit/4; i-- {
		j.spill(j.windows[ends[i]])
	}
	j.t.reportState(j.bytes, int(j.rows))
	return nil
}

// spill drops w's rows from memory (they must all be stored): it keeps
// only the rows that come after, until it fires.
func (j *windowJoinOp) spill(w *wjWindow) {
	for _, g := range w.groups {
		for s := range g.rows {
			j.release(&g.rows[s])
		}
		j.bytes -= int64(len(g.key)) + wjGroupBytes
		g.key = ""
		j.spare = append(j.spare, g)
	}
	clear(w.byKey)
	clear(w.groups)
	w.groups = w.groups[:0]
	for s := range w.nullRows {
		j.release(&w.nullRows[s])
	}
	w.spilled = true
}

// window returns the open window ending at end, made on first use.
func (j *windowJoinOp) window(start, end int64) *wjWindow {
	w, ok := j.windows[end]
	if !ok {
		w = &wjWindow{start: start, end: end, byKey: map[string]*wjGroup{}}
		j.windows[end] = w
		heap.Push(&j.ends, end)
	}
	return w
}

// group returns w's group of key, made on first use (from the groups of
// fired windows, when there are).
func (j *windowJoinOp) group(w *wjWindow, kg int, key string) *wjGroup {
	g, ok := w.byKey[key]
	if !ok {
		if n := len(j.spare); n > 0 {
			g = j.spare[n-1]
			j.spare = j.spare[:n-1]
		} else {
			g = &wjGroup{}
		}
		g.kg, g.key = kg, key
		w.byKey[key] = g
		w.groups = append(w.groups, g)
		j.bytes += int64(len(key)) + wjGroupBytes
	}
	return g
}

func (j *windowJoinOp) process(input int, b Batch, out *emitter) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	rec := b.Rec
	me := &j.side[input]
	for k, c := range me.keys {
		me.keyR[k].reset(me.keyT[k], rec.Column(c))
	}
	for c := range me.colR {
		me.colR[c].reset(me.colT[c], rec.Column(c))
	}
	me.startR.reset(types.TimestampType, rec.Column(me.start))
	me.endR.reset(types.TimestampType, rec.Column(me.end))
	if cap(j.hashes) < n {
		j.hashes = make([]uint64, n)
	}
	h := j.hashes[:n]
	clear(h)
	for k, c := range me.hash {
		functions.HashColumn(functions.Vec{Array: rec.Column(c), Type: me.hashT[k]}, n, h)
	}
	// The rows' columns and keys are encoded into two buffers, each made
	// one string: a row held is a substring of its batch's (one allocation
	// a batch, not one a row).
	j.offs, j.koffs = j.offs[:0], j.koffs[:0]
	j.buf, j.keyBuf = j.buf[:0], j.keyBuf[:0]
	for i := 0; i < n; i++ {
		j.offs = append(j.offs, len(j.buf))
		for c := range me.colR {
			j.buf = me.colR[c].encodeKey(j.buf, i)
		}
		j.koffs = append(j.koffs, len(j.keyBuf))
		if !j.appendKey(me, i) {
			j.keyBuf = j.keyBuf[:j.koffs[i]]
			j.koffs[i] = -1
		}
	}
	j.offs = append(j.offs, len(j.buf))
	j.koffs = append(j.koffs, len(j.keyBuf))
	rows, keys := string(j.buf), string(j.keyBuf)
	var late int64
	for i := 0; i < n; i++ {
		if b.Op(i) != Insert {
			return fmt.Errorf("%s: window join received a %s row: its inputs must be append-only", j.owner, b.Op(i))
		}
		start, end := me.startR.i64[i], me.endR.i64[i]
		if windowFired(end, j.wm) {
			late++
			continue
		}
		ok := j.koffs[i] >= 0
		if !ok && !me.padded {
			continue // a NULL key joins nothing, and nothing is emitted for it
		}
		w := j.window(start, end)
		j.seq++
		ref := wjRef{w: w, side: input, kg: state.KeyGroup(h[i], j.maxPar)}
		r := wjRow{row: rows[j.offs[i]:j.offs[i+1]], seq: j.seq, kg: ref.kg}
		if ok {
			kend := j.koffs[i+1]
			for k := i + 1; j.koffs[k] < 0; k++ {
				kend = j.koffs[k+1]
			}
			g := j.group(w, ref.kg, keys[j.koffs[i]:kend])
			ref.g, ref.i = g, len(g.rows[input])
			j.hold(&g.rows[input], r)
		} else {
			ref.i = len(w.nullRows[input])
			j.hold(&w.nullRows[input], r)
		}
		c := cap(j.unstored)
		j.unstored = append(j.unstored, ref)
		j.bytes += int64(cap(j.unstored)-c) * wjRefSize
		j.rows++
	}
	if late > 0 {
		j.t.job.lateRecords.Add(late)
	}
	j.gauge.set2(j)
	return j.shrink()
}

// appendKey appends row i's join key to j.keyBuf; false when a key column
// is NULL.
func (j *windowJoinOp) appendKey(in *wjInput, i int) bool {
	for k := range in.keyR {
		if in.keyR[k].isNull(i) {
			return false
		}
		j.keyBuf = in.keyR[k].encodeKey(j.keyBuf, i)
	}
	return true
}

// storeKey is the store key of a row: [end][start][marker, key][seq].
func (j *windowJoinOp) storeKey(dst []byte, w *wjWindow, g *wjGroup, seq uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.end))
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.start))
	if g == nil {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = append(dst, g.key...)
	}
	return binary.BigEndian.AppendUint64(dst, seq)
}

func (j *windowJoinOp) watermark(wm int64, out *emitter) error {
	if wm <= j.wm {
		return nil
	}
	j.wm = wm
	err := j.fire(out)
	j.gauge.set2(j)
	return err
}

func (j *windowJoinOp) endInput(out *emitter) error {
	j.wm = maxWatermark
	return j.fire(out)
}

// fire joins, emits and drops every window the watermark passed, in order
// of window end.
func (j *windowJoinOp) fire(out *emitter) error {
	fired, err := fireWindows(&j.ends, j.windows, j.wm, func(w *wjWindow) error { return j.fireWindow(w, out) })
	if err != nil {
		return err
	}
	if fired && int64(len(j.unstored)) > 2*j.rows+1024 {
		// Forget the fired windows' rows that were never stored, once they
		// are most of the list (so each is looked at a bounded number of
		// times).
		keep := j.unstored[:0]
		for _, ref := range j.unstored {
			if j.windows[ref.w.end] == ref.w {
				keep = append(keep, ref)
			}
		}
		clear(j.unstored[len(keep):])
		j.unstored = keep
	}
	return nil
}

// fireWindow joins window w's rows and emits the result, then deletes its
// stored rows.
func (j *windowJoinOp) fireWindow(w *wjWindow, out *emitter) error {
	e := wjEmitter{j: j, out: out}
	defer e.release()
	if w.spilled {
		if err := j.fireSpilled(w, &e); err != nil {
			return err
		}
		return e.flushOut()
	}
	for _, g := range w.groups {
		for li := range g.rows[0] {
			for ri := range g.rows[1] {
				if err := e.pair(&g.rows[0][li], &g.rows[1][ri]); err != nil {
					return err
				}
			}
		}
	}
	if err := e.flushPairs(); err != nil {
		return err
	}
	for s := range j.side {
		if !j.side[s].padded && !(s == 0 && j.spec.Type == planner.WindowSemi) {
			continue
		}
		emitRow := func(r *wjRow) error {
			if (j.spec.Type == planner.WindowSemi) != r.matched {
				return nil
			}
			return e.single(s, r)
		}
		for _, g := range w.groups {
			for i := range g.rows[s] {
				if err := emitRow(&g.rows[s][i]); err != nil {
					return err
				}
			}
		}
		for i := range w.nullRows[s] {
			if err := emitRow(&w.nullRows[s][i]); err != nil {
				return err
			}
		}
	}
	if err := e.flushOut(); err != nil {
		return err
	}
	// Delete the window's stored rows: one range delete of the window's
	// keys in each side and key group that stored some.
	var prefix [16]byte
	binary.BigEndian.PutUint64(prefix[:8], uint64(w.end))
	binary.BigEndian.PutUint64(prefix[8:], uint64(w.start))
	for s := range j.space {
		j.kgs = j.kgs[:0]
		for _, g := range w.groups {
			for _, r := range g.rows[s] {
				j.rows--
				if r.stored {
					j.kgs = append(j.kgs, g.kg)
				}
			}
		}
		for _, r := range w.nullRows[s] {
			j.rows--
			if r.stored {
				j.kgs = append(j.kgs, r.kg)
			}
		}
		slices.Sort(j.kgs)
		for _, kg := range slices.Compact(j.kgs) {
			if err := j.space[s].DeletePrefix(kg, prefix[:]); err != nil {
				return err
			}
		}
	}
	j.spill(w) // its rows are gone: drop them from memory (and the count)
	return nil
}

// wjEmitter collects a window's output: the candidate pairs (evaluated by
// the residual a batch at a time) and the output rows.
type wjEmitter struct {
	j       *windowJoinOp
	out     *emitter
	pairs   []array.Builder
	refs    [][2]*wjRow
	bs      []array.Builder
	outRows int
}

func (e *wjEmitter) release() {
	if e.pairs != nil {
		releaseAll(e.pairs)
	}
	if e.bs != nil {
		releaseAll(e.bs)
	}
}

func newBuilders(t *taskContext, ts []types.T) []array.Builder {
	bs := make([]array.Builder, len(ts))
	for i, c := range ts {
		bs[i] = array.NewBuilder(t.mem, c.ArrowType())
	}
	return bs
}

// pair adds a candidate pair.
func (e *wjEmitter) pair(l, r *wjRow) error {
	j := e.j
	if e.pairs == nil {
		e.pairs = newBuilders(j.t, j.pairT)
	}
	nl := j.spec.LeftWidth
	if err := appendEncodedRow(e.pairs[:nl], j.pairT[:nl], l.row); err != nil {
		return err
	}
	if err := appendEncodedRow(e.pairs[nl:], j.pairT[nl:], r.row); err != nil {
		return err
	}
	e.refs = append(e.refs, [2]*wjRow{l, r})
	if len(e.refs) >= j.t.batchSize {
		return e.flushPairs()
	}
	return nil
}

// flushPairs evaluates the residual over the candidate pairs, marks the
// rows that matched and emits the matching pairs (semi and anti joins:
// only marks).
func (e *wjEmitter) flushPairs() error {
	if len(e.refs) == 0 {
		return nil
	}
	j := e.j
	cols := make([]arrow.Array, len(e.pairs))
	for i, b := range e.pairs {
		cols[i] = b.NewArray()
		b.Release()
	}
	e.pairs = nil
	cand := array.NewRecordBatch(j.pairSch, cols, int64(len(e.refs)))
	for _, c := range cols {
		c.Release()
	}
	defer cand.Release()
	refs := e.refs
	e.refs = e.refs[:0]
	var keep []int32
	var mask *array.Boolean
	if j.residual != nil {
		m, err := j.residual.evalArray(j.t.fctx, cand)
		if err != nil {
			return err
		}
		defer m.Release()
		mask = m.(*array.Boolean)
	}
	for i, p := range refs {
		if mask != nil && !(mask.IsValid(i) && mask.Value(i)) {
			continue
		}
		p[0].matched, p[1].matched = true, true
		keep = append(keep, int32(i))
	}
	if j.spec.Type.LeftOnly() || len(keep) == 0 {
		return nil
	}
	if err := e.flushOut(); err != nil {
		return err
	}
	var b Batch
	if len(keep) == len(refs) {
		cand.Retain()
		b = Batch{Rec: cand}
	} else {
		var err error
		if b, err = takeRows(j.t.ctx, Batch{Rec: cand}, keep); err != nil {
			return err
		}
	}
	// The pairs are the output's columns; the output schema's nullability
	// is the one to carry.
	rec := array.NewRecordBatch(j.outSch, b.Rec.Columns(), b.Rec.NumRows())
	b.Rec.Release()
	return e.out.emit(Batch{Rec: rec})
}

// single adds row r of side s alone: padded with NULLs, or (semi and anti
// joins) the left row.
func (e *wjEmitter) single(s int, r *wjRow) error {
	j := e.j
	if e.bs == nil {
		e.bs = newBuilders(j.t, j.outT)
	}
	nl := j.spec.LeftWidth
	switch {
	case j.spec.Type.LeftOnly():
		if err := appendEncodedRow(e.bs, j.outT, r.row); err != nil {
			return err
		}
	case s == 0:
		if err := appendEncodedRow(e.bs[:nl], j.outT[:nl], r.row); err != nil {
			return err
		}
		for c := nl; c < len(e.bs); c++ {
			e.bs[c].AppendNull()
		}
	default:
		for c := 0; c < nl; c++ {
			e.bs[c].AppendNull()
		}
		if err := appendEncodedRow(e.bs[nl:], j.outT[nl:], r.row); err != nil {
			return err
		}
	}
	e.outRows++
	if e.outRows >= j.t.batchSize {
		return e.flushOut()
	}
	return nil
}

func (e *wjEmitter) flushOut() error {
	if e.bs == nil {
		return nil
	}
	bs, rows := e.bs, e.outRows
	e.bs, e.outRows = nil, 0
	return emitColumns(e.j.outSch, bs, rows, nil, e.out)
}

// storeNew writes the rows added since the last call (of windows still
// open) to the store.
func (j *windowJoinOp) storeNew() error {
	var wb state.WriteBatch
	for _, ref := range j.unstored {
		if _, open := j.windows[ref.w.end]; !open || j.windows[ref.w.end] != ref.w {
			continue // fired since
		}
		var r *wjRow
		if ref.g != nil {
			r = &ref.g.rows[ref.side][ref.i]
		} else {
			r = &ref.w.nullRows[ref.side][ref.i]
		}
		j.sbuf = j.storeKey(j.sbuf[:0], ref.w, ref.g, r.seq)
		j.space[ref.side].Put(&wb, ref.kg, j.sbuf, j.rowValue(r))
		r.stored = true
		if err := j.space[ref.side].ApplyPart(&wb); err != nil {
			return err
		}
	}
	// The list goes with its room, which the rows of the next checkpoint
	// interval allocate again as they come.
	j.bytes -= int64(cap(j.unstored)) * wjRefSize
	j.unstored = nil
	if wb.Len() == 0 {
		return nil
	}
	return j.t.store.Apply(&wb)
}

func (j *windowJoinOp) close() error { return nil }

// windowState reports the open windows and the rows they hold (Metrics).
func (j *windowJoinOp) windowState() (int64, int64) {
	return j.gauge.windows.Load(), j.gauge.groups.Load()
}

func (g *windowGauge) set2(j *windowJoinOp) {
	g.windows.Store(int64(len(j.ends)))
	g.groups.Store(j.rows)
}

// wjEnds is a min-heap of window ends.
// fireWindows pops, in order of window end, every window of windows the
// watermark wm passed and hands it to fire; fired says whether any was.
func fireWindows[W any](ends *wjEnds, windows map[int64]W, wm int64, fire func(W) error) (fired bool, err error) {
	for len(*ends) > 0 && windowFired((*ends)[0], wm) {
		end := heap.Pop(ends).(int64)
		w := windows[end]
		delete(windows, end)
		if err := fire(w); err != nil {
			return fired, err
		}
		fired = true
	}
	return fired, nil
}

type wjEnds []int64

func (h wjEnds) Len() int           { return len(h) }
func (h wjEnds) Less(a, b int) bool { return h[a] < h[b] }
func (h wjEnds) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *wjEnds) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *wjEnds) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}
