package exec

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindOver, func(t *subtask) (operator, error) { return newOver(t) })
}

// overOp is the OVER aggregation (planner.OverSpec), as Flink's
// RowTime{Rows,Range}{Bounded,Unbounded}PrecedingFunction and their
// processing-time versions: one output row per input row, its columns
// followed by the aggregates over its window.
//
// Each partition key's state (overPart) is its rows in order, split in
// two: the rows already emitted that a later frame may still cover
// (retained), then the rows waiting (pending). By event time a row waits
// until the watermark reaches its time; rows at or behind the watermark
// when they arrive are late, dropped and counted. When the watermark
// passes, the key's pending rows up to it are framed in time order: ROWS
// frames by position, RANGE frames by time, rows of equal time (peers)
// seeing each other. By processing time a batch's rows are framed at the
// end of the batch. Bounded (SORTED), every row of a key waits until the
// end of the input, is sorted by the ORDER BY keys and framed, FOLLOWING
// bounds included.
//
// The accumulators (aggfn.go) slide along the rows: a row entering the
// frame is accumulated, a row leaving it retracted; an aggregate that
// cannot retract (MIN, MAX, FIRST_VALUE, LAST_VALUE, LISTAGG) is
// recomputed over the frame when rows leave it. With UNBOUNDED PRECEDING
// nothing leaves, no row is retained, and the accumulators hold the
// key's whole history.
//
// State: one entry per partition key in spaceGroups (overCodec: the
// accumulators, the retained and pending rows), through the write-back
// cache; the layout and the watermark in spaceMeta. The pending keys
// (timers by earliest pending time) are kept in memory and rebuilt from
// the entries on restore.
type overOp struct {
	t      *taskContext
	spec   *planner.OverSpec
	ov     *planner.Over
	owner  string
	layout string
	maxPar int
	cache  *state.Cache[overPart]
	fold   *aggFold
	// slide: rows leave frames (a bounded start); recompute: and some
	// aggregate cannot retract them.
	slide, recompute bool
	bounded, proc    bool
	// byValue: rows carry the single ORDER BY column's value in ts
	// (bounded input, an integer-class order column).
	byValue bool

	inT    []types.T
	inSch  *arrow.Schema
	outSch *arrow.Schema
	partT  []types.T
	partR  []colReader
	ordR   []colReader
	colR   []colReader
	timeR  colReader
	timers windowTimers
	wm     int64

	hashes []uint64
	kbuf   []byte
	sbuf   []byte
	rbuf   []byte
	// offs: where each row's order keys and columns start in sbuf
	// (bounded), and the end.
	offs []int
	segs []overSeg
	late int64
	// fnIdx: per LAG/LEAD call, the row of the firing's batch each output
	// row reads (-1: none; past the batch: the default's column).
	fnIdx [][]int32
	// lagRows: the emitted rows a key keeps for LAG (time-ordered
	// windows; the largest offset).
	lagRows int
}

// overPart is one partition key's state: rows[:done] emitted and
// retained (accs aggregate exactly them, or with UNBOUNDED PRECEDING
// every row emitted so far), rows[done:] pending, in time order
// (bounded: in arrival order until sorted).
type overPart struct {
	accs []accumulator
	rows []overRow
	done int
	// hist: the last rows emitted, as many as the largest LAG offset
	// (time-ordered windows with LAG only), oldest first.
	hist []overRow
}

// overRow is one row: its time (or order value), its order keys'
// encoding (bounded only) and its columns (colReader.encodeKey form).
type overRow struct {
	ts   int64
	sort string
	row  string
}

