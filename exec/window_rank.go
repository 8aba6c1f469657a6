package exec

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindWindowRank, func(t *subtask) (operator, error) { return newWindowRank(t), nil })
}

// windowRankOp is the window TopN and window deduplication
// (planner.WindowRankSpec), Flink's WindowRankOperator and
// WindowDeduplicate: per window and partition key it keeps the first End
// rows in order (the rows of rankOp's append-only strategy: a row pushed
// out of them never comes back, since the input is append-only) until the
// watermark passes the window's end; then it emits the rows numbered
// Start..End of each key (+I, with the row number when it is output) and
// drops the window. A row whose window has fired when it arrives is late:
// counted (SHOW JOBS), never ranked.
//
// State: the open windows' groups are held in memory, and each group is
// also in the subtask's store under [window end][window start][partition
// key], its rows encoded as windowRankCodec: the groups changed since the
// last checkpoint are written at each checkpoint, and a fired window's
// stored groups are deleted when it fires. A restore rebuilds the open
// windows from the store; the watermark is kept as the window aggregates
// keep it (stateDecl.Watermark), so a restore neither fires a window
// twice nor takes rows into a fired one.
type windowRankOp struct {
	t      *taskContext
	spec   *planner.WindowRankSpec
	owner  string
	layout string
	maxPar int
	space  *state.KeySpace

	inT    []types.T
	outSch *arrow.Schema
	partT  []types.T
	partR  []colReader
	order  []planner.SortKey
	ordR   []colReader
	colR   []colReader
	startR colReader
	endR   colReader
	// s and e bound the range: positions s..e-1 (0-based) of a key's rows.
	s, e       int
	newerFirst bool
	outputRank bool

	wm      int64
	windows map[int64]*wrWindow // by window end
	ends    wjEnds              // the open windows' ends, a min-heap
	groups  int64               // groups held
	// dirty are the groups changed since the last checkpoint.
	dirty []*wrGroup
	gauge windowGauge
	// spare are the groups of fired windows, for new ones.
	spare []*wrGroup

	hashes []uint64
	kbuf   []byte
	sbuf   []byte
	rbuf   []byte
	bs     []array.Builder
	rows   int
}

// wrWindow is one open window: its groups by partition key, in order of
// first arrival.
type wrWindow struct {
	start, end int64
	byKey      map[string]*wrGroup
	groups     []*wrGroup
	fired      bool
}

// wrGroup is a window's rows of one partition key, in order.
type wrGroup struct {
	w      *wrWindow
	kg     int
	key    string
	rows   []rankRow
	dirty  bool
	stored bool
}

func newWindowRank(t *subtask) *windowRankOp {
	sp := t.op.Spec.(*planner.WindowRankSpec)
	r := sp.Rank
	o := &windowRankOp{spec: sp, maxPar: t.job.graph.MaxParallelism, outSch: t.op.Schema.Arrow(),
		order: r.Order, newerFirst: sp.NewerFirst(), outputRank: r.OutputRank,
		wm: minWatermark, windows: map[int64]*wrWindow{}}
	in := r.Input.Schema()
	for _, c := range in {
		o.inT = append(o.inT, c.Type)
	}
	for _, k := range r.Partition {
		o.partT = append(o.partT, in[k].Type)
	}
	o.partR = make([]colReader, len(r.Partition))
	o.ordR = make([]colReader, len(r.Order))
	o.colR = make([]colReader, len(in))
	o.s, o.e = int(r.Start-1), int(r.End)
	if o.e < o.s {
		o.e = o.s
	}
	var lay strings.Builder
	fmt.Fprintf(&lay, "window rank %s partition", sp.Window.Kind)
	writeRankLayout(&lay, o.partT, r, o.inT)
	o.layout = lay.String()
	return o
}

func (o *windowRankOp) open(t *taskContext) error {
	o.t = t
	o.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: o.owner, Layout: o.layout, Watermark: &o.wm})
	if err != nil {
		return err
	}
	o.space = st.space(spaceGroups, "window rank rows")
	st.flushWith(o.storeDirty)
	if t.restored == nil {
		return nil
	}
	codec := windowRankCodec{owner: o.owner}
	err = o.space.Scan(func(kg int, k, v []byte) error {
		if len(k) < 16 {
			return fmt.Errorf("%w: %s: window rank key of %d bytes", errCorrupt, o.owner, len(k))
		}
		end := int64(binary.BigEndian.Uint64(k))
		start := int64(binary.BigEndian.Uint64(k[8:]))
		g := o.group(o.window(start, end), kg, k[16:])
		if err := codec.Decode(v, &g.rows); err != nil {
			return err
		}
		g.stored = true
		return nil
	})
	o.gauge.windows.Store(int64(len(o.ends)))
	o.gauge.groups.Store(o.groups)
	return err
}

