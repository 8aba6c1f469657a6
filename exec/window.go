package exec

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// windowAssigner computes the windows (start, end) of an event time, in
// microseconds, for TUMBLE, HOP and CUMULATE.
type windowAssigner struct {
	kind                byte // 'T', 'H', 'C'
	size, slide, offset int64
}

func newWindowAssigner(w planner.WindowSpec) windowAssigner {
	return windowAssigner{kind: w.Kind[0], size: w.Size, slide: w.Slide, offset: w.Offset}
}

// floorMod is x mod m in [0, m).
func floorMod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}

// assign appends the windows of ts as (start, end) pairs in ascending
// order of end; the last pair is the window that fires last.
func (a *windowAssigner) assign(ts int64, dst []int64) []int64 {
	switch a.kind {
	case 'T':
		start := ts - floorMod(ts-a.offset, a.size)
		return append(dst, start, start+a.size)
	case 'H':
		last := ts - floorMod(ts-a.offset, a.slide)
		n := int64(0)
		for s := last; s > ts-a.size; s -= a.slide {
			n++
		}
		for s := last - (n-1)*a.slide; s <= last; s += a.slide {
			dst = append(dst, s, s+a.size)
		}
		return dst
	default: // CUMULATE
		start := ts - floorMod(ts-a.offset, a.size)
		first := ts - floorMod(ts-a.offset, a.slide) + a.slide
		for end := first; end <= start+a.size; end += a.slide {
			dst = append(dst, start, end)
		}
		return dst
	}
}

// windowTime is window_time for a window end: the last millisecond in it.
func windowTime(end int64) int64 { return end - 1000 }

// windowFired reports whether a window ending at end has fired under
// watermark wm: as in Flink, once the watermark reaches the window's last
// millisecond (window_time), which treats event time at millisecond
// precision as Flink's TIMESTAMP(3) row times are.
func windowFired(end, wm int64) bool { return windowTime(end) <= wm }

// windowTVFOp is a window table function: it appends window_start,
// window_end and window_time to every row, once per window the row belongs
// to (TUMBLE: one; HOP: size/slide; CUMULATE: one per step left). Rows
// whose time is NULL belong to no window: they are dropped and counted with
// the late records (Flink fails the job instead).
type windowTVFOp struct {
	t      *taskContext
	spec   planner.WindowSpec
	asg    windowAssigner
	schema *arrow.Schema
	tsR    colReader
	wins   []int64
	rows   []int32
}

func newWindowTVF(t *subtask) *windowTVFOp {
	w := t.op.Spec.(*planner.WindowTVFSpec).TVF
	return &windowTVFOp{spec: w.Window, asg: newWindowAssigner(w.Window), schema: t.op.Schema.Arrow()}
}

func (w *windowTVFOp) open(t *taskContext) error { w.t = t; return nil }