func newOver(t *subtask) (*overOp, error) {
	sp := t.op.Spec.(*planner.OverSpec)
	ov := sp.Over
	o := &overOp{spec: sp, ov: ov, maxPar: t.job.graph.MaxParallelism, outSch: t.op.Schema.Arrow(),
		bounded: sp.Bounded, proc: ov.Proctime && !sp.Bounded, wm: minWatermark}
	in := ov.Input.Schema()
	o.inSch = in.Arrow()
	for _, c := range in {
		o.inT = append(o.inT, c.Type)
	}
	for _, k := range ov.Partition {
		o.partT = append(o.partT, in[k].Type)
	}
	o.partR = make([]colReader, len(ov.Partition))
	o.ordR = make([]colReader, len(ov.Order))
	o.colR = make([]colReader, len(in))
	o.byValue = o.bounded && len(ov.Order) == 1 && class(in[ov.Order[0].Index].Type.Kind) == 'i'
	o.slide = !ov.Frame.StartUnbounded
	var err error
	if o.slide {
		o.fold, err = newAggFold(ov.Aggs, aggMode{updating: true})
		if err != nil { // an aggregate that cannot retract
			o.recompute = true
		}
	}
	if o.fold == nil {
		if o.fold, err = newAggFold(ov.Aggs, aggMode{}); err != nil {
			return nil, err
		}
	}
	cols := make([]string, len(o.inT))
	for i, t := range o.inT {
		cols[i] = t.Nullable().String()
	}
	o.layout = aggLayout(fmt.Sprintf("over aggregate %s %s", sp.TimeMode(), ov.Frame), o.partT, o.fold.defs) +
		" columns (" + strings.Join(cols, ", ") + ")"
	if len(ov.Funcs) > 0 {
		var fns []string
		for _, f := range ov.Funcs {
			if !o.bounded {
				if f.Func != planner.WinLag {
					return nil, fmt.Errorf("window function %s over a time-ordered window: only LAG runs there", f.Func)
				}
				o.lagRows = max(o.lagRows, int(f.Offset))
			}
			fns = append(fns, fmt.Sprintf("%s(%d, %d, %d)", f.Func, f.Arg, f.Offset, f.Default))
		}
		o.layout += " functions (" + strings.Join(fns, ", ") + ")"
		o.fnIdx = make([][]int32, len(ov.Funcs))
	}
	o.timers.keys = map[int64][]timerKey{}
	return o, nil
}

func (o *overOp) open(t *taskContext) error {
	o.t = t
	o.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: o.owner, Layout: o.layout, Watermark: &o.wm})
	if err != nil {
		return err
	}
	codec := overCodec{fold: o.fold, owner: o.owner, hist: o.lagRows > 0}
	o.cache = declareCache[overPart](st, spaceGroups, "over rows", codec)
	o.cache.SetSizer(overPartBytes)
	if t.restored == nil {
		return nil
	}
	var p overPart
	return o.cache.Space().Scan(func(kg int, k, v []byte) error {
		if err := codec.Decode(v, &p); err != nil {
			return err
		}
		if p.done < len(p.rows) {
			o.timers.add(p.rows[p.done].ts, timerKey{kg: kg, key: string(k)})
		}
		return nil
	})
}

