package exec

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func init() {
	registerOperator(planner.KindJoin, func(t *subtask) (operator, error) { return newJoin(t) })
}

// joinOp is the regular join (planner.JoinSpec), Flink's streaming join:
// both inputs are kept in state by join key (joinSideState), and each
// change of one input is joined with the other input's rows of its key.
// An accumulation (+I, +U) emits +I of every joined row; a retraction
// (-U, -D) emits -D of them. An outer side's row that has no match is
// emitted padded with NULLs (+I[l, null]); its first match retracts that
// row (-D[l, null]) before +I[l, r], and when its last match goes, the
// padded row comes back.
//
// A batch is joined in two steps: the pairs of each row with the other
// side's rows of its key are listed (and the residual condition evaluated
// over all of them at once, as one batch), then the rows are applied in
// order, which updates this side's state and the other side's match
// counts and appends the output.
type joinOp struct {
	t     *taskContext
	spec  *planner.JoinSpec
	owner string
	// side[0] is the left input, side[1] the right.
	side     [2]joinInput
	residual *evaluator
	outSch   *arrow.Schema
	outT     []types.T
	// emitSch, for a semi or anti join, is the schema it emits (the left
	// columns); outSch and outT are then the pairs' (semi_join.go).
	emitSch *arrow.Schema
	maxPar  int
	layout  string

	// per batch
	hashes  []uint64
	keyHash []uint64 // joinKeyHash of each row's key
	keyBuf  []byte
	idBuf   []byte
	rowBuf  []byte
	pairs   []joinPair
	pairAt  []int // pairAt[i] is the first pair of row i; pairAt[n] = len(pairs)
	keys    []*joinKey
	mask    []bool
	// bs build the output, kept from batch to batch (out are their
	// columns); cols holds the arrays of one batch.
	bs      []array.Builder
	out     []joinOutCol
	cols    []arrow.Array
	ops     []RowKind
	emitted int
	readSum byte // readAhead's
}

// joinInput is what the join knows of one input.
type joinInput struct {
	keys   []int
	keyT   []types.T
	keyR   []colReader
	width  int
	colR   []colReader // the first width columns
	colT   []types.T
	unique []int
	uniqT  []types.T
	uniqR  []colReader
	// outer: its unmatched rows are emitted padded (the other side's
	// columns NULL).
	outer bool
	st    *joinSideState
}

// joinPair is a row of the batch and a candidate row of the other side:
// row idx of key (which stays there while the batch is applied: only the
// batch's side gains or loses rows).
type joinPair struct {
	row int32
	idx int32
	key *joinKey
}

// other returns the other side's row of p.
func (p *joinPair) other() *joinRow { return &p.key.rows[p.idx] }

func newJoin(t *subtask) (*joinOp, error) {
	sp := t.op.Spec.(*planner.JoinSpec)
	j := &joinOp{spec: sp, outSch: t.op.Schema.Arrow(), maxPar: t.job.graph.MaxParallelism}
	for _, c := range t.op.Schema {
		j.outT = append(j.outT, c.Type)
	}
	if sp.Type.LeftOnly() {
		j.semiAntiSchemas(t)
	}
	if sp.Residual != nil {
		j.residual = compileExpr(sp.Residual)
	}
	mk := func(keys []int, width int, sch types.Schema, unique []int, outer bool) joinInput {
		in := joinInput{keys: keys, keyR: make([]colReader, len(keys)), width: width, colR: make([]colReader, width), unique: unique, uniqR: make([]colReader, len(unique)), outer: outer}
		for _, c := range sch[:width] {
			in.colT = append(in.colT, c.Type)
		}
		for _, k := range keys {
			in.keyT = append(in.keyT, sch[k].Type)
		}
		for _, k := range unique {
			in.uniqT = append(in.uniqT, sch[k].Type)
		}
		return in
	}
	j.side[0] = mk(sp.LeftKeys, sp.LeftWidth, sp.LeftSchema, sp.LeftUnique, sp.Type == planner.LeftJoin || sp.Type == planner.FullJoin)
	j.side[1] = mk(sp.RightKeys, sp.RightWidth, sp.RightSchema, sp.RightUnique, sp.Type == planner.RightJoin || sp.Type == planner.FullJoin)
	var lay strings.Builder
	fmt.Fprintf(&lay, "join %s", sp.Type)
	for s, in := range j.side {
		spec := sp.LeftInput
		if s == 1 {
			spec = sp.RightInput
		}
		appendOnly := !sp.LeftUpdating
		if s == 1 {
			appendOnly = !sp.RightUpdating
		}
		fmt.Fprintf(&lay, "; side %d %s append-only %v keys %v unique %v columns", s, spec, appendOnly, in.keys, in.unique)
		for _, c := range in.colT {
			lay.WriteString(" " + c.Nullable().String())
		}
	}
	j.layout = lay.String()
	return j, nil
}

