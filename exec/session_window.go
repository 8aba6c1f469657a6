package exec

import (
	"container/heap"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// sessionAggOp is window aggregation over SESSION windows. A row at time ts
// of key k is the session [ts, ts+gap); it merges with k's open sessions
// that it overlaps (Flink's rule: [s1, e1) and [s2, e2) merge when
// s1 <= e2 and s2 <= e1), so a row that arrives out of order may bridge two
// sessions into one. Accumulators of merged sessions are merged (DISTINCT
// ones through their value multisets). When the
// watermark passes a session's end (its window_time, end - 1 ms) the
// session is emitted once (+I) and removed from state. A row whose session,
// after merging, has already fired is late: routed to the late-records
// table when the plan has one, dropped and counted otherwise.
//
// State: one entry per key in a state.Cache over the subtask's store, keyed
// 0x01 + the key columns, holding the key's open sessions; the watermark in
// every key group, in the metadata space (keyedState). Timers
// (session ends) are in memory, rebuilt from the store on restore; a timer
// whose session has since grown finds nothing to fire.
type sessionAggOp struct {
	t    *taskContext
	spec *planner.WindowAggregate
	gap  int64
	windowInput
	outSch   types.Schema
	arrowSch *arrow.Schema
	maxPar   int

	fold   *aggFold
	x      foldCtx
	owner  string
	layout string
	cache  *state.Cache[sessions]
	timers windowTimers
	wm     int64

	buf  []byte
	late int64
}

// sessions are one key's open sessions.
type sessions struct {
	key  []types.Value
	list []session
}

// session is one open session: [start, end) with its accumulators in g.
type session struct {
	start, end int64
	g          group
}

func newSessionAgg(t *subtask) (*sessionAggOp, error) {
	spec := t.op.Spec.(*planner.WindowAggSpec).Agg
	a := &sessionAggOp{
		spec: spec, gap: spec.Window.Size, windowInput: newWindowInput(spec),
		arrowSch: t.op.Schema.Arrow(), maxPar: t.job.graph.MaxParallelism, wm: minWatermark,
	}
	fold, err := newAggFold(spec.Aggs, aggMode{})
	if err != nil {
		return nil, err
	}
	a.fold = fold
	a.outSch = t.op.Schema
	a.layout = aggLayout("session window aggregate", a.partT, fold.defs)
	a.timers.keys = map[int64][]timerKey{}
	return a, nil
}

func (a *sessionAggOp) open(t *taskContext) error {
	a.t = t
	a.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: a.owner, Layout: a.layout, Watermark: &a.wm})
	if err != nil {
		return err
	}
	codec := sessionCodec{fold: a.fold, keyT: a.partT, owner: a.owner}
	a.cache = declareCache[sessions](st, spaceGroups, "sessions", codec)
	a.cache.SetSizer(sessionsBytes)
	if t.restored == nil {
		return nil
	}
	return a.cache.Space().Scan(func(kg int, k, v []byte) error {
		var ss sessions
		if err := codec.Decode(v, &ss); err != nil {
			return err
		}
		for _, s := range ss.list {
			a.timers.add(s.end, timerKey{kg: kg, key: string(k)})
		}
		return nil
	})
}