func (o *overOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	rec := b.Rec
	ov := o.ov
	for j, k := range ov.Partition {
		o.partR[j].reset(o.partT[j], rec.Column(k))
	}
	for c := range o.colR {
		o.colR[c].reset(o.inT[c], rec.Column(c))
	}
	if o.bounded {
		for j, k := range ov.Order {
			o.ordR[j].reset(o.inT[k.Index], rec.Column(k.Index))
		}
	} else {
		o.timeR.reset(types.TimestampType, rec.Column(ov.Order[0].Index))
	}
	if cap(o.hashes) < n {
		o.hashes = make([]uint64, n)
	}
	h := o.hashes[:n]
	clear(h)
	for j, k := range ov.Partition {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: o.partT[j]}, n, h)
	}
	// Bounded, every row stays until the input ends: the batch's order
	// keys and rows are encoded into one string the rows slice.
	var enc string
	if o.bounded {
		o.sbuf, o.offs = o.sbuf[:0], o.offs[:0]
		for i := 0; i < n; i++ {
			o.offs = append(o.offs, len(o.sbuf))
			for j := range o.ordR {
				k := ov.Order[j]
				o.sbuf = appendSortKey(o.sbuf, &o.ordR[j], i, k.Desc, k.NullsFirst)
			}
			o.offs = append(o.offs, len(o.sbuf))
			for c := range o.colR {
				o.sbuf = o.colR[c].encodeKey(o.sbuf, i)
			}
		}
		o.offs = append(o.offs, len(o.sbuf))
		enc = string(o.sbuf)
	}
	var late int64
	for i := 0; i < n; i++ {
		if b.Op(i) != Insert {
			return fmt.Errorf("OVER aggregation received a %s row: its input must be append-only", b.Op(i))
		}
		var x overRow
		switch {
		case o.bounded:
			x.sort, x.row = enc[o.offs[2*i]:o.offs[2*i+1]], enc[o.offs[2*i+1]:o.offs[2*i+2]]
			if o.byValue && !o.ordR[0].isNull(i) {
				x.ts = o.ordR[0].int(i)
			}
		case o.timeR.isNull(i):
			late++ // in no frame by time
			continue
		default:
			x.ts = o.timeR.i64[i]
			if !o.proc && x.ts <= o.wm {
				late++
				continue
			}
		}
		o.kbuf = o.kbuf[:0]
		for j := range o.partR {
			o.kbuf = o.partR[j].encodeKey(o.kbuf, i)
		}
		if !o.bounded {
			o.rbuf = o.rbuf[:0]
			for c := range o.colR {
				o.rbuf = o.colR[c].encodeKey(o.rbuf, i)
			}
			x.row = string(o.rbuf)
		}
		kg := state.KeyGroup(h[i], o.maxPar)
		e, created, err := o.cache.Get(kg, o.kbuf)
		if err != nil {
			return err
		}
		p := &e.Value
		if created || p.accs == nil {
			p.accs = o.fold.newAccs(nil)
		}
		pending := p.rows[p.done:]
		// Pending rows stay in time order, equal times in arrival order.
		pos := len(pending)
		if !o.bounded && pos > 0 && pending[pos-1].ts > x.ts {
			pos = sort.Search(len(pending), func(j int) bool { return pending[j].ts > x.ts })
		}
		if len(pending) == 0 || (!o.bounded && x.ts < pending[0].ts) {
			o.timers.add(x.ts, timerKey{kg: kg, key: e.Key})
		}
		p.rows = append(p.rows, overRow{})
		at := p.done + pos
		copy(p.rows[at+1:], p.rows[at:])
		p.rows[at] = x
		if e.Dirty() {
			o.cache.Grew(e, overRowBytes+len(x.sort)+len(x.row))
		} else {
			o.cache.MarkDirty(e) // counts it all
		}
	}
	if late > 0 {
		o.t.job.lateRecords.Add(late)
		o.late += late
	}
	if o.proc {
		if err := o.fire(maxWatermark, out); err != nil {
			return err
		}
	}
	_, err := trimCache(o.t, o.cache, o.timers.bytes)
	return err
}

// watermark frames the rows the watermark passed (event time only).
func (o *overOp) watermark(wm int64, out *emitter) error {
	if o.bounded || o.proc || wm <= o.wm {
		return nil
	}
	o.wm = wm
	return o.fire(wm, out)
}

func (o *overOp) endInput(out *emitter) error {
	if o.proc {
		return nil
	}
	if !o.bounded {
		o.wm = maxWatermark
	}
	return o.fire(maxWatermark, out)
}

// overSeg is one key's part of a firing: its entry, the rows framed
// (rows[r:r+k] new), their frames, and where its rows are in the batch
// built for the firing (the new rows at base, the retained rows
// rows[xlo:xhi] the frames reach at xbase).
type overSeg struct {
	e              *state.Entry[overPart]
	r, k           int
	fs, fe         []int
	base, xbase    int
	xlo, xhi, last int
	// hbase: where the key's hist rows are in the batch.
	hbase int
}