// The key spaces of a join's store (spaceMeta is shared with the
// aggregates: the layout).
const (
	spaceJoinLeft  = 1
	spaceJoinRight = 2
)

func (j *joinOp) open(t *taskContext) error {
	j.t = t
	j.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: j.owner, Layout: j.layout, Expire: j.expire})
	if err != nil {
		return err
	}
	fresh := t.restored == nil
	semiAnti := j.spec.Type.LeftOnly()
	j.side[0].st = newJoinSideState(st.space(spaceJoinLeft, "left rows"), j.spec.LeftInput, !j.spec.LeftUpdating,
		j.side[0].outer || semiAnti, j.owner, fresh)
	j.side[1].st = newJoinSideState(st.space(spaceJoinRight, "right rows"), j.spec.RightInput, !j.spec.RightUpdating,
		j.side[1].outer || semiAnti, j.owner, fresh)
	for s := range j.side {
		j.side[s].st.ttl = j.spec.TTL[s].Milliseconds()
		st.flushWith(func() error { return j.flushSide(s) })
	}
	return nil
}

func (j *joinOp) process(input int, b Batch, out *emitter) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	rec := b.Rec
	me, other := &j.side[input], &j.side[1-input]
	if j.spec.TTL != [2]time.Duration{} {
		now := time.Now().UnixMilli() // one clock read per batch
		me.st.now, other.st.now = now, now
	}
	for k, c := range me.keys {
		me.keyR[k].reset(me.keyT[k], rec.Column(c))
	}
	for c := range me.colR {
		me.colR[c].reset(me.colT[c], rec.Column(c))
	}
	for k, c := range me.unique {
		me.uniqR[k].reset(me.uniqT[k], rec.Column(c))
	}
	if cap(j.hashes) < n {
		j.hashes = make([]uint64, n)
	}
	h := j.hashes[:n]
	clear(h)
	for k, c := range me.keys {
		functions.HashColumn(functions.Vec{Array: rec.Column(c), Type: me.keyT[k]}, n, h)
	}
	// Step 1: the candidate pairs of each row.
	j.pairs, j.pairAt = j.pairs[:0], j.pairAt[:0]
	if cap(j.keys) < n {
		j.keys = make([]*joinKey, n)
	}
	keys := j.keys[:n]
	clear(keys)
	if cap(j.keyHash) < n {
		j.keyHash = make([]uint64, n)
	}
	kh := j.keyHash[:n]
	// The keys in memory are found in two passes: the first finds the
	// head of each row's chain in the map (keys[i]; reads of the map that
	// do not wait on one another), the second the key in the chain, or
	// by lookupHash when it is not there (a new key, or one made by an
	// earlier row of the batch after its head was read).
	for i := 0; i < n; i++ {
		if key, ok := j.encodeKey(me, i); ok {
			kh[i] = joinKeyHash(key)
			keys[i] = me.st.keys[kh[i]]
		}
	}
	j.readSum += readHeads(keys)
	for i := 0; i < n; i++ {
		j.pairAt = append(j.pairAt, len(j.pairs))
		key, ok := j.encodeKey(me, i)
		if !ok {
			continue // a NULL key joins nothing
		}
		mine := inChain(keys[i], key)
		if mine != nil {
			mine.ref = true
		} else {
			var err error
			if mine, err = me.st.lookupHash(state.KeyGroup(h[i], j.maxPar), key, kh[i], true); err != nil {
				return err
			}
		}
		ok2, err := me.st.peerOf(other.st, mine, key, kh[i])
		if err != nil {
			return err
		}
		if ok2 != nil {
			ok2.ref = true
		}
		for idx := range other.st.live(ok2) {
			j.pairs = append(j.pairs, joinPair{row: int32(i), idx: int32(idx), key: ok2})
		}
		if keys[i] = mine; i == 0 || keys[i-1] != mine {
			me.st.live(mine)
		}
	}
	j.pairAt = append(j.pairAt, len(j.pairs))
	if err := j.evalResidual(input, rec); err != nil {
		return err
	}
	j.readAhead(keys)
	// Step 2: apply the rows in order.
	j.startOutput()
	j.reserve(n)
	for i := 0; i < n; i++ {
		if err := j.apply(input, b, i, keys[i]); err != nil {
			j.abortOutput()
			return err
		}
	}
	if err := j.flushOutput(out); err != nil {
		return err
	}
	return j.shrink()
}

