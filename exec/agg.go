package exec

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// groupAggOp is the keyed group aggregate (GROUP BY, DISTINCT). It consumes
// and produces changelogs: for each input batch it folds every row into its
// group's accumulators (+1 for +I/+U, -1 for -U/-D), then emits, once per
// group the batch touched, the change of that group's result row: +I for a
// new group, -U/+U for a changed one, -D for one whose rows were all
// retracted, nothing when the result did not change.
//
// State, in key spaces of the subtask's store: the groups (spaceGroups) in
// a state.Cache, flushed at each checkpoint barrier; the value sets of
// MIN and MAX over an updating input (spaceValues) in state.CountedSets,
// one set per group and aggregate, keyed group key + aggregate index +
// value, so that a checkpoint writes only the values that changed; the
// value sets of DISTINCT aggregates (spaceDistinct), one per group and
// argument column, shared by the column's DISTINCT aggregates
// (aggfn_distinct_shared.go; state written before they were shared has
// one set per aggregate in spaceValues, and restores so); the layout (aggLayout) per key group
// (spaceMeta), checked on restore.
//
// With a state TTL (planner.GroupAggSpec.TTL, Flink's idle state
// retention) every group records when a row last reached it (processing
// time, one clock read per batch). A group not written for the TTL is
// dropped with its value sets when it is next read or, while it is in
// memory, at a checkpoint (sweep), and counted (Metrics.StateExpired);
// nothing is emitted for it. The next row of its key starts a new group,
// emitted +I as a first row is, as Flink does. With a TTL a retraction
// for a group that has no rows (expired, or never seen), or of a value its
// value set lacks, is ignored, as Flink ignores it with state cleaning on;
// without one it is an error, the input being inconsistent.
//
// With mini-batches (planner.GroupAggSpec.MiniBatchSize, Flink's
// 'table.exec.mini-batch.*') the batches of a mini-batch fold into the
// groups as they come, but the changes are emitted once for the whole
// mini-batch: a group updated a hundred times in it emits one -U/+U. A
// mini-batch ends when it holds MiniBatchSize rows, when
// MiniBatchLatency has passed since its first row (timedOperator), before
// a checkpoint's snapshot (bufferingOperator: its changes precede the
// barrier) and at the end of the input.
type groupAggOp struct {
	t        *taskContext
	spec     *planner.Aggregate
	updating bool
	keyT     []types.T
	outSch   types.Schema
	arrowSch *arrow.Schema
	maxPar   int
	// bk are the keys of the batch being processed, row i's the i-th.
	bk batchKeys

	fold   *aggFold
	owner  string
	layout string
	cache  *state.Cache[aggGroup]
	sets   *state.CountedSets
	dsets  *distinctSets
	x      foldCtx
	// flat: every aggregate keeps its state in the group's words
	// (aggGroup); nw is the number of the words: the row count, the
	// aggregates' words when flat, and with a TTL the time of the last
	// write (the last word).
	flat bool
	nw   int
	// cur holds the results of the group being emitted; old scratch for
	// results read from the state. touched are the groups the
	// (mini-)batch changed, in the order it first changed them; prev
	// holds their results as emitted before it (touchedGroup.emitted),
	// len(a.spec.Aggs) each, in that order.
	cur     []scalar
	old     []scalar
	touched []touchedGroup
	prev    []scalar

	keyR   []colReader
	hashes []uint64
	// sawAny says that a global aggregate (no keys) holds rows: its row
	// was emitted and not retracted since, so the end of the input emits
	// no empty-input row.
	sawAny bool

	// ttl (milliseconds; 0: none), now (this batch's processing time,
	// Unix milliseconds), clock (reads it; time.Now unless a test sets
	// it) and expired (groups dropped, not yet added to the job's count).
	ttl, now int64
	clock    func() int64
	expired  int64
	setRef   state.SetRef
	owner2   []byte

	// mbSize (rows; 0: no mini-batches) and mbLatency (milliseconds)
	// bound a mini-batch; buffered counts its rows, due (Unix
	// milliseconds, processing time) is when it must end (0: empty).
	mbSize         int
	mbLatency, due int64
	buffered       int
}