func (w *windowTVFOp) process(_ int, b Batch, out *emitter) error {
	rec := b.Rec
	n := b.Len()
	col := rec.Column(w.spec.TimeCol)
	w.tsR.reset(types.TimestampType, col)
	w.rows = w.rows[:0]
	starts := array.NewTimestampBuilder(w.t.mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	ends := array.NewTimestampBuilder(w.t.mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	times := array.NewTimestampBuilder(w.t.mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer starts.Release()
	defer ends.Release()
	defer times.Release()
	all := col.NullN() == 0
	if !all {
		w.t.job.lateRecords.Add(int64(col.NullN()))
	}
	for i := 0; i < n; i++ {
		if !all && col.IsNull(i) {
			continue
		}
		w.wins = w.asg.assign(w.tsR.i64[i], w.wins[:0])
		for k := 0; k < len(w.wins); k += 2 {
			w.rows = append(w.rows, int32(i))
			starts.Append(arrow.Timestamp(w.wins[k]))
			ends.Append(arrow.Timestamp(w.wins[k+1]))
			times.Append(arrow.Timestamp(windowTime(w.wins[k+1])))
		}
	}
	if len(w.rows) == 0 {
		return nil
	}
	cols := make([]arrow.Array, 0, rec.NumCols()+3)
	if len(w.rows) == n {
		for _, c := range rec.Columns() {
			c.Retain()
			cols = append(cols, c)
		}
	} else {
		taken, err := takeRows(w.t.ctx, Batch{Rec: rec}, w.rows)
		if err != nil {
			return err
		}
		for _, c := range taken.Rec.Columns() {
			c.Retain()
			cols = append(cols, c)
		}
		taken.Rec.Release()
	}
	cols = append(cols, starts.NewArray(), ends.NewArray(), times.NewArray())
	outRec := array.NewRecordBatch(w.schema, cols, int64(len(w.rows)))
	for _, c := range cols {
		c.Release()
	}
	return out.emit(Batch{Rec: outRec})
}

func (w *windowTVFOp) endInput(*emitter) error { return nil }
func (w *windowTVFOp) close() error            { return nil }

// windowAggOp is the window aggregation: GROUP BY window_start, window_end
// [, keys] over a window table function, with the windows assigned here
// from the time column, or over the output of a windowed operator, whose
// rows name their window in their window_start and window_end columns
// (attached windows: one window a row). For each row and each of its windows it folds the
// row into the accumulators of (window, key); when the watermark passes a
// window's end it emits that window's groups once (+I) and deletes their
// state, so state holds only windows that have not fired. Rows for windows
// that already fired are late (a record is late once, when its last window
// had fired), and so are rows whose time is NULL (they are in no window):
// they go to the late-records table along the side output when the plan
// has one, and are dropped and counted otherwise.
//
// State: one entry per (window, key) in a state.Cache over the subtask's
// store, keyed [window end][window start][key columns]. A cached group is
// its entry's key, from which its window and key values are read when it
// is emitted or written, and a block of words (aggGroup): its row count
// and, when every aggregate has a fixed width (aggfn_flat.go), their
// state; otherwise an accumulator object per aggregate. The current
// watermark is kept in each of the subtask's key groups under a short key
// so a restore resumes with it. Which windows are pending (the timers) is
// kept in memory and rebuilt from the store's keys on restore.
type windowAggOp struct {
	t    *taskContext
	spec *planner.WindowAggregate
	asg  windowAssigner
	windowInput
	outSch   types.Schema
	arrowSch *arrow.Schema
	maxPar   int
	// startR reads the window_start column of attached windows
	// (planner.WindowSpec.Attached), whose window_end is the time column.
	startR colReader

	// fold accumulates rows into the groups' accumulators.
	fold   *aggFold
	x      foldCtx
	owner  string
	layout string
	cache  *state.Cache[aggGroup]
	timers windowTimers
	wm     int64

	buf  []byte
	wins []int64
	late int64
	// The groups of a batch's rows, one per row and window, as process
	// reads them: their keys (window end first) and rows.
	bk   batchKeys
	krow []int32
	// gauge is the size of the state, for Metrics.
	gauge windowGauge
	// spare holds the words and accumulators of fired groups (those the
	// cache held: never scratch's), reused by new ones, so that a
	// window's groups allocate them only until the first windows fire.
	spare []aggGroup
	// res holds the results of a group being emitted.
	res []scalar

	// codec encodes the groups and lays out their words. Firing a window
	// from the store (windowTimers.scan): a group decoded (its words and
	// accumulators reused from one to the next), a chunk of its entries
	// read.
	codec   windowCodec
	scratch aggGroup
	chunk   []storedEntry
	// stored are the key groups in which the store holds groups of the
	// window firing (scratch of fire).
	stored []int
	// slices: a HOP window's groups are kept by slice (window_slices.go).
	slices windowSlices
}

// storedEntry is an entry read from the store (copies of its bytes).
type storedEntry struct{ k, v []byte }

func newWindowAgg(t *subtask) (*windowAggOp, error) {
	spec := t.op.Spec.(*planner.WindowAggSpec).Agg
	a := &windowAggOp{
		spec: spec, asg: newWindowAssigner(spec.Window), windowInput: newWindowInput(spec),
		outSch: t.op.Schema, arrowSch: t.op.Schema.Arrow(), maxPar: t.job.graph.MaxParallelism,
		wm: minWatermark,
	}
	fold, err := newAggFold(spec.Aggs, aggMode{})
	if err != nil {
		return nil, err
	}
	a.fold = fold
	a.res = make([]scalar, len(spec.Aggs))
	a.layout = aggLayout("window aggregate "+spec.Window.Kind, a.partT, fold.defs)
	a.timers.keys = map[int64][]timerKey{}
	return a, nil
}

func (a *windowAggOp) open(t *taskContext) error {
	a.t = t
	a.owner = stateOwner(t)
	a.codec = newWindowCodec(a.fold, a.partT, a.owner)
	if canSlice(a.spec.Window, a.codec) {
		// Slices, unless the job restores the whole windows of an
		// earlier build.
		whole := a.layout
		a.slices = newWindowSlices(a.spec.Window, a.fold, a.codec.nw)
		a.layout = aggLayout("window aggregate "+a.spec.Window.Kind+" slices", a.partT, a.fold.defs)
		if t.restored != nil {
			got, ok, err := storedLayout(t, state.NewKeySpace(t.store, spaceMeta, "metadata"), a.maxPar, a.owner)
			if err != nil {
				return err
			}
			if ok && got == whole {
				a.slices, a.layout = windowSlices{}, whole
			}
		}
	}
	st, err := t.declareState(stateDecl{Owner: a.owner, Layout: a.layout, Watermark: &a.wm})
	if err != nil {
		return err
	}
	a.cache = declareKeyedCache[aggGroup](st, spaceGroups, "groups", a.codec)
	a.cache.SetSizer(a.codec.windowGroupBytes)
	if t.restored == nil {
		return nil
	}
	// Rebuild the pending windows from the restored state (declareState
	// restored the watermark): their groups are in the store, where they
	// are read when they fire.
	err = a.cache.Space().Scan(func(kg int, k, v []byte) error {
		if len(k) < 16 {
			return fmt.Errorf("%w: %s: window key of %d bytes", errCorrupt, a.owner, len(k))
		}
		a.timers.addStored(int64(binary.BigEndian.Uint64(k)))
		return nil
	})
	a.gauge.set(a)
	return err
}

func (a *windowAggOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	rec := b.Rec
	h, tcol := a.read(rec, a.spec, a.fold)
	if a.spec.Window.Attached {
		a.startR.reset(types.TimestampType, rec.Column(a.spec.Window.StartCol))
	}
	noNulls := tcol.NullN() == 0
	// The batch's groups, one per row and window, encoded first; those
	// the cache lacks are read from the store together, in key order,
	// before the rows are folded (a point read each cost most of Nexmark
	// q5's time once its cache had dropped groups).
	a.bk.reset()
	a.krow = a.krow[:0]
	for i := 0; i < n; i++ {
		if !noNulls && tcol.IsNull(i) {
			a.lateRow(i) // in no window: as late as can be
			continue
		}
		if b.Op(i) != Insert {
			return fmt.Errorf("window aggregation received a %s row: its input must be append-only", b.Op(i))
		}
		var last int64 // the end of the row's last window
		switch {
		case a.spec.Window.Attached:
			a.wins = append(a.wins[:0], a.startR.i64[i], a.tsR.i64[i])
			last = a.wins[1]
		case a.slices.on:
			// The row's slice, which the windows not fired yet read.
			end := a.slices.sliceEnd(a.tsR.i64[i])
			a.wins = append(a.wins[:0], end-a.slices.slide, end)
			last = a.slices.lastEnd(end)
		default:
			a.wins = a.asg.assign(a.tsR.i64[i], a.wins[:0])
			last = a.wins[len(a.wins)-1]
		}
		if windowFired(last, a.wm) {
			a.lateRow(i)
			continue
		}
		kg := state.KeyGroup(h[i], a.maxPar)
		for w := 0; w < len(a.wins); w += 2 {
			start, end := a.wins[w], a.wins[w+1]
			if windowFired(end, a.wm) && !a.slices.on {
				continue
			}
			a.bk.buf = binary.BigEndian.AppendUint64(a.bk.buf, uint64(end))
			a.bk.buf = binary.BigEndian.AppendUint64(a.bk.buf, uint64(start))
			for j := range a.keyR {
				a.bk.buf = a.keyR[j].encodeKey(a.bk.buf, i)
			}
			a.bk.add(kg)
			a.krow = append(a.krow, int32(i))
		}
	}
	a.bk.seal()
	if err := a.cache.Prefetch(a.bk.kgs, a.bk.keys); err != nil {
		return err
	}
	for k, key := range a.bk.keys {
		i, end := int(a.krow[k]), int64(binary.BigEndian.Uint64(key))
		e, created, err := a.cache.Get(a.bk.kgs[k], key)
		if err != nil {
			return err
		}
		g := &e.Value
		var w []uint64
		if created {
			if n := len(a.spare); n > 0 {
				*g = a.spare[n-1]
				a.spare[n-1] = aggGroup{}
				a.spare = a.spare[:n-1]
			}
			w = a.codec.initGroup(g)
			a.timers.add(end, timerKey{kg: a.bk.kgs[k], key: e.Key})
		} else {
			w = a.codec.words(g)
		}
		w[0]++
		if a.codec.flat {
			err = a.fold.addFlat(w, &a.x, i, 1)
		} else {
			err = a.fold.add(*g.accs, &a.x, i, 1)
		}
		if err != nil {
			return err
		}
		a.cache.MarkDirty(e)
	}
	late, err := a.endBatch(a.t, rec, out)
	if err != nil {
		return err
	}
	a.late += late
	// The lists of the pending windows' groups grow with the groups; past
	// a quarter of the share they go, and the windows are read from the
	// store when they fire.
	if a.timers.bytes > a.t.share.Limit()/4 {
		a.timers.unlist()
	}
	_, err = trimCache(a.t, a.cache, a.timers.bytes)
	a.gauge.set(a)
	return err
}

// windowGauge is a window aggregation subtask's state size as
// Job.Metrics reports it: written by the subtask's goroutine, read from any.
type windowGauge struct {
	windows, groups atomic.Int64
}

func (g *windowGauge) set(a *windowAggOp) {
	windows := len(a.timers.ends)
	if a.slices.on {
		windows = a.slices.openWindows(a.timers.ends, a.wm)
	}
	g.windows.Store(int64(windows))
	g.groups.Store(int64(a.cache.Len()))
}

// watermark fires the windows the watermark passed. Under EMIT ON WINDOW
// CLOSE, and for processing time, the watermark of an ended input
// (+infinity) closes none: only the rows' (or the clock's) watermark does.
func (a *windowAggOp) watermark(wm int64, out *emitter) error {
	if wm <= a.wm || (wm == maxWatermark && !a.spec.FiresAtEnd()) {
		return nil
	}
	prev := a.wm
	a.wm = wm
	var err error
	if a.slices.on {
		err = a.fireSlices(prev, out)
	} else {
		err = a.fire(out)
	}
	a.gauge.set(a)
	return err
}

// fire emits and deletes every window that ended by the current watermark,
// in order of window end.
func (a *windowAggOp) fire(out *emitter) error {
	if len(a.timers.ends) == 0 || !windowFired(a.timers.ends[0], a.wm) {
		return nil
	}
	em := newWindowEmitter(a, out)
	defer em.release()
	emit := em.emit
	flushed := false
	for len(a.timers.ends) > 0 && windowFired(a.timers.ends[0], a.wm) {
		end := heap.Pop(&a.timers).(int64)
		if a.timers.scan[end] {
			// The window's groups are found in the store: write the
			// cached ones back first.
			if !flushed {
				if err := a.cache.Flush(); err != nil {
					return err
				}
				flushed = true
			}
			if err := a.fireStored(end, emit); err != nil {
				return err
			}
			a.timers.fired(end)
			continue
		}
		// The window's groups leave the cache without a delete each: the
		// key groups where the store may hold some lose the window's keys
		// with one range delete.
		a.stored = a.stored[:0]
		for _, tk := range a.timers.keys[end] {
			a.buf = append(a.buf[:0], tk.key...)
			e, created, err := a.cache.Get(tk.kg, a.buf)
			if err != nil {
				return err
			}
			if e.Stored() && (len(a.stored) == 0 || a.stored[len(a.stored)-1] != tk.kg) {
				a.stored = append(a.stored, tk.kg)
			}
			if !created {
				start := int64(be64(e.Key[8:16]))
				// The discarded entry keeps its value until Evict (in
				// flush), which zeroes it; nothing reads it before, and
				// no group is made (from spare) before.
				a.cache.Discard(e)
				if err := emit(end, start, e.Key, &e.Value); err != nil {
					return err
				}
				a.keepSpare(e.Value)
			} else {
				a.cache.Discard(e)
			}
		}
		if err := a.deleteWindow(end, a.stored); err != nil {
			return err
		}
		a.timers.fired(end)
	}
	if err := em.flush(); err != nil {
		return err
	}
	// Forget the fired groups now rather than at the next checkpoint, so
	// that memory stays flat without checkpoints too; the open windows'
	// groups stay in the cache until the checkpoint writes them.
	return a.cache.Evict()
}

// windowEmitter builds the rows of fired windows into batches of the
// subtask's batch size and emits each when full.
type windowEmitter struct {
	a    *windowAggOp
	out  *emitter
	bs   []array.Builder
	rows int
}

func newWindowEmitter(a *windowAggOp, out *emitter) *windowEmitter {
	return &windowEmitter{a: a, out: out, bs: a.builders()}
}

// emit appends the result row of group g, keyed key, of the window
// [start, end).
func (m *windowEmitter) emit(end, start int64, key string, g *aggGroup) error {
	if err := m.a.appendGroup(m.bs, end, start, key, g); err != nil {
		return err
	}
	m.rows++
	if m.rows >= m.a.t.batchSize {
		return m.flush()
	}
	return nil
}

// flush emits the rows built so far.
func (m *windowEmitter) flush() error {
	if m.rows == 0 {
		return nil
	}
	err := emitColumns(m.a.arrowSch, m.bs, m.rows, nil, m.out)
	m.bs, m.rows = m.a.builders(), 0
	if err != nil {
		return err
	}
	// Forget the groups emitted so far, so that firing many windows at
	// once (the end of the input) holds no more than a batch of them
	// besides the cache.
	return m.a.cache.Evict()
}

// release releases the builders of rows not emitted.
func (m *windowEmitter) release() { releaseAll(m.bs) }

// maxSpareGroups bounds the fired groups kept for reuse (windowAggOp.spare).
const maxSpareGroups = 4096

// keepSpare keeps the words and accumulators of g, a fired group the
// cache deleted, for a new group.
func (a *windowAggOp) keepSpare(g aggGroup) {
	if g.w != nil && len(a.spare) < maxSpareGroups {
		a.spare = append(a.spare, g)
	}
}

// fireStored emits and deletes the groups of the window ending at end as
// the store holds them (the cache was written back), in key order in each
// of the subtask's key groups, a batch of them read at a time (a scan
// calls no store method inside: the in-memory store holds its lock).
func (a *windowAggOp) fireStored(end int64, emit func(end, start int64, key string, g *aggGroup) error) error {
	space := a.cache.Space()
	a.stored = a.stored[:0]
	prefix := binary.BigEndian.AppendUint64(nil, uint64(end))
	stop := state.PrefixEnd(prefix)
	lo, hi := state.KeyGroupRange(a.t.subtask, a.maxPar, a.t.op.Parallelism)
	for kg := lo; kg <= hi && kg < a.maxPar; kg++ {
		from := prefix
		for {
			n := 0
			err := space.ScanRange(kg, from, stop, func(k, v []byte) error {
				if n == len(a.chunk) {
					a.chunk = append(a.chunk, storedEntry{})
				}
				c := &a.chunk[n]
				c.k, c.v = append(c.k[:0], k...), append(c.v[:0], v...)
				n++
				if n >= a.t.batchSize {
					return errChunkFull
				}
				return nil
			})
			if err != nil && err != errChunkFull {
				return err
			}
			for i := range a.chunk[:n] {
				c := &a.chunk[i]
				if len(c.k) < 16 {
					return fmt.Errorf("%w: %s: window key of %d bytes", errCorrupt, a.owner, len(c.k))
				}
				start := int64(binary.BigEndian.Uint64(c.k[8:16]))
				if e := a.cache.Peek(c.k); e != nil {
					a.cache.Discard(e)
					if err := emit(end, start, e.Key, &e.Value); err != nil {
						return err
					}
					a.keepSpare(e.Value)
					continue
				}
				// The chunk's key is read only while the group is
				// emitted, before the chunk is read again.
				key := unsafeString(c.k)
				if err := a.codec.DecodeKeyed(c.v, key, &a.scratch); err != nil {
					return err
				}
				if err := emit(end, start, key, &a.scratch); err != nil {
					return err
				}
			}
			if n > 0 && (len(a.stored) == 0 || a.stored[len(a.stored)-1] != kg) {
				a.stored = append(a.stored, kg)
			}
			if err != errChunkFull {
				break
			}
			from = append(append(from[:0:0], a.chunk[n-1].k...), 0)
		}
	}
	return a.deleteWindow(end, a.stored)
}

// deleteWindow deletes the groups of the window ending at end from the
// store, one range delete in each of the key groups kgs (in which the
// store may hold some, in any order, with repeats).
func (a *windowAggOp) deleteWindow(end int64, kgs []int) error {
	var prefix [8]byte
	binary.BigEndian.PutUint64(prefix[:], uint64(end))
	space := a.cache.Space()
	slices.Sort(kgs)
	for _, kg := range slices.Compact(kgs) {
		if err := space.DeletePrefix(kg, prefix[:]); err != nil {
			return err
		}
	}
	return nil
}

// errChunkFull stops a scan once a chunk holds a batch of entries.
var errChunkFull = errors.New("chunk full")

// appendGroup appends the result row of group g, keyed key (its state
// key), of the window [start, end); an aggregate whose result does not
// compute (an overflow) is an error, and nothing is appended.
func (a *windowAggOp) appendGroup(bs []array.Builder, end, start int64, key string, g *aggGroup) error {
	if a.codec.flat {
		w := a.codec.words(g)
		for j := range a.fold.defs {
			if err := a.fold.defs[j].flatResult(w, &a.res[j]); err != nil {
				return err
			}
		}
	} else if err := a.fold.check(*g.accs); err != nil {
		return err
	}
	key = key[windowKeyBytes:]
	j := 0
	for i, k := range a.spec.Keys {
		switch k {
		case planner.WindowStartKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(start))
		case planner.WindowEndKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(end))
		case planner.WindowTimeKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(windowTime(end)))
		default:
			key = appendKeyCol(bs[i], a.partT[j], key)
			j++
		}
	}
	rb := bs[len(a.spec.Keys):]
	if !a.codec.flat {
		a.fold.appendResults(rb, *g.accs)
		return nil
	}
	for j := range a.res {
		appendScalar(rb[j], a.fold.defs[j].call.T, &a.res[j])
	}
	return nil
}