// readAhead reads the memory step 2 of process reads of each row's key and
// of the other side's rows it joins with (their rows and bytes), in a
// loop that does nothing else: its reads do not wait on one another, so
// the memory serves many at once, where step 2 would wait on each in
// turn. The sum read is kept so that the reads are not left out.
func (j *joinOp) readAhead(keys []*joinKey) {
	var x byte
	for i, k := range keys {
		if k != nil && (i == 0 || keys[i-1] != k) {
			if n := len(k.rows); n > 0 {
				x += byte(k.rows[n-1].off)
			}
			if n := len(k.data); n > 0 {
				x += k.data[n-1]
			}
		}
		if p := j.pairAt[i]; p < j.pairAt[i+1] && (p == 0 || j.pairs[p-1].key != j.pairs[p].key) {
			o := j.pairs[p].key
			for r := range o.rows {
				x += byte(o.rows[r].off)
			}
			for b := 0; b < len(o.data); b += 64 {
				x += o.data[b]
			}
		}
	}
	j.readSum += x
}

// readHeads reads the keys' records found by the map (the parts the
// lookup and the listing of pairs read: the key and the link to the other
// side's rows, and that side's rows) in a loop that does nothing else, as
// readAhead does, and returns the sum read.
func readHeads(keys []*joinKey) (x byte) {
	for _, k := range keys {
		if k == nil {
			continue
		}
		x += byte(len(k.key))
		if p := k.peer; p != nil {
			x += byte(len(p.rows))
		}
	}
	return x
}

// inChain returns the key of encoding key in the chain from k, nil when
// there is none.
func inChain(k *joinKey, key []byte) *joinKey {
	for ; k != nil; k = k.next {
		if k.key == string(key) {
			return k
		}
	}
	return nil
}

// encodeKey encodes row i's join key into j.keyBuf; ok is false when a key
// column is NULL.
func (j *joinOp) encodeKey(in *joinInput, i int) ([]byte, bool) {
	j.keyBuf = j.keyBuf[:0]
	for k := range in.keyR {
		if in.keyR[k].isNull(i) {
			return nil, false
		}
		j.keyBuf = in.keyR[k].encodeKey(j.keyBuf, i)
	}
	return j.keyBuf, true
}

// evalResidual evaluates the residual condition over every candidate pair
// of the batch and keeps the verdicts in j.mask.
func (j *joinOp) evalResidual(input int, rec arrow.RecordBatch) error {
	if j.residual == nil || len(j.pairs) == 0 {
		return nil
	}
	bs := j.builders()
	for _, b := range bs {
		b.Reserve(len(j.pairs))
	}
	cols := newJoinOutCols(bs, j.outT)
	me := &j.side[input]
	for p := range j.pairs {
		pr := &j.pairs[p]
		if err := j.appendPair(cols, input, me, int(pr.row), pr.key.cols(pr.other())); err != nil {
			releaseAll(bs)
			return err
		}
	}
	var err error
	j.mask, err = residualMask(j.t, j.residual, j.outSch, bs, len(j.pairs), j.mask)
	return err
}

// residualMask evaluates a join's residual condition over the n candidate
// pairs appended to bs (which it releases) as one batch of sch, and
// returns in mask (reused) whether each holds (TRUE; NULL is not).
func residualMask(t *taskContext, residual *evaluator, sch *arrow.Schema, bs []array.Builder, n int, mask []bool) ([]bool, error) {
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		b.Release()
	}
	cand := array.NewRecordBatch(sch, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	defer cand.Release()
	m, err := residual.evalArray(t.fctx, cand)
	if err != nil {
		return mask, err
	}
	defer m.Release()
	verdict := m.(*array.Boolean)
	if cap(mask) < n {
		mask = make([]bool, n)
	}
	mask = mask[:n]
	for i := range mask {
		mask[i] = verdict.IsValid(i) && verdict.Value(i)
	}
	return mask, nil
}