// aggGroup is the state of one group of the group aggregate as its cache
// holds it, in as few bytes and objects as it can (about 130 bytes of
// heap a COUNT/SUM group with its cache entry, where a group with its key
// values and an object per aggregate took about 300): its key is the
// cache entry's (the key columns as colReader.encodeKey writes them),
// decoded only to emit a row or write the state; its row count, the
// state of its aggregates when they are all of a fixed width
// (aggfn_flat.go) and with a TTL the time of its last write are words of
// one block; otherwise accs holds an accumulator per aggregate. It keeps
// no results: a cached group's last emitted results are always those of
// its state (rows > 0), and the results before a (mini-)batch changes a
// group are computed when it first does (groupAggOp.prev), as Flink's
// group aggregate computes them. A group of the window aggregation is
// kept alike (without a TTL; its cache key starts with its window's
// bounds, windowCodec).
type aggGroup struct {
	// w points at the first of groupAggOp.nw words (groupAggOp.words;
	// windowCodec.nw, windowCodec.words); nil for a group not made yet.
	w    *uint64
	accs *[]accumulator
}

// touchedGroup is a group the open (mini-)batch changed; emitted says it
// had results emitted before.
type touchedGroup struct {
	e       *state.Entry[aggGroup]
	emitted bool
}

// group is the state of one group of a session aggregate.
type group struct {
	key  []types.Value
	rows int64 // net number of rows
	accs []accumulator
}

func newGroupAgg(t *subtask) (*groupAggOp, error) {
	sp := t.op.Spec.(*planner.GroupAggSpec)
	a := &groupAggOp{spec: sp.Agg, updating: sp.InputUpdating, outSch: t.op.Schema, arrowSch: t.op.Schema.Arrow()}
	in := sp.Agg.Input.Schema()
	for _, k := range a.spec.Keys {
		a.keyT = append(a.keyT, in[k].Type)
	}
	a.maxPar = t.job.graph.MaxParallelism
	a.ttl = sp.TTL.Milliseconds()
	a.mbSize, a.mbLatency = sp.MiniBatchSize, sp.MiniBatchLatency.Milliseconds()
	return a, a.init()
}

func wallClock() int64 { return time.Now().UnixMilli() }

// init builds what newGroupAgg's fields determine.
func (a *groupAggOp) init() error {
	return a.initFold(true)
}

// initFold builds the aggregates, their DISTINCT sets shared per column
// or (state written before they were) one per aggregate.
func (a *groupAggOp) initFold(share bool) error {
	fold, err := newAggFold(a.spec.Aggs, aggMode{updating: a.updating, spaces: true, shareDistinct: share})
	if err != nil {
		return err
	}
	a.fold = fold
	a.keyR = make([]colReader, len(a.spec.Keys))
	a.cur = make([]scalar, len(a.spec.Aggs))
	a.old = make([]scalar, len(a.spec.Aggs))
	a.layout = aggLayout("group aggregate", a.keyT, fold.defs)
	words, flat := fold.layoutFlat(1)
	a.flat, a.nw = flat, 1+words
	if a.ttl > 0 {
		a.nw++
	}
	if a.clock == nil {
		a.clock = wallClock
	}
	a.x.lenient = a.ttl > 0
	return nil
}