func (a *sessionAggOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	rec := b.Rec
	h, tcol := a.read(rec, a.spec, a.fold)
	noNulls := tcol.NullN() == 0
	for i := 0; i < n; i++ {
		if !noNulls && tcol.IsNull(i) {
			a.lateRow(i) // in no session: as late as can be
			continue
		}
		if b.Op(i) != Insert {
			return fmt.Errorf("window aggregation received a %s row: its input must be append-only", b.Op(i))
		}
		ts := a.tsR.i64[i]
		buf := a.buf[:0]
		for j := range a.keyR {
			buf = a.keyR[j].encodeKey(buf, i)
		}
		a.buf = buf
		kg := state.KeyGroup(h[i], a.maxPar)
		e, created, err := a.cache.Get(kg, buf)
		if err != nil {
			return err
		}
		ss := &e.Value
		if created {
			ss.key = make([]types.Value, len(a.partKeys))
			for j, k := range a.partKeys {
				ss.key[j] = types.ValueAt(rec.Column(k), i)
			}
		}
		// The merged session: the row's, grown by every open session it
		// overlaps (open sessions have not fired, so overlapping one makes
		// the row on time).
		ns := session{start: ts, end: ts + a.gap}
		merged := false
		for _, s := range ss.list {
			if s.start <= ns.end && ns.start <= s.end {
				ns.start, ns.end = min(ns.start, s.start), max(ns.end, s.end)
				merged = true
			}
		}
		if !merged && windowFired(ns.end, a.wm) {
			a.lateRow(i)
			if created {
				a.cache.Delete(e)
			}
			continue
		}
		// The merged session's accumulators: the sessions it absorbs in
		// order of their start (the list is kept in that order), then the
		// row, so that order-dependent aggregates (FIRST_VALUE, LISTAGG)
		// see the rows in arrival order as far as sessions tell it.
		ns.g.accs = a.fold.newAccs(nil)
		keep := ss.list[:0]
		for k := range ss.list {
			s := &ss.list[k]
			if s.start <= ns.end && ns.start <= s.end {
				ns.g.rows += s.g.rows
				if err := a.fold.merge(ns.g.accs, s.g.accs, &a.x); err != nil {
					return err
				}
				continue
			}
			keep = append(keep, *s)
		}
		ns.g.rows++
		if err := a.fold.add(ns.g.accs, &a.x, i, 1); err != nil {
			return err
		}
		at := len(keep)
		for at > 0 && keep[at-1].start > ns.start {
			at--
		}
		keep = append(keep, session{})
		copy(keep[at+1:], keep[at:])
		keep[at] = ns
		ss.list = keep
		a.timers.add(ns.end, timerKey{kg: kg, key: e.Key})
		a.cache.MarkDirty(e)
		a.cache.Resized(e)
	}
	late, err := a.endBatch(a.t, rec, out)
	if err != nil {
		return err
	}
	a.late += late
	_, err = trimCache(a.t, a.cache, a.timers.bytes)
	return err
}

// watermark fires the sessions the watermark passed.
func (a *sessionAggOp) watermark(wm int64, out *emitter) error {
	if wm <= a.wm || (wm == maxWatermark && a.spec.Window.Proctime) {
		return nil
	}
	a.wm = wm
	return a.fire(out)
}

// fire emits and deletes every session that ended by the current
// watermark, in order of the timers' ends.
func (a *sessionAggOp) fire(out *emitter) error {
	if len(a.timers.ends) == 0 || !windowFired(a.timers.ends[0], a.wm) {
		return nil
	}
	bs := a.builders()
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		err := emitColumns(a.arrowSch, bs, rows, nil, out)
		bs, rows = a.builders(), 0
		return err
	}
	for len(a.timers.ends) > 0 && windowFired(a.timers.ends[0], a.wm) {
		end := heap.Pop(&a.timers).(int64)
		for _, tk := range a.timers.keys[end] {
			e, created, err := a.cache.Get(tk.kg, []byte(tk.key))
			if err != nil {
				return err
			}
			if created {
				a.cache.Delete(e)
				continue
			}
			ss := &e.Value
			keep := ss.list[:0]
			for k := range ss.list {
				s := &ss.list[k]
				if !windowFired(s.end, a.wm) {
					keep = append(keep, *s)
					continue
				}
				if err := a.fold.check(s.g.accs); err != nil {
					releaseAll(bs)
					return err
				}
				a.appendSession(bs, ss.key, s)
				rows++
			}
			if len(keep) == len(ss.list) {
				continue
			}
			ss.list = keep
			if len(keep) == 0 {
				a.cache.Delete(e)
			} else {
				a.cache.MarkDirty(e)
				a.cache.Resized(e)
			}
			if rows >= a.t.batchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		a.timers.fired(end)
	}
	if err := flush(); err != nil {
		return err
	}
	return a.cache.Evict()
}

// appendSession appends the result row of session s of key.
func (a *sessionAggOp) appendSession(bs []array.Builder, key []types.Value, s *session) {
	j := 0
	for i, k := range a.spec.Keys {
		switch k {
		case planner.WindowStartKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(s.start))
		case planner.WindowEndKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(s.end))
		case planner.WindowTimeKey:
			bs[i].(*array.TimestampBuilder).Append(arrow.Timestamp(windowTime(s.end)))
		default:
			types.AppendValue(bs[i], key[j])
			j++
		}
	}
	a.fold.appendResults(bs[len(a.spec.Keys):], s.g.accs)
}

func (a *sessionAggOp) builders() []array.Builder {
	bs := make([]array.Builder, len(a.outSch))
	for i, c := range a.outSch {
		bs[i] = array.NewBuilder(a.t.mem, c.Type.ArrowType())
	}
	return bs
}

// endInput fires every open session, but for processing time, where only
// the clock's watermark closes sessions (planner/proctime.go).
func (a *sessionAggOp) endInput(out *emitter) error {
	if a.spec.Window.Proctime {
		return nil
	}
	a.wm = maxWatermark
	return a.fire(out)
}

func (a *sessionAggOp) close() error { return nil }