// apply joins row i of b (of input) with its matches, emits the changes
// and updates the state.
func (j *joinOp) apply(input int, b Batch, i int, mine *joinKey) error {
	if j.emitSch != nil {
		return j.applySemiAnti(input, b, i, mine)
	}
	me, other := &j.side[input], &j.side[1-input]
	retract := b.Op(i).IsRetract()
	var matches int64 // an outer side's only: no other needs it
	for p := j.pairAt[i]; me.outer && p < j.pairAt[i+1]; p++ {
		if j.residual == nil || j.mask[p] {
			matches += j.pairs[p].other().n
		}
	}
	if mine == nil { // a NULL key: no state, no match
		if me.outer {
			return j.emitPadded(input, me, i, retract)
		}
		return nil
	}
	id, row := j.encodeRow(me, i)
	if retract && !me.st.remove(mine, id) {
		if me.st.ttl <= 0 {
			return fmt.Errorf("%s: a retraction of a row the join does not hold: the input changelog is inconsistent", j.owner)
		}
		// The row expired (its TTL passed): its joined rows were
		// emitted and stay; there is nothing left to retract.
		return nil
	}
	if me.outer && matches == 0 {
		if err := j.emitPadded(input, me, i, retract); err != nil {
			return err
		}
	}
	for p := j.pairAt[i]; p < j.pairAt[i+1]; p++ {
		if j.residual != nil && !j.mask[p] {
			continue
		}
		pr := &j.pairs[p]
		r, cols := pr.other(), pr.key.cols(pr.other())
		if other.outer && !retract && r.matches == 0 {
			for c := int64(0); c < r.n; c++ {
				if err := j.emitOtherPadded(input, other, cols, true); err != nil {
					return err
				}
			}
		}
		for c := int64(0); c < r.n; c++ {
			if err := j.appendPair(j.out, input, me, i, cols); err != nil {
				return err
			}
			j.addOp(retract)
		}
		if other.outer {
			if retract {
				r.matches--
			} else {
				r.matches++
			}
			other.st.touchRow(pr.key, int(pr.idx))
			if retract && r.matches == 0 {
				for c := int64(0); c < r.n; c++ {
					if err := j.emitOtherPadded(input, other, cols, false); err != nil {
						return err
					}
				}
			}
		}
	}
	if !retract {
		var m int64
		if me.outer {
			m = matches
		}
		me.st.add(mine, id, row, m)
	}
	return nil
}

// encodeRow encodes row i's identity and columns (into j.idBuf and
// j.rowBuf).
func (j *joinOp) encodeRow(in *joinInput, i int) (id, row []byte) {
	j.rowBuf = j.rowBuf[:0]
	for c := range in.colR {
		j.rowBuf = in.colR[c].encodeKey(j.rowBuf, i)
	}
	switch {
	case in.st.appendOnly:
		return nil, j.rowBuf // its identity is a sequence number (add)
	case in.st.spec == planner.NoUniqueKey:
		return j.rowBuf, j.rowBuf
	case in.st.spec == planner.JoinKeyContainsUniqueKey:
		return nil, j.rowBuf
	}
	j.idBuf = j.idBuf[:0]
	for k := range in.uniqR {
		j.idBuf = in.uniqR[k].encodeKey(j.idBuf, i)
	}
	return j.idBuf, j.rowBuf
}

// appendPair appends the joined row of row i of input (read by me) and a
// stored row of the other side (its encoded columns) to out.
func (j *joinOp) appendPair(out []joinOutCol, input int, me *joinInput, i int, other []byte) error {
	nl := j.spec.LeftWidth
	if input == 0 {
		for c := range me.colR {
			appendCellTo(&out[c], &me.colR[c], i)
		}
		return appendEncodedCols(out[nl:], other)
	}
	if err := appendEncodedCols(out[:nl], other); err != nil {
		return err
	}
	for c := range me.colR {
		appendCellTo(&out[nl+c], &me.colR[c], i)
	}
	return nil
}

// emitPadded appends row i of input with the other side's columns NULL.
func (j *joinOp) emitPadded(input int, me *joinInput, i int, retract bool) error {
	nl := j.spec.LeftWidth
	lo, hi := 0, nl
	if input == 1 {
		lo, hi = nl, len(j.bs)
	}
	for c := range me.colR {
		appendCellTo(&j.out[lo+c], &me.colR[c], i)
	}
	for c := range j.bs {
		if c < lo || c >= hi {
			j.bs[c].AppendNull()
		}
	}
	j.addOp(retract)
	return nil
}

// emitOtherPadded appends a stored row of the other side (not input; its
// encoded columns) with input's columns NULL: +I when add, else -D.
func (j *joinOp) emitOtherPadded(input int, other *joinInput, cols []byte, retractPadded bool) error {
	nl := j.spec.LeftWidth
	if input == 1 { // the other side is the left
		if err := appendEncodedCols(j.out[:nl], cols); err != nil {
			return err
		}
		for c := nl; c < len(j.bs); c++ {
			j.bs[c].AppendNull()
		}
	} else {
		for c := 0; c < nl; c++ {
			j.bs[c].AppendNull()
		}
		if err := appendEncodedCols(j.out[nl:], cols); err != nil {
			return err
		}
	}
	// retractPadded: the padded row goes (its first match came).
	j.addOp(retractPadded)
	return nil
}