func (a *groupAggOp) open(t *taskContext) error {
	a.t = t
	a.owner = stateOwner(t)
	if t.restored != nil && len(a.fold.shares) > 0 {
		// State written before DISTINCT sets were shared keeps its layout.
		meta := state.NewKeySpace(t.store, spaceMeta, "metadata")
		stored, ok, err := storedLayout(t, meta, a.maxPar, a.owner)
		if err != nil {
			return err
		}
		if ok && stored != a.layout {
			legacy := &groupAggOp{spec: a.spec, updating: a.updating, keyT: a.keyT, clock: a.clock, ttl: a.ttl}
			if err := legacy.initFold(false); err != nil {
				return err
			}
			if stored == legacy.layout {
				a.fold, a.layout, a.flat, a.nw = legacy.fold, legacy.layout, legacy.flat, legacy.nw
			}
		}
	}
	st, err := t.declareState(stateDecl{Owner: a.owner, Layout: a.layout, Expire: a.sweep})
	if err != nil {
		return err
	}
	a.cache = declareKeyedCache[aggGroup](st, spaceGroups, "groups", groupCodec{a: a, owner: a.owner})
	a.cache.SetSizer(a.groupBytes)
	a.sets = state.NewCountedSets(st.space(spaceValues, "value sets"), countCodec{owner: a.owner})
	st.flushWith(a.sets.Flush)
	a.dsets = newDistinctSets(st.space(spaceDistinct, "distinct values"), a.owner)
	st.flushWith(a.dsets.Flush)
	a.x.sets, a.x.dsets = a.sets, a.dsets
	if t.restored == nil {
		a.sets.StartsEmpty()
		a.dsets.StartsEmpty()
		return nil
	}
	if len(a.spec.Keys) == 0 {
		// A restored global aggregate that already saw rows must not emit
		// the empty-input row at the end.
		err := a.cache.Space().Scan(func(int, []byte, []byte) error { a.sawAny = true; return errStopScan })
		if err != nil && err != errStopScan {
			return err
		}
	}
	return nil
}

func (a *groupAggOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	rec := b.Rec
	for j, k := range a.spec.Keys {
		a.keyR[j].reset(a.keyT[j], rec.Column(k))
	}
	a.fold.read(rec)
	if cap(a.hashes) < n {
		a.hashes = make([]uint64, n)
	}
	h := a.hashes[:n]
	clear(h)
	for j, k := range a.spec.Keys {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: a.keyT[j]}, n, h)
	}
	if a.ttl > 0 {
		a.now = a.clock() // one clock read per batch
	}
	// The batch's keys, encoded once; those the cache lacks are read from
	// the store together, in key order, before the rows are folded.
	a.bk.reset()
	for i := 0; i < n; i++ {
		for j := range a.keyR {
			a.bk.buf = a.keyR[j].encodeKey(a.bk.buf, i)
		}
		a.bk.add(state.KeyGroup(h[i], a.maxPar))
	}
	a.bk.seal()
	if err := a.cache.Prefetch(a.bk.kgs, a.bk.keys); err != nil {
		return err
	}
	if err := a.dsets.prefetch(a.fold, a.bk.kgs, a.bk.keys); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		kg := a.bk.kgs[i]
		e, created, err := a.cache.Get(kg, a.bk.keys[i])
		if err != nil {
			return err
		}
		g := &e.Value
		w := a.words(g)
		if !created && a.ttl > 0 && a.now-int64(w[a.nw-1]) > a.ttl {
			if err := a.expire(e); err != nil {
				return err
			}
			created = true
		}
		retract := b.Op(i).IsRetract()
		if retract && (created || int64(w[0]) <= 0) && a.ttl > 0 {
			// Flink: no accumulator from a retraction (the group expired,
			// or its rows came before the job did).
			if created {
				a.cache.Delete(e)
			}
			continue
		}
		if created {
			w = a.initGroup(g)
		}
		if !e.Mark {
			if err := a.touch(e, created); err != nil {
				return err
			}
		}
		sign := int64(1)
		if retract {
			sign = -1
			if int64(w[0]) <= 0 {
				return a.retractError(e)
			}
		}
		w[0] += uint64(sign)
		if a.ttl > 0 {
			w[a.nw-1] = uint64(a.now)
		}
		a.x.kg, a.x.key = kg, e.Key
		if a.flat {
			err = a.fold.addFlat(w, &a.x, i, sign)
		} else {
			err = a.fold.add(*g.accs, &a.x, i, sign)
		}
		if err != nil {
			return err
		}
	}
	a.sawAny = a.sawAny || n > 0
	a.countExpired()
	if a.mbSize > 0 {
		a.buffered += n
		if a.buffered < a.mbSize && a.cache.Len() <= a.t.job.opts.StateCacheEntries {
			if a.due == 0 && len(a.touched) > 0 {
				a.due = a.clock() + max(a.mbLatency, 1)
			}
			return nil
		}
	}
	return a.flushBuffered(out)
}