// window returns the open window ending at end, made on first use.
func (o *windowRankOp) window(start, end int64) *wrWindow {
	w, ok := o.windows[end]
	if !ok {
		w = &wrWindow{start: start, end: end, byKey: map[string]*wrGroup{}}
		o.windows[end] = w
		heap.Push(&o.ends, end)
	}
	return w
}

// group returns w's group of key, made on first use (from the groups of
// fired windows, when there are).
func (o *windowRankOp) group(w *wrWindow, kg int, key []byte) *wrGroup {
	g, ok := w.byKey[string(key)]
	if !ok {
		if n := len(o.spare); n > 0 {
			g = o.spare[n-1]
			o.spare = o.spare[:n-1]
		} else {
			g = &wrGroup{}
		}
		g.w, g.kg, g.key = w, kg, string(key)
		w.byKey[g.key] = g
		w.groups = append(w.groups, g)
		o.groups++
	}
	return g
}

func (o *windowRankOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	rec := b.Rec
	r := o.spec.Rank
	for j, k := range r.Partition {
		o.partR[j].reset(o.partT[j], rec.Column(k))
	}
	for j, k := range o.order {
		o.ordR[j].reset(o.inT[k.Index], rec.Column(k.Index))
	}
	for c := range o.colR {
		o.colR[c].reset(o.inT[c], rec.Column(c))
	}
	o.startR.reset(types.TimestampType, rec.Column(o.spec.StartCol))
	o.endR.reset(types.TimestampType, rec.Column(o.spec.EndCol))
	if cap(o.hashes) < n {
		o.hashes = make([]uint64, n)
	}
	h := o.hashes[:n]
	clear(h)
	for j, k := range r.Partition {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: o.partT[j]}, n, h)
	}
	var late int64
	var w *wrWindow
	for i := 0; i < n; i++ {
		if b.Op(i) != Insert {
			return fmt.Errorf("%s: window rank received a %s row: its input must be append-only", o.owner, b.Op(i))
		}
		start, end := o.startR.i64[i], o.endR.i64[i]
		if windowFired(end, o.wm) {
			late++
			continue
		}
		if w == nil || w.end != end || w.start != start {
			w = o.window(start, end)
		}
		o.kbuf = o.kbuf[:0]
		for j := range o.partR {
			o.kbuf = o.partR[j].encodeKey(o.kbuf, i)
		}
		o.sbuf = o.sbuf[:0]
		for j := range o.ordR {
			o.sbuf = appendSortKey(o.sbuf, &o.ordR[j], i, o.order[j].Desc, o.order[j].NullsFirst)
		}
		o.accumulate(o.group(w, state.KeyGroup(h[i], o.maxPar), o.kbuf), i)
	}
	if late > 0 {
		o.t.job.lateRecords.Add(late)
	}
	o.gauge.windows.Store(int64(len(o.ends)))
	o.gauge.groups.Store(o.groups)
	return nil
}

// accumulate adds row i (its order key in o.sbuf) to g's rows, when it is
// among the first e.
func (o *windowRankOp) accumulate(g *wrGroup, i int) {
	old := g.rows
	L := len(old)
	if L >= o.e && (o.e == 0 || !o.before(o.sbuf, old[L-1].sort)) {
		return // the common case: not ahead of the last row kept
	}
	pos := sort.Search(L, func(j int) bool { return o.before(o.sbuf, old[j].sort) })
	o.rbuf = o.rbuf[:0]
	for c := range o.colR {
		o.rbuf = o.colR[c].encodeKey(o.rbuf, i)
	}
	x := rankRow{sort: o.sbuf, row: o.rbuf}
	if L >= o.e { // the last row leaves: reuse its slot and its buffers
		x = keepRankRow(x, old[L-1])
		copy(old[pos+1:], old[pos:L-1])
	} else {
		x = keepRankRow(x, rankRow{})
		old = append(old, rankRow{})
		copy(old[pos+1:], old[pos:L])
	}
	old[pos] = x
	g.rows = old
	if !g.dirty {
		g.dirty = true
		o.dirty = append(o.dirty, g)
	}
}

// before says whether a new row with order key sk goes before a kept row
// with order key kept.
func (o *windowRankOp) before(sk, kept []byte) bool {
	if o.newerFirst {
		return string(sk) <= string(kept)
	}
	return string(sk) < string(kept)
}

// watermark fires the windows the watermark passed. For processing-time
// windows the watermark of an ended input (+infinity) fires none, as for
// the window aggregates: only the clock's watermark does.
func (o *windowRankOp) watermark(wm int64, out *emitter) error {
	if wm <= o.wm || (wm == maxWatermark && o.spec.Window.Proctime) {
		return nil
	}
	o.wm = wm
	return o.fire(out)
}

// endInput fires every remaining window (the watermark of an ended input
// is +infinity), except processing-time windows the clock has not passed.
func (o *windowRankOp) endInput(out *emitter) error {
	if o.spec.Window.Proctime {
		return nil
	}
	o.wm = maxWatermark
	return o.fire(out)
}