// fire emits the pending rows whose time is at most limit (all of them
// at the end of a bounded input), key by key.
func (o *overOp) fire(limit int64, out *emitter) error {
	o.segs = o.segs[:0]
	var keys []timerKey
	for len(o.timers.ends) > 0 && o.timers.ends[0] <= limit {
		end := heap.Pop(&o.timers).(int64)
		keys = append(keys, o.timers.keys[end]...)
		o.timers.fired(end)
	}
	if len(keys) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(keys))
	nOut := 0
	for _, tk := range keys {
		if seen[tk.key] {
			continue
		}
		seen[tk.key] = true
		e, _, err := o.cache.Get(tk.kg, []byte(tk.key))
		if err != nil {
			return err
		}
		p := &e.Value
		pend := p.rows[p.done:]
		k := len(pend)
		if !o.bounded {
			k = sort.Search(len(pend), func(j int) bool { return pend[j].ts > limit })
		} else {
			sort.SliceStable(pend, func(a, b int) bool { return pend[a].sort < pend[b].sort })
		}
		if k == 0 {
			continue
		}
		s := overSeg{e: e, r: p.done, k: k, base: nOut}
		o.frames(&s)
		nOut += k
		o.segs = append(o.segs, s)
	}
	if nOut == 0 {
		return nil
	}
	// The batch: the new rows of every key, then the retained rows the
	// frames reach.
	bs := make([]array.Builder, len(o.inT))
	for c, f := range o.inSch.Fields() {
		bs[c] = array.NewBuilder(o.t.mem, f.Type)
	}
	for i := range o.segs {
		s := &o.segs[i]
		for _, x := range s.e.Value.rows[s.r : s.r+s.k] {
			if err := appendEncodedRow(bs, o.inT, x.row); err != nil {
				releaseAll(bs)
				return err
			}
		}
	}
	total := nOut
	for i := range o.segs {
		s := &o.segs[i]
		s.xbase = total
		for _, x := range s.e.Value.rows[s.xlo:s.xhi] {
			if err := appendEncodedRow(bs, o.inT, x.row); err != nil {
				releaseAll(bs)
				return err
			}
		}
		total += s.xhi - s.xlo
	}
	for i := range o.segs {
		s := &o.segs[i]
		s.hbase = total
		for _, x := range s.e.Value.hist {
			if err := appendEncodedRow(bs, o.inT, x.row); err != nil {
				releaseAll(bs)
				return err
			}
		}
		total += len(s.e.Value.hist)
	}
	cols := make([]arrow.Array, len(bs))
	for c, b := range bs {
		cols[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(o.inSch, cols, int64(total))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	o.fold.read(rec)
	res := make([]array.Builder, len(o.ov.Aggs))
	for j, c := range o.ov.Aggs {
		res[j] = array.NewBuilder(o.t.mem, c.T.ArrowType())
	}
	fres := make([]array.Builder, len(o.ov.Funcs))
	for j, c := range o.ov.Funcs {
		fres[j] = array.NewBuilder(o.t.mem, c.T.ArrowType())
		o.fnIdx[j] = o.fnIdx[j][:0]
	}
	for i := range o.segs {
		o.windowSeg(&o.segs[i], fres, total)
		if err := o.slideSeg(&o.segs[i], res); err != nil {
			releaseAll(res)
			releaseAll(fres)
			return err
		}
	}
	outCols := make([]arrow.Array, 0, len(o.inT)+len(res)+len(fres))
	for c := range o.inT {
		outCols = append(outCols, array.NewSlice(rec.Column(c), 0, int64(nOut)))
	}
	for _, b := range res {
		outCols = append(outCols, b.NewArray())
		b.Release()
	}
	for j, b := range fres {
		a := b.NewArray()
		b.Release()
		if c := o.ov.Funcs[j]; c.Func == planner.WinLag || c.Func == planner.WinLead {
			a.Release()
			var err error
			if a, err = o.offsetValues(rec, c, o.fnIdx[j]); err != nil {
				releaseAll(fres[j+1:])
				for _, x := range outCols {
					x.Release()
				}
				return err
			}
		}
		outCols = append(outCols, a)
	}
	outRec := array.NewRecordBatch(o.outSch, outCols, int64(nOut))
	for _, c := range outCols {
		c.Release()
	}
	o.segs = o.segs[:0]
	return out.emit(Batch{Rec: outRec})
}

// windowSeg computes the window functions (planner.WindowCall) of s's
// rows, the whole partition in order (bounded input only): the ranking
// functions into res, and for LAG and LEAD the batch row each output row
// reads into fnIdx (total: the batch's rows; an index past them is the
// default's column at the output row).
func (o *overOp) windowSeg(s *overSeg, res []array.Builder, total int) {
	if len(o.ov.Funcs) == 0 {
		return
	}
	rows := s.e.Value.rows[s.r : s.r+s.k]
	n := len(rows)
	h := len(s.e.Value.hist) // emitted before: LAG reads them first
	for j, c := range o.ov.Funcs {
		switch c.Func {
		case planner.WinLag, planner.WinLead:
			off := int(c.Offset)
			if c.Func == planner.WinLag {
				off = -off
			}
			for i := range rows {
				switch at := i + off; {
				case at >= 0 && at < n:
					o.fnIdx[j] = append(o.fnIdx[j], int32(s.base+at))
				case at < 0 && at >= -h:
					o.fnIdx[j] = append(o.fnIdx[j], int32(s.hbase+h+at))
				case c.Default >= 0:
					o.fnIdx[j] = append(o.fnIdx[j], int32(total+s.base+i))
				default:
					o.fnIdx[j] = append(o.fnIdx[j], -1)
				}
			}
			continue
		}
		b := res[j]
		b.Reserve(n)
		rank, dense := 0, 0
		groupEnd := 0 // the end of the current row's peer group
		for i := range rows {
			if i == 0 || rows[i].sort != rows[i-1].sort {
				rank, dense = i+1, dense+1
			}
			if i >= groupEnd {
				groupEnd = i + 1
				for groupEnd < n && rows[groupEnd].sort == rows[i].sort {
					groupEnd++
				}
			}
			switch c.Func {
			case planner.WinRowNumber:
				b.(*array.Int64Builder).UnsafeAppend(int64(i + 1))
			case planner.WinRank:
				b.(*array.Int64Builder).UnsafeAppend(int64(rank))
			case planner.WinDenseRank:
				b.(*array.Int64Builder).UnsafeAppend(int64(dense))
			case planner.WinNtile:
				b.(*array.Int64Builder).UnsafeAppend(ntile(i, n, int(c.Offset)))
			case planner.WinPercentRank:
				pr := 0.0
				if n > 1 {
					pr = float64(rank-1) / float64(n-1)
				}
				b.(*array.Float64Builder).UnsafeAppend(pr)
			case planner.WinCumeDist:
				b.(*array.Float64Builder).UnsafeAppend(float64(groupEnd) / float64(n))
			}
		}
	}
}

// ntile is the bucket (1-based) of row i of n split into k buckets whose
// sizes differ by at most one, the larger first.
func ntile(i, n, k int) int64 {
	q, r := n/k, n%k
	if q == 0 {
		return int64(i + 1)
	}
	big := r * (q + 1) // the rows of the r larger buckets
	if i < big {
		return int64(i/(q+1) + 1)
	}
	return int64(r + (i-big)/q + 1)
}

// offsetValues builds LAG's or LEAD's result: the value column at the rows
// idx names (NULL at -1), the default's column past the batch's rows.
func (o *overOp) offsetValues(rec arrow.RecordBatch, c planner.WindowCall, idx []int32) (arrow.Array, error) {
	src := rec.Column(c.Arg)
	if c.Default >= 0 {
		cat, err := array.Concatenate([]arrow.Array{src, rec.Column(c.Default)}, o.t.mem)
		if err != nil {
			return nil, err
		}
		defer cat.Release()
		src = cat
	}
	ib := array.NewInt32Builder(o.t.mem)
	defer ib.Release()
	ib.Reserve(len(idx))
	for _, x := range idx {
		if x < 0 {
			ib.UnsafeAppendBoolToBitmap(false)
		} else {
			ib.UnsafeAppend(x)
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	return compute.TakeArray(o.t.ctx, src, ia)
}

// frames computes the frame [fs, fe] of each new row of s (indexes into
// the key's rows) and which retained rows the batch must hold.
func (o *overOp) frames(s *overSeg) {
	rows := s.e.Value.rows
	n := s.r + s.k // the rows a frame may reach
	if o.bounded {
		n = len(rows)
	}
	f := o.ov.Frame
	s.fs, s.fe = s.fs[:0], s.fe[:0]
	peer := func(a, b int) bool {
		if o.bounded {
			return rows[a].sort == rows[b].sort
		}
		return rows[a].ts == rows[b].ts
	}
	isNull := func(a int) bool { return o.bounded && (rows[a].sort[0] != 1) }
	// within: row a is within d of row j's value (d < 0: below it).
	within := func(a, j int, d int64) bool {
		if isNull(a) || isNull(j) {
			return isNull(a) == isNull(j)
		}
		if d < 0 {
			return rows[a].ts >= rows[j].ts+d
		}
		return rows[a].ts <= rows[j].ts+d
	}
	lo, hi := 0, s.r
	for j := s.r; j < s.r+s.k; j++ {
		switch {
		case f.StartUnbounded:
			lo = 0
		case f.Rows:
			lo = max(0, j-int(f.Start))
		case f.Start == 0:
			for lo < j && !peer(lo, j) {
				lo++
			}
		default:
			for lo < j && !within(lo, j, -f.Start) {
				lo++
			}
		}
		hi = max(hi, j)
		switch {
		case f.EndUnbounded:
			hi = n - 1
		case f.Rows:
			hi = min(n-1, j+int(f.End))
		case f.End == 0:
			for hi+1 < n && peer(hi+1, j) {
				hi++
			}
		default:
			for hi+1 < n && within(hi+1, j, f.End) {
				hi++
			}
		}
		s.fs = append(s.fs, lo)
		s.fe = append(s.fe, hi)
	}
	// The retained rows (before r) the slide touches: those it retracts
	// (from 0, when the accumulators hold the retained rows), or those it
	// recomputes from.
	s.xlo, s.xhi = 0, 0
	if s.r > 0 && o.slide {
		last := s.fs[len(s.fs)-1]
		if o.recompute {
			s.xlo, s.xhi = min(s.fs[0], s.r), s.r
		} else {
			s.xlo, s.xhi = 0, min(last, s.r)
		}
	}
}

// slideSeg moves the accumulators of s's key along its new rows' frames,
// appends each row's results to res and updates the key's state.
func (o *overOp) slideSeg(s *overSeg, res []array.Builder) error {
	p := &s.e.Value
	at := func(i int) int {
		if i >= s.r {
			return s.base + i - s.r
		}
		return s.xbase + i - s.xlo
	}
	accs := p.accs
	lo, hi := 0, s.r // accs aggregate rows[lo:hi]
	if o.bounded {
		accs = o.fold.newAccs(accs)
	}
	if !o.slide && !o.bounded {
		lo, hi = s.r, s.r
	}
	var x foldCtx
	for jj := 0; jj < s.k; jj++ {
		fs, fe := s.fs[jj], s.fe[jj]
		if o.slide && fs > lo {
			if o.recompute {
				accs = o.fold.newAccs(accs)
				lo, hi = fs, fs
			} else {
				for ; lo < fs; lo++ {
					if lo < hi {
						if err := o.fold.add(accs, &x, at(lo), -1); err != nil {
							return err
						}
					}
				}
				hi = max(hi, lo)
			}
		}
		for ; hi <= fe; hi++ {
			if err := o.fold.add(accs, &x, at(hi), 1); err != nil {
				return err
			}
		}
		if err := o.fold.check(accs); err != nil {
			return err
		}
		o.fold.appendResults(res, accs)
	}
	p.accs = accs
	if o.lagRows > 0 { // keep the last rows emitted for LAG
		emitted := p.rows[s.r : s.r+s.k]
		if len(emitted) >= o.lagRows {
			p.hist = append(p.hist[:0], emitted[len(emitted)-o.lagRows:]...)
		} else {
			p.hist = append(p.hist, emitted...)
			p.hist = p.hist[:copy(p.hist, p.hist[max(0, len(p.hist)-o.lagRows):])]
		}
	}
	switch {
	case o.bounded:
		o.cache.Delete(s.e)
		return nil
	case !o.slide:
		p.rows = p.rows[:copy(p.rows, p.rows[s.r+s.k:])]
		p.done = 0
	default:
		p.rows = p.rows[:copy(p.rows, p.rows[lo:])]
		p.done = s.r + s.k - lo
	}
	clear(p.rows[len(p.rows):cap(p.rows)])
	if p.done < len(p.rows) {
		o.timers.add(p.rows[p.done].ts, timerKey{kg: s.e.KG(), key: s.e.Key})
	}
	o.cache.MarkDirty(s.e)
	return nil
}

func (o *overOp) close() error { return nil }

// overStateVersion is the version of overCodec's encoding.
const overStateVersion = 1

// overCodec encodes a partition key's state: the accumulators (with
// their tags), the number of retained rows, and the rows, each its time,
// order keys and columns.
type overCodec struct {
	fold  *aggFold
	owner string
	// hist: the state has LAG's rows (overPart.hist), after the rows; a
	// window without LAG writes none, so its encoding stays the same.
	hist bool
}

func (c overCodec) Encode(dst []byte, p *overPart) []byte {
	dst = checkpoint.AppendStateHeader(dst, overStateVersion)
	dst = c.fold.encodeAccs(dst, p.accs)
	dst = binary.AppendUvarint(dst, uint64(p.done))
	dst = binary.AppendUvarint(dst, uint64(len(p.rows)))
	dst = appendOverRows(dst, p.rows)
	if c.hist {
		dst = binary.AppendUvarint(dst, uint64(len(p.hist)))
		dst = appendOverRows(dst, p.hist)
	}
	return dst
}

func appendOverRows(dst []byte, rows []overRow) []byte {
	for _, r := range rows {
		dst = binary.AppendVarint(dst, r.ts)
		dst = appendBytes(dst, []byte(r.sort))
		dst = appendBytes(dst, []byte(r.row))
	}
	return dst
}

func readOverRows(d *decoder, rows []overRow) {
	for i := range rows {
		rows[i].ts = d.varint()
		rows[i].sort = string(d.bytes())
		rows[i].row = string(d.bytes())
	}
}

func (c overCodec) Decode(src []byte, p *overPart) error {
	_, rest, err := checkpoint.ReadStateHeader(src, c.owner, 1, overStateVersion)
	if err != nil {
		return err
	}
	d := decoder{src: rest, owner: c.owner}
	p.accs = c.fold.decodeAccs(&d, nil)
	done := d.uvarint()
	n := d.uvarint()
	if d.err == nil && (n > uint64(len(d.src)) || done > n) {
		d.fail()
	}
	if d.err != nil {
		return d.err
	}
	p.done = int(done)
	p.rows = make([]overRow, n)
	readOverRows(&d, p.rows)
	p.hist = nil
	if c.hist {
		h := d.uvarint()
		if d.err == nil && h > uint64(len(d.src)) {
			d.fail()
		}
		if d.err != nil {
			return d.err
		}
		p.hist = make([]overRow, h)
		readOverRows(&d, p.hist)
	}
	d.end()
	return d.err
}