// flushBuffered ends the mini-batch: it emits the changes of the groups
// touched since the last flush (without mini-batches: by the last batch).
func (a *groupAggOp) flushBuffered(out *emitter) error {
	a.buffered, a.due = 0, 0
	if err := a.flushChanges(out); err != nil {
		return err
	}
	return a.shrink()
}

// deadline is when the open mini-batch must end (timedOperator).
func (a *groupAggOp) deadline() (time.Time, bool) {
	if a.due == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(a.due), true
}

// onTimer ends the open mini-batch if it is due.
func (a *groupAggOp) onTimer(out *emitter) error {
	if a.due == 0 || a.clock() < a.due {
		return nil
	}
	return a.flushBuffered(out)
}

// shrink bounds the memory of the cached groups and of the value sets
// together: when the cache drops groups, the sets go too; when the
// DISTINCT sets hold more than half of the subtask's share of the budget
// (few groups with many values each, as q16's), they go first, and later
// rows read their values from the store one by one.
func (a *groupAggOp) shrink() error {
	if a.dsets.Bytes() > a.t.share.Limit()/2 {
		if err := a.dsets.Drop(); err != nil {
			return err
		}
	}
	dropped, err := trimCache(a.t, a.cache, a.dsets.Bytes())
	if err != nil || !dropped {
		return err
	}
	if err := a.sets.Drop(); err != nil {
		return err
	}
	return a.dsets.Drop()
}

// words are the words of g (nil for a group not made yet).
func (a *groupAggOp) words(g *aggGroup) []uint64 {
	if g.w == nil {
		return nil
	}
	return unsafe.Slice(g.w, a.nw)
}

// initGroup makes g a group without rows (reusing what it holds) and
// returns its words.
func (a *groupAggOp) initGroup(g *aggGroup) []uint64 {
	w := a.words(g)
	if w == nil {
		w = make([]uint64, a.nw)
		g.w = &w[0]
	} else {
		clear(w)
	}
	if !a.flat {
		if g.accs == nil {
			g.accs = new([]accumulator)
		}
		*g.accs = a.fold.newAccs(*g.accs)
	}
	return w
}

// touch records that the open (mini-)batch changes e's group, with its
// results as emitted before (those of its state, unless created).
func (a *groupAggOp) touch(e *state.Entry[aggGroup], created bool) error {
	e.Mark = true
	t := touchedGroup{e: e, emitted: !created && int64(*e.Value.w) > 0}
	n := len(a.cur)
	k := len(a.touched) * n
	if len(a.prev) < k+n {
		a.prev = append(a.prev, make([]scalar, k+n-len(a.prev))...)
	}
	if t.emitted {
		if err := a.results(&e.Value, a.prev[k:k+n]); err != nil {
			return err
		}
	}
	a.touched = append(a.touched, t)
	return nil
}

// results writes the results of g into dst.
func (a *groupAggOp) results(g *aggGroup, dst []scalar) error {
	if a.flat {
		w := a.words(g)
		for j := range a.fold.defs {
			if err := a.fold.defs[j].flatResult(w, &dst[j]); err != nil {
				return err
			}
		}
		return nil
	}
	for j, acc := range *g.accs {
		if err := acc.result(&dst[j]); err != nil {
			return err
		}
	}
	return nil
}