// fire emits and drops every window the watermark passed, in order of
// window end.
func (o *windowRankOp) fire(out *emitter) error {
	fired, err := fireWindows(&o.ends, o.windows, o.wm, func(w *wrWindow) error { return o.fireWindow(w, out) })
	if err != nil {
		return err
	}
	if fired {
		// Forget the fired windows' groups among the dirty ones.
		keep := o.dirty[:0]
		for _, g := range o.dirty {
			if g.dirty {
				keep = append(keep, g)
			}
		}
		clear(o.dirty[len(keep):])
		o.dirty = keep
	}
	o.gauge.windows.Store(int64(len(o.ends)))
	o.gauge.groups.Store(o.groups)
	return nil
}

// fireWindow emits the range of each of w's groups, then deletes w's
// stored groups and keeps its groups for new windows.
func (o *windowRankOp) fireWindow(w *wrWindow, out *emitter) error {
	w.fired = true
	for _, g := range w.groups {
		for j := o.s; j < min(o.e, len(g.rows)); j++ {
			if err := o.add(g.rows[j].row, j, out); err != nil {
				return err
			}
		}
	}
	if err := o.flush(out); err != nil {
		return err
	}
	var wb state.WriteBatch
	for _, g := range w.groups {
		if g.stored {
			o.sbuf = o.storeKey(o.sbuf[:0], g)
			o.space.Delete(&wb, g.kg, o.sbuf)
		}
		clear(g.rows)
		*g = wrGroup{rows: g.rows[:0]}
		o.spare = append(o.spare, g)
		o.groups--
	}
	if wb.Len() == 0 {
		return nil
	}
	return o.t.store.Apply(&wb)
}

// add appends an output row: the encoded row and, when the row number is
// output, its position j + 1.
func (o *windowRankOp) add(row []byte, j int, out *emitter) error {
	if o.bs == nil {
		o.bs = newBuilders(o.t, o.outT())
	}
	if err := appendEncodedRow(o.bs[:len(o.inT)], o.inT, unsafeString(row)); err != nil {
		return err
	}
	if o.outputRank {
		o.bs[len(o.inT)].(*array.Int64Builder).Append(int64(j + 1))
	}
	o.rows++
	if o.rows >= o.t.batchSize {
		return o.flush(out)
	}
	return nil
}

func (o *windowRankOp) outT() []types.T {
	ts := append([]types.T(nil), o.inT...)
	if o.outputRank {
		ts = append(ts, types.T{Kind: types.BigInt, NotNull: true})
	}
	return ts
}

func (o *windowRankOp) flush(out *emitter) error {
	if o.bs == nil {
		return nil
	}
	bs, rows := o.bs, o.rows
	o.bs, o.rows = nil, 0
	return emitColumns(o.outSch, bs, rows, nil, out)
}

// storeKey is the store key of a group: [end][start][partition key].
func (o *windowRankOp) storeKey(dst []byte, g *wrGroup) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(g.w.end))
	dst = binary.BigEndian.AppendUint64(dst, uint64(g.w.start))
	return append(dst, g.key...)
}

// storeDirty writes the groups changed since the last call (those of
// windows still open) to the store.
func (o *windowRankOp) storeDirty() error {
	var wb state.WriteBatch
	var v []byte
	for _, g := range o.dirty {
		if !g.dirty {
			continue // fired since
		}
		o.sbuf = o.storeKey(o.sbuf[:0], g)
		v = windowRankCodec{}.Encode(v[:0], g.rows)
		o.space.Put(&wb, g.kg, o.sbuf, v)
		g.dirty, g.stored = false, true
		if err := o.space.ApplyPart(&wb); err != nil {
			return err
		}
	}
	clear(o.dirty)
	o.dirty = o.dirty[:0]
	if wb.Len() == 0 {
		return nil
	}
	return o.t.store.Apply(&wb)
}

func (o *windowRankOp) close() error {
	if o.bs != nil {
		releaseAll(o.bs)
		o.bs = nil
	}
	return nil
}

// windowState reports the open windows and the groups they hold (Metrics).
func (o *windowRankOp) windowState() (int64, int64) {
	return o.gauge.windows.Load(), o.gauge.groups.Load()
}

// windowRankStateVersion is the version of windowRankCodec's encoding.
const windowRankStateVersion = 1

// windowRankCodec encodes a window's rows of one partition key
// (appendRankRows).
type windowRankCodec struct{ owner string }

func (windowRankCodec) Encode(dst []byte, rows []rankRow) []byte {
	return appendRankRows(checkpoint.AppendStateHeader(dst, windowRankStateVersion), rows)
}

func (c windowRankCodec) Decode(src []byte, rows *[]rankRow) error {
	_, rest, err := checkpoint.ReadStateHeader(src, c.owner, 1, windowRankStateVersion)
	if err != nil {
		return err
	}
	*rows, err = readRankRows(rest, c.owner)
	return err
}