func (a *windowAggOp) builders() []array.Builder {
	bs := make([]array.Builder, len(a.outSch))
	for i, c := range a.outSch {
		bs[i] = array.NewBuilder(a.t.mem, c.Type.ArrowType())
	}
	return bs
}

// endInput fires every remaining window: the watermark of an ended input is
// +infinity. Under EMIT ON WINDOW CLOSE only the rows' watermark closes
// windows, so those it has not passed stay unemitted; so do the
// processing-time windows the clock has not passed (planner/proctime.go).
func (a *windowAggOp) endInput(out *emitter) error {
	if !a.spec.FiresAtEnd() {
		return nil
	}
	prev := a.wm
	a.wm = maxWatermark
	if a.slices.on {
		return a.fireSlices(prev, out)
	}
	return a.fire(out)
}

func (a *windowAggOp) close() error { return nil }

// timerKey is one pending group: its key group and state key.
type timerKey struct {
	kg  int
	key string
}

// windowTimers are the pending window ends (a min-heap) and the groups of
// each.
type windowTimers struct {
	ends []int64
	keys map[int64][]timerKey
	// scan: the windows whose groups are not listed in keys but found by
	// a scan of the store when they fire (window aggregation, once the
	// lists outgrow their part of the memory budget).
	scan map[int64]bool
	// bytes is about the memory the pending groups' keys take (state
	// memory besides the cache's).
	bytes int64
}