// expire drops the state of e's group, whose TTL passed: its value sets
// and its results; e stays in the cache, as a group about to be created.
func (a *groupAggOp) expire(e *state.Entry[aggGroup]) error {
	if err := a.dropSets(e); err != nil {
		return err
	}
	a.words(&e.Value)[0] = 0
	if e.Mark {
		// Changed earlier in this mini-batch: what it emitted before is
		// forgotten, as its state is (its next row emits an insert).
		for k := range a.touched {
			if a.touched[k].e == e {
				a.touched[k].emitted = false
			}
		}
	}
	a.expired++
	return nil
}

// dropSets empties the value sets of e's group.
func (a *groupAggOp) dropSets(e *state.Entry[aggGroup]) error {
	for k := range a.fold.shares {
		sh := &a.fold.shares[k]
		a.owner2 = append(append(a.owner2[:0], e.Key...), byte(sh.leader))
		set, err := a.dsets.lookup(&distinctRef{}, e.KG(), a.owner2, len(sh.members), sh.cls)
		if err != nil {
			return err
		}
		if err := a.dsets.empty(set); err != nil {
			return err
		}
	}
	for j := range a.fold.defs {
		if !a.fold.defs[j].spaced || a.fold.defs[j].share >= 0 {
			continue
		}
		a.owner2 = append(append(a.owner2[:0], e.Key...), byte(j))
		a.setRef = state.SetRef{}
		set, err := a.sets.Lookup(&a.setRef, e.KG(), a.owner2)
		if err != nil {
			return err
		}
		type vc struct {
			v string
			n int64
		}
		var all []vc
		set.Ascend(func(v string, n int64) bool { all = append(all, vc{v, n}); return true })
		for _, x := range all {
			if _, err := a.sets.Add(set, []byte(x.v), -x.n); err != nil {
				return err
			}
		}
	}
	return nil
}

// sweep drops the groups in memory whose TTL has passed (at a checkpoint:
// groups nobody reads expire too). Groups only in the store (the cache
// forgot them: state.backend.cache.max-entries) wait until they are read.
func (a *groupAggOp) sweep() error {
	if a.ttl <= 0 {
		return nil
	}
	now := a.clock()
	var dead []*state.Entry[aggGroup]
	a.cache.Range(func(e *state.Entry[aggGroup]) bool {
		if e.Value.w != nil && now-int64(a.words(&e.Value)[a.nw-1]) > a.ttl {
			dead = append(dead, e)
		}
		return true
	})
	for _, e := range dead {
		if err := a.dropSets(e); err != nil {
			return err
		}
		a.cache.Delete(e)
		a.expired++
	}
	a.countExpired()
	return nil
}

// countExpired adds the groups expired since the last call to the job's
// count.
func (a *groupAggOp) countExpired() {
	if a.expired > 0 {
		a.t.job.stateExpired.Add(a.expired)
		a.expired = 0
	}
}

func (a *groupAggOp) retractError(e *state.Entry[aggGroup]) error {
	return fmt.Errorf("retraction for group [%s] that has no rows: the input changelog is inconsistent", formatKey(a.keyT, e.Key))
}

// addInt returns a + sign*x (sign is +1 or -1); ok is false when the
// int64 accumulator would wrap.
func addInt(a, x, sign int64) (s int64, ok bool) {
	if sign > 0 {
		s = a + x
		return s, (a^s)&(x^s) >= 0
	}
	s = a - x
	return s, (a^x)&(a^s) >= 0
}

// addDecimal returns a + sign*x (sign is +1 or -1) in 128 bits; ok is false
// when the sum would wrap. The accumulator may leave the result's 38
// digits on the way (a retraction can bring it back); checkResult checks
// the result when it is emitted.
func addDecimal(a, x decimal128.Num, sign int64) (s decimal128.Num, ok bool) {
	ah, xh := a.HighBits(), x.HighBits()
	if sign > 0 {
		s = a.Add(x)
		sh := s.HighBits()
		return s, (ah^sh)&(xh^sh) >= 0
	}
	s = a.Sub(x)
	sh := s.HighBits()
	return s, (ah^xh)&(ah^sh) >= 0
}