func (j *joinOp) addOp(retract bool) {
	if retract {
		j.ops = append(j.ops, Delete)
	} else {
		j.ops = append(j.ops, Insert)
	}
}

func (j *joinOp) builders() []array.Builder {
	bs := make([]array.Builder, len(j.outT))
	for i, t := range j.outT {
		bs[i] = array.NewBuilder(j.t.mem, t.ArrowType())
	}
	return bs
}

// reserve makes room in the output for the joined rows of the pairs that
// hold and one more row per input row (a padded or retracted one), so
// that appending seldom grows a buffer.
func (j *joinOp) reserve(n int) {
	rows := len(j.pairs)
	if j.residual != nil {
		rows = 0
		for _, ok := range j.mask[:len(j.pairs)] {
			if ok {
				rows++
			}
		}
	}
	for _, b := range j.bs {
		b.Reserve(rows + n)
	}
}

func (j *joinOp) startOutput() {
	if j.bs == nil {
		j.bs = j.builders()
		j.out = newJoinOutCols(j.bs, j.outT)
	}
	j.ops = j.ops[:0]
}

// abortOutput drops what the builders hold.
func (j *joinOp) abortOutput() {
	for _, b := range j.bs {
		b.NewArray().Release()
	}
}

// flushOutput emits what the builders hold (a semi or anti join: the left
// columns) and leaves them empty.
func (j *joinOp) flushOutput(out *emitter) error {
	sch, nl := j.outSch, len(j.bs)
	if j.emitSch != nil {
		sch, nl = j.emitSch, j.spec.LeftWidth
	}
	cols := j.cols[:0]
	for c, b := range j.bs {
		a := b.NewArray()
		if c >= nl {
			a.Release()
			continue
		}
		cols = append(cols, a)
	}
	rows := len(j.ops)
	rec := array.NewRecordBatch(sch, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	clear(cols)
	j.cols = cols[:0]
	if rows == 0 {
		rec.Release()
		return nil
	}
	var ops []RowKind
	if anyRetract(j.ops) {
		ops = append([]RowKind(nil), j.ops...)
	}
	return out.emit(Batch{Rec: rec, Ops: ops})
}

// shrink bounds the memory of the rows held: past the subtask's share of
// the state memory budget, or past the cache's size in join keys
// (state.backend.cache.max-entries, as the aggregates' groups), each side
// is written back and evicts its least recently used keys down to three
// quarters of its part.
func (j *joinOp) shrink() error {
	l, r := j.side[0].st, j.side[1].st
	held, keys := l.bytes()+r.bytes(), l.nkeys+r.nkeys
	j.t.reportState(held, keys)
	limit, maxKeys := j.t.share.Limit(), j.t.job.opts.StateCacheEntries
	if held <= limit && keys <= maxKeys {
		return nil
	}
	for s := range j.side {
		st := j.side[s].st
		b, n := st.bytes(), st.nkeys
		if err := st.evict(scaleDown(b, held, limit), int(scaleDown(int64(n), int64(keys), int64(maxKeys)))); err != nil {
			return err
		}
	}
	l.unlink(r)
	r.unlink(l)
	j.t.reportState(l.bytes()+r.bytes(), l.nkeys+r.nkeys)
	return nil
}

// scaleDown is part's share of three quarters of limit, when part is of
// whole: what a part of state evicts down to when the whole is over its
// limit.
func scaleDown(part, whole, limit int64) int64 {
	if whole <= limit {
		return part
	}
	return int64(float64(part) * 0.75 * float64(limit) / float64(whole))
}

// expire drops the rows of both sides past their TTL, before a
// checkpoint writes them back.
func (j *joinOp) expire() error {
	now := time.Now().UnixMilli()
	for s := range j.side {
		st := j.side[s].st
		st.now = now
		st.sweep()
		j.t.job.stateExpired.Add(st.expired)
		st.expired = 0
	}
	return nil
}

// flushSide writes side s's changed rows back to the store and drops
// from the store what its TTL has expired there.
func (j *joinOp) flushSide(s int) error {
	st := j.side[s].st
	if err := st.flush(); err != nil {
		return err
	}
	lo, hi := state.KeyGroupRange(j.t.subtask, j.maxPar, j.t.op.Parallelism)
	if err := st.sweepStore(lo, hi); err != nil {
		return err
	}
	j.t.job.stateExpired.Add(st.expired)
	st.expired = 0
	return nil
}

func (j *joinOp) endInput(*emitter) error { return nil }

func (j *joinOp) close() error {
	if j.bs != nil {
		releaseAll(j.bs)
	}
	return nil
}
