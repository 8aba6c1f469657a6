package exec

import (
	"container/heap"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/checkpoint"
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
// every key group under windowWatermarkKey (which starts with 0x00). Timers
// (session ends) are in memory, rebuilt from the store on restore; a timer
// whose session has since grown finds nothing to fire.
type sessionAggOp struct {
	t    *taskContext
	spec *planner.WindowAggregate
	gap  int64
	windowInput
	arrowSch *arrow.Schema
	maxPar   int

	fold   *groupAggOp
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
	a.fold = &groupAggOp{spec: &planner.Aggregate{Aggs: spec.Aggs}, argR: make([]colReader, len(spec.Aggs)), outSch: t.op.Schema}
	a.timers.keys = map[int64][]timerKey{}
	return a, nil
}

func (a *sessionAggOp) open(t *taskContext) error {
	a.t = t
	a.fold.t = t
	codec := sessionCodec{nAggs: len(a.spec.Aggs)}
	a.cache = newCache[sessions](t, codec)
	if t.restored == nil {
		return nil
	}
	return t.store.Scan(func(kg int, k, v []byte) error {
		if len(k) > 0 && k[0] == 0 {
			if string(k) == string(windowWatermarkKey) && len(v) == 8 {
				a.wm = max(a.wm, int64(binary.BigEndian.Uint64(v)))
			}
			return nil
		}
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
		buf := append(a.buf[:0], 1)
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
		ns.g.accs = make([]acc, len(a.spec.Aggs))
		ns.g.rows = 1
		if err := a.fold.accumulate(&ns.g, i, 1); err != nil {
			return err
		}
		keep := ss.list[:0]
		for k := range ss.list {
			s := &ss.list[k]
			if s.start <= ns.end && ns.start <= s.end {
				if err := a.mergeGroup(&ns.g, &s.g); err != nil {
					return err
				}
				continue
			}
			keep = append(keep, *s)
		}
		ss.list = append(keep, ns)
		a.timers.add(ns.end, timerKey{kg: kg, key: e.Key})
		a.cache.MarkDirty(e)
	}
	late, err := a.endBatch(a.t, rec, out)
	if err != nil {
		return err
	}
	a.late += late
	return a.cache.Shrink(a.t.job.opts.StateCacheEntries)
}

// mergeGroup folds the accumulators of src into dst.
func (a *sessionAggOp) mergeGroup(dst, src *group) error {
	dst.rows += src.rows
	for j := range a.spec.Aggs {
		c := &a.spec.Aggs[j]
		d, s := &dst.accs[j], &src.accs[j]
		if c.Distinct {
			// A value both sessions saw counts once in the merged one.
			mergeSet(d, s)
			if err := recomputeDistinct(d, c); err != nil {
				return err
			}
			continue
		}
		switch c.Func {
		case planner.AggCount:
			d.n += s.n
		case planner.AggSum, planner.AggAvg:
			d.n += s.n
			switch class(c.ArgT.Kind) {
			case 'i':
				sum, ok := addInt(d.i, s.i, 1)
				if !ok {
					return accOverflow(c)
				}
				d.i = sum
			case 'f':
				d.f += s.f
			case 'd':
				sum, ok := addDecimal(d.d, s.d, 1)
				if !ok {
					return accOverflow(c)
				}
				d.d = sum
			}
		case planner.AggMin, planner.AggMax:
			if !s.valid {
				continue
			}
			if !d.valid {
				d.i, d.f, d.d, d.s, d.valid = s.i, s.f, s.d, s.s, true
				continue
			}
			isMax := c.Func == planner.AggMax
			var cmp int
			switch class(c.ArgT.Kind) {
			case 'i':
				cmp = cmp3(s.i, d.i)
			case 'f':
				cmp = cmp3(s.f, d.f)
			case 'd':
				if s.d.Greater(d.d) {
					cmp = 1
				} else if s.d.Less(d.d) {
					cmp = -1
				}
			case 's':
				if s.s > d.s {
					cmp = 1
				} else if s.s < d.s {
					cmp = -1
				}
			}
			if (isMax && cmp > 0) || (!isMax && cmp < 0) {
				d.i, d.f, d.d, d.s = s.i, s.f, s.d, s.s
			}
		default:
			return fmt.Errorf("%s cannot be merged across sessions", c.Func)
		}
	}
	return nil
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
	bs := a.fold.builders()
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
		bs, rows = a.fold.builders(), 0
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
				if err := a.fold.checkResults(s.g.accs); err != nil {
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
			}
			if rows >= a.t.batchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		delete(a.timers.keys, end)
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
	nk := len(a.spec.Keys)
	for j := range a.spec.Aggs {
		a.fold.appendResult(bs[nk+j], &a.spec.Aggs[j], &s.g.accs[j], s.g.rows)
	}
}

// snapshot writes the dirty sessions and the watermark, and checkpoints the store.
func (a *sessionAggOp) snapshot(cp *snapshotContext) (checkpoint.SubtaskState, error) {
	return checkpointWindowState(a.t, a.cache.Flush, a.wm, a.maxPar, cp)
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

func (a *sessionAggOp) close() error { return closeStore(a.t) }

// sessionCodec encodes a key's open sessions: key values, then per
// session its bounds, row count and accumulators.
type sessionCodec struct{ nAggs int }

func (sessionCodec) Encode(dst []byte, ss *sessions) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss.key)))
	for _, v := range ss.key {
		dst = appendValue(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(ss.list)))
	for i := range ss.list {
		s := &ss.list[i]
		dst = binary.AppendVarint(dst, s.start)
		dst = binary.AppendVarint(dst, s.end)
		dst = binary.AppendVarint(dst, s.g.rows)
		dst = binary.AppendUvarint(dst, uint64(len(s.g.accs)))
		for j := range s.g.accs {
			dst = encodeAcc(dst, &s.g.accs[j], true)
		}
	}
	return dst
}

func (sessionCodec) Decode(src []byte, ss *sessions) error {
	d := decoder{src: src}
	ss.key = make([]any, d.uvarint())
	for i := range ss.key {
		ss.key[i] = d.value()
	}
	ss.list = make([]session, d.uvarint())
	for i := range ss.list {
		s := &ss.list[i]
		s.start = d.varint()
		s.end = d.varint()
		s.g.rows = d.varint()
		s.g.accs = make([]acc, d.uvarint())
		for j := range s.g.accs {
			d.acc(&s.g.accs[j], true)
		}
	}
	return d.err
}