// accOverflow is the error of an accumulator that cannot hold a running sum.
func accOverflow(c *planner.AggCall) error {
	acct := "BIGINT"
	if class(c.ArgT.Kind) == 'd' {
		acct = "128-bit"
	}
	return fmt.Errorf("%w: %s overflows %s: its running sum leaves the %s accumulator", ErrOverflow, c.Text, c.T.Nullable(), acct)
}

func fitsKind(v int64, k types.Kind) bool {
	switch k {
	case types.TinyInt:
		return v >= math.MinInt8 && v <= math.MaxInt8
	case types.SmallInt:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case types.Int:
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return true
}

// flushChanges emits the result changes of the groups the batch touched.
func (a *groupAggOp) flushChanges(out *emitter) error {
	if len(a.touched) == 0 {
		return nil
	}
	bs := a.builders()
	ops := make([]RowKind, 0, 2*len(a.touched))
	n := len(a.cur)
	for k := range a.touched {
		t := &a.touched[k]
		e, prev := t.e, a.prev[k*n:(k+1)*n]
		e.Mark = false
		a.cache.MarkDirty(e)
		if *e.Value.w == 0 {
			if t.emitted {
				a.appendRow(bs, e.Key, prev)
				ops = append(ops, Delete)
			}
			if len(a.spec.Keys) == 0 {
				a.sawAny = false // every row retracted: the input is empty again
			}
			a.cache.Delete(e)
			continue
		}
		if err := a.results(&e.Value, a.cur); err != nil {
			a.clearTouched()
			releaseAll(bs)
			return err
		}
		switch {
		case !t.emitted:
			a.appendRow(bs, e.Key, a.cur)
			ops = append(ops, Insert)
		case !sameResults(prev, a.cur):
			a.appendRow(bs, e.Key, prev)
			a.appendRow(bs, e.Key, a.cur)
			ops = append(ops, UpdateBefore, UpdateAfter)
		}
	}
	clear(a.touched)
	a.touched = a.touched[:0]
	return a.emitBuilt(bs, ops, out)
}

func (a *groupAggOp) builders() []array.Builder {
	bs := make([]array.Builder, len(a.outSch))
	for i, c := range a.outSch {
		bs[i] = array.NewBuilder(a.t.mem, c.Type.ArrowType())
	}
	return bs
}

func releaseAll(bs []array.Builder) {
	for _, b := range bs {
		b.Release()
	}
}

func (a *groupAggOp) emitBuilt(bs []array.Builder, ops []RowKind, out *emitter) error {
	n := len(ops)
	if !anyRetract(ops) {
		ops = nil // a batch of inserts only is append-only
	}
	return emitColumns(a.arrowSch, bs, n, ops, out)
}

func anyRetract(ops []RowKind) bool {
	for _, o := range ops {
		if o != Insert {
			return true
		}
	}
	return false
}

// clearTouched forgets the touched groups (a failed flush).
func (a *groupAggOp) clearTouched() {
	for _, t := range a.touched {
		t.e.Mark = false
	}
	clear(a.touched)
	a.touched = a.touched[:0]
}

// sameResults reports whether the results x and y are equal bit for bit,
// as Flink compares a group's old and new results (NaN equals NaN, -0
// differs from 0).
func sameResults(x, y []scalar) bool {
	for j := range x {
		s, o := &x[j], &y[j]
		if s.null != o.null {
			return false
		}
		if !s.null && (s.i != o.i || math.Float64bits(s.f) != math.Float64bits(o.f) || s.d != o.d || string(s.b) != string(o.b)) {
			return false
		}
	}
	return true
}

// appendRow appends a row of the group keyed key (its cache key) with
// the results res.
func (a *groupAggOp) appendRow(bs []array.Builder, key string, res []scalar) {
	appendKeyRow(bs, a.keyT, key)
	k := len(a.keyT)
	for j := range res {
		appendScalar(bs[k+j], a.spec.Aggs[j].T, &res[j])
	}
}

// avgDecimal returns sum*10^k / n rounded half up (as Flink's DECIMAL
// division), in 192-bit arithmetic without allocation; ok is false when
// the result does not fit precision p. n > 0, 0 <= k <= 19.
func avgDecimal(sum decimal128.Num, n int64, k, p int) (decimal128.Num, bool) {
	neg := sum.Sign() < 0
	if neg {
		sum = sum.Negate() // |sum| <= 2^127 fits an unsigned 128-bit value
	}
	hi, lo := uint64(sum.HighBits()), sum.LowBits()
	// m = |sum| * 10^k as three 64-bit limbs m2:m1:m0.
	f := pow10u64[k]
	c0, m0 := bits.Mul64(lo, f)
	c1, m1 := bits.Mul64(hi, f)
	m1, carry := bits.Add64(m1, c0, 0)
	m2 := c1 + carry
	d := uint64(n)
	q2, r := m2/d, m2%d
	q1, r := bits.Div64(r, m1, d)
	q0, r := bits.Div64(r, m0, d)
	if r >= d-r { // half up
		var cy uint64
		q0, cy = bits.Add64(q0, 1, 0)
		q1, cy = bits.Add64(q1, 0, cy)
		q2 += cy
	}
	if q2 != 0 || q1>>63 != 0 {
		return decimal128.Num{}, false
	}
	res := decimal128.New(int64(q1), q0)
	if !res.FitsInPrecision(int32(p)) {
		return decimal128.Num{}, false
	}
	if neg {
		res = res.Negate()
	}
	return res, true
}

var pow10u64 = [20]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// appendTyped appends a result held in one of the accumulator classes.
func appendTyped(b array.Builder, t types.T, i int64, f float64, d decimal128.Num, s string) {
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(i))
	case *array.Int16Builder:
		b.Append(int16(i))
	case *array.Int32Builder:
		b.Append(int32(i))
	case *array.Int64Builder:
		b.Append(i)
	case *array.Float32Builder:
		b.Append(float32(f))
	case *array.Float64Builder:
		b.Append(f)
	case *array.Decimal128Builder:
		b.Append(d)
	case *array.StringBuilder:
		b.Append(s)
	case *array.BinaryBuilder:
		b.Append([]byte(s))
	case *array.BooleanBuilder:
		b.Append(i != 0)
	case *array.Date32Builder:
		b.Append(arrow.Date32(i))
	case *array.Time32Builder:
		b.Append(arrow.Time32(i))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(i))
	default:
		panic(fmt.Sprintf("exec: aggregate result type %s", t))
	}
}

// endInput emits the row of a global aggregate over an input that had no
// rows (COUNT(*) = 0, the others NULL), as SQL requires.
func (a *groupAggOp) endInput(out *emitter) error {
	if err := a.flushBuffered(out); err != nil {
		return err
	}
	if len(a.spec.Keys) > 0 || a.sawAny {
		return nil
	}
	bs := a.builders()
	var g aggGroup
	a.initGroup(&g)
	if err := a.results(&g, a.cur); err != nil {
		releaseAll(bs)
		return err
	}
	a.appendRow(bs, "", a.cur)
	return a.emitBuilt(bs, []RowKind{Insert}, out)
}

func (a *groupAggOp) close() error { return nil }

var errStopScan = errors.New("stop")

// ErrOverflow is returned when an aggregate's result leaves the range of
// its type (an integer type's, or a DECIMAL's precision), or its running
// sum leaves the range of its accumulator. The message names the call and
// where it is in the statement.
var ErrOverflow = errors.New("numeric overflow")