// timerKeyBytes is the memory of a pending group besides its key's bytes.
const timerKeyBytes = int64(unsafe.Sizeof(timerKey{})) + 8

func (w *windowTimers) add(end int64, k timerKey) {
	if w.scan[end] {
		return
	}
	ks, ok := w.keys[end]
	if !ok {
		heap.Push(w, end)
	}
	w.keys[end] = append(ks, k)
	w.bytes += int64(len(k.key)) + timerKeyBytes
}

// addStored adds a pending window whose groups are found in the store
// (scan).
func (w *windowTimers) addStored(end int64) {
	if w.scan[end] {
		return
	}
	if w.scan == nil {
		w.scan = map[int64]bool{}
	}
	if _, ok := w.keys[end]; !ok {
		heap.Push(w, end)
	}
	w.scan[end] = true
	w.bytes -= w.listBytes(end)
	delete(w.keys, end)
}

// unlist forgets the lists of every pending window's groups: they are
// found in the store when the windows fire (scan).
func (w *windowTimers) unlist() {
	for end := range w.keys {
		w.addStored(end)
	}
}

func (w *windowTimers) listBytes(end int64) int64 {
	var n int64
	for _, k := range w.keys[end] {
		n += int64(len(k.key)) + timerKeyBytes
	}
	return n
}

// fired forgets the pending groups of the window ending at end.
func (w *windowTimers) fired(end int64) {
	w.bytes -= w.listBytes(end)
	delete(w.keys, end)
	delete(w.scan, end)
}

func (w *windowTimers) Len() int           { return len(w.ends) }
func (w *windowTimers) Less(i, j int) bool { return w.ends[i] < w.ends[j] }
func (w *windowTimers) Swap(i, j int)      { w.ends[i], w.ends[j] = w.ends[j], w.ends[i] }
func (w *windowTimers) Push(x any)         { w.ends = append(w.ends, x.(int64)) }
func (w *windowTimers) Pop() any {
	x := w.ends[len(w.ends)-1]
	w.ends = w.ends[:len(w.ends)-1]
	return x
}
