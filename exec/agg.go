package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/checkpoint"
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
// Group state lives in a state.Cache over the subtask's Store, flushed at
// each checkpoint barrier. MIN and MAX over an updating input, and every
// DISTINCT aggregate, keep a multiset of the values they saw so that a
// retraction of the current extreme finds the next one.
type groupAggOp struct {
	t        *taskContext
	spec     *planner.Aggregate
	updating bool
	keyT     []types.T
	outSch   types.Schema
	arrowSch *arrow.Schema
	maxPar   int

	cache   *state.Cache[group]
	touched []*state.Entry[group]

	keyR   []colReader
	argR   []colReader
	hashes []uint64
	buf    []byte
	vbuf   []byte
	sawAny bool
}

// group is the state of one group.
type group struct {
	key      []types.Value
	rows     int64 // net number of rows (COUNT(*))
	accs     []acc
	prev     []acc // results as last emitted (valid when emitted)
	prevRows int64
	emitted  bool
	touched  bool
}

// acc is one aggregate's accumulator. Which fields are used depends on the
// aggregate and its argument type (see class).
type acc struct {
	n     int64 // non-NULL values counted
	i     int64
	f     float64
	d     decimal128.Num
	s     string
	valid bool              // MIN/MAX: has a value
	set   map[string]*int64 // DISTINCT / retractable MIN, MAX: value multiset
}

func newGroupAgg(t *subtask) (*groupAggOp, error) {
	sp := t.op.Spec.(*planner.GroupAggSpec)
	a := &groupAggOp{spec: sp.Agg, updating: sp.InputUpdating, outSch: t.op.Schema, arrowSch: t.op.Schema.Arrow()}
	in := sp.Agg.Input.Schema()
	for _, k := range a.spec.Keys {
		a.keyT = append(a.keyT, in[k].Type)
	}
	a.keyR = make([]colReader, len(a.spec.Keys))
	a.argR = make([]colReader, len(a.spec.Aggs))
	a.maxPar = t.job.graph.MaxParallelism
	return a, nil
}

func (a *groupAggOp) open(t *taskContext) error {
	a.t = t
	store := t.store
	a.cache = newCache[group](t, groupCodec{a})
	if t.restored != nil && len(a.spec.Keys) == 0 {
		// A restored global aggregate that already saw rows must not emit
		// the empty-input row at the end.
		err := store.Scan(func(int, []byte, []byte) error { a.sawAny = true; return errStopScan })
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
	for j, c := range a.spec.Aggs {
		if c.Arg >= 0 {
			a.argR[j].reset(c.ArgT, rec.Column(c.Arg))
		}
	}
	if cap(a.hashes) < n {
		a.hashes = make([]uint64, n)
	}
	h := a.hashes[:n]
	clear(h)
	for j, k := range a.spec.Keys {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: a.keyT[j]}, n, h)
	}
	for i := 0; i < n; i++ {
		a.buf = a.buf[:0]
		for j := range a.keyR {
			a.buf = a.keyR[j].encodeKey(a.buf, i)
		}
		kg := state.KeyGroup(h[i], a.maxPar)
		e, created, err := a.cache.Get(kg, a.buf)
		if err != nil {
			return err
		}
		g := &e.Value
		if created {
			a.initGroup(g, rec, i)
		}
		if !g.touched {
			g.touched = true
			a.touched = append(a.touched, e)
		}
		sign := int64(1)
		if b.Op(i).IsRetract() {
			sign = -1
			if g.rows <= 0 {
				return a.retractError(g)
			}
		}
		g.rows += sign
		if err := a.accumulate(g, i, sign); err != nil {
			return err
		}
	}
	a.sawAny = a.sawAny || n > 0
	if err := a.flushChanges(out); err != nil {
		return err
	}
	return a.cache.Shrink(a.t.job.opts.StateCacheEntries)
}

func (a *groupAggOp) retractError(g *group) error {
	var parts []string
	for j, v := range g.key {
		parts = append(parts, types.Format(a.keyT[j], v))
	}
	return fmt.Errorf("retraction for group [%s] that has no rows: the input changelog is inconsistent", strings.Join(parts, ", "))
}

func (a *groupAggOp) initGroup(g *group, rec arrow.RecordBatch, i int) {
	g.key = make([]types.Value, len(a.spec.Keys))
	for j, k := range a.spec.Keys {
		g.key[j] = types.ValueAt(rec.Column(k), i)
	}
	g.accs = make([]acc, len(a.spec.Aggs))
	g.prev = make([]acc, len(a.spec.Aggs))
}

// accumulate folds row i into g with sign +1 (add) or -1 (retract).
func (a *groupAggOp) accumulate(g *group, i int, sign int64) error {
	for j := range a.spec.Aggs {
		c := &a.spec.Aggs[j]
		if c.Arg < 0 {
			continue
		}
		r := &a.argR[j]
		if r.isNull(i) {
			continue
		}
		ac := &g.accs[j]
		multiset := c.Distinct || (a.updating && (c.Func == planner.AggMin || c.Func == planner.AggMax))
		if multiset {
			a.vbuf = r.encode(a.vbuf[:0], i)
			p := ac.set[string(a.vbuf)]
			if sign > 0 {
				if p == nil {
					if ac.set == nil {
						ac.set = map[string]*int64{}
					}
					p = new(int64)
					ac.set[string(a.vbuf)] = p
				}
				*p++
				if c.Distinct && *p > 1 {
					continue
				}
			} else {
				if p == nil || *p == 0 {
					return fmt.Errorf("retraction of a value %s never added", c.Func)
				}
				*p--
				if *p == 0 {
					delete(ac.set, string(a.vbuf))
				}
				if c.Distinct && *p > 0 {
					continue
				}
			}
		}
		switch c.Func {
		case planner.AggCount:
			ac.n += sign
		case planner.AggSum, planner.AggAvg:
			ac.n += sign
			switch class(c.ArgT.Kind) {
			case 'i':
				s, ok := addInt(ac.i, r.int(i), sign)
				if !ok {
					return accOverflow(c)
				}
				ac.i = s
			case 'f':
				ac.f += r.float(i) * float64(sign)
			case 'd':
				s, ok := addDecimal(ac.d, r.decimal(i), sign)
				if !ok {
					return accOverflow(c)
				}
				ac.d = s
			}
		case planner.AggMin, planner.AggMax:
			if sign > 0 {
				a.offerExtreme(ac, r, i, c.Func == planner.AggMax)
			} else if ac.set != nil {
				recomputeExtreme(ac, c)
			}
		}
	}
	return nil
}

// offerExtreme replaces the current MIN/MAX by row i's value if it is beyond it.
func (a *groupAggOp) offerExtreme(ac *acc, r *colReader, i int, isMax bool) {
	var c int
	switch class(r.kind) {
	case 'i':
		v := r.int(i)
		if !ac.valid {
			c = 1
		} else {
			c = cmp3(v, ac.i)
		}
		if (isMax && c > 0) || (!isMax && c < 0) || !ac.valid {
			ac.i, ac.valid = v, true
		}
	case 'f':
		v := r.float(i)
		if !ac.valid || (isMax && v > ac.f) || (!isMax && v < ac.f) {
			ac.f, ac.valid = v, true
		}
	case 'd':
		v := r.decimal(i)
		if !ac.valid || (isMax && v.Greater(ac.d)) || (!isMax && v.Less(ac.d)) {
			ac.d, ac.valid = v, true
		}
	case 's':
		v := r.text(i)
		if !ac.valid || (isMax && v > ac.s) || (!isMax && v < ac.s) {
			ac.s, ac.valid = strings.Clone(v), true
		}
	}
}

// recomputeExtreme finds MIN/MAX again from the multiset after a retraction.
func recomputeExtreme(ac *acc, c *planner.AggCall) {
	isMax := c.Func == planner.AggMax
	ac.valid = false
	for k := range ac.set {
		switch class(c.ArgT.Kind) {
		case 'i':
			v := int64(binary.BigEndian.Uint64([]byte(k)))
			if !ac.valid || (isMax && v > ac.i) || (!isMax && v < ac.i) {
				ac.i, ac.valid = v, true
			}
		case 'f':
			v := math.Float64frombits(binary.BigEndian.Uint64([]byte(k)))
			if !ac.valid || (isMax && v > ac.f) || (!isMax && v < ac.f) {
				ac.f, ac.valid = v, true
			}
		case 'd':
			v := decimal128.New(int64(binary.BigEndian.Uint64([]byte(k))), binary.BigEndian.Uint64([]byte(k[8:])))
			if !ac.valid || (isMax && v.Greater(ac.d)) || (!isMax && v.Less(ac.d)) {
				ac.d, ac.valid = v, true
			}
		case 's':
			if !ac.valid || (isMax && k > ac.s) || (!isMax && k < ac.s) {
				ac.s, ac.valid = k, true
			}
		}
	}
}

// recomputeDistinct sets the result of DISTINCT aggregate c from its value
// multiset: each value counted once (used when two multisets are merged).
func recomputeDistinct(ac *acc, c *planner.AggCall) error {
	switch c.Func {
	case planner.AggMin, planner.AggMax:
		recomputeExtreme(ac, c)
		return nil
	case planner.AggCount:
		ac.n = int64(len(ac.set))
		return nil
	case planner.AggSum, planner.AggAvg:
	default:
		return fmt.Errorf("DISTINCT %s cannot be merged", c.Func)
	}
	ac.n, ac.i, ac.f, ac.d = int64(len(ac.set)), 0, 0, decimal128.Num{}
	for k := range ac.set {
		switch class(c.ArgT.Kind) {
		case 'i':
			s, ok := addInt(ac.i, int64(binary.BigEndian.Uint64([]byte(k))), 1)
			if !ok {
				return accOverflow(c)
			}
			ac.i = s
		case 'f':
			ac.f += math.Float64frombits(binary.BigEndian.Uint64([]byte(k)))
		case 'd':
			s, ok := addDecimal(ac.d, decimal128.New(int64(binary.BigEndian.Uint64([]byte(k))), binary.BigEndian.Uint64([]byte(k[8:]))), 1)
			if !ok {
				return accOverflow(c)
			}
			ac.d = s
		}
	}
	return nil
}

// mergeSet adds the value multiset of src to dst's.
func mergeSet(dst, src *acc) {
	if len(src.set) == 0 {
		return
	}
	if dst.set == nil {
		dst.set = make(map[string]*int64, len(src.set))
	}
	for k, n := range src.set {
		if p := dst.set[k]; p != nil {
			*p += *n
		} else {
			dst.set[k] = n
		}
	}
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
	for _, e := range a.touched {
		g := &e.Value
		g.touched = false
		a.cache.MarkDirty(e)
		switch {
		case g.rows == 0 && g.emitted:
			a.appendRow(bs, g, g.prev, g.prevRows)
			ops = append(ops, Delete)
			g.emitted = false
		case g.rows == 0:
		case !g.emitted:
			if err := a.checkResults(g.accs); err != nil {
				releaseAll(bs)
				return err
			}
			a.appendRow(bs, g, g.accs, g.rows)
			ops = append(ops, Insert)
			g.emitted = true
		case !a.sameResult(g):
			if err := a.checkResults(g.accs); err != nil {
				releaseAll(bs)
				return err
			}
			a.appendRow(bs, g, g.prev, g.prevRows)
			a.appendRow(bs, g, g.accs, g.rows)
			ops = append(ops, UpdateBefore, UpdateAfter)
		}
		if g.rows == 0 {
			a.cache.Delete(e)
		} else {
			copy(g.prev, g.accs)
			g.prevRows = g.rows
		}
	}
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

// sameResult reports whether g's results equal those last emitted.
func (a *groupAggOp) sameResult(g *group) bool {
	for j := range a.spec.Aggs {
		c := &a.spec.Aggs[j]
		x, y := &g.accs[j], &g.prev[j]
		if c.Arg < 0 {
			continue // COUNT(*) compared below through rows
		}
		if x.n != y.n || x.valid != y.valid || x.i != y.i || x.f != y.f || x.d != y.d || x.s != y.s {
			return false
		}
	}
	for j := range a.spec.Aggs {
		if a.spec.Aggs[j].Arg < 0 && g.rows != g.prevRows {
			return false
		}
	}
	return true
}

// appendRow appends g's key and the results held in accs, with rows the
// group's row count (COUNT(*)) as of those results.
func (a *groupAggOp) appendRow(bs []array.Builder, g *group, accs []acc, rows int64) {
	for j, v := range g.key {
		types.AppendValue(bs[j], v)
	}
	k := len(g.key)
	for j := range a.spec.Aggs {
		a.appendResult(bs[k+j], &a.spec.Aggs[j], &accs[j], rows)
	}
}

// checkResults checks that the results held in accs fit their types: a
// SUM of a narrower integer type (its accumulator is an int64) and a
// DECIMAL SUM or AVG (its accumulator has 128 bits, the result 38 digits).
// No allocation unless it fails.
func (a *groupAggOp) checkResults(accs []acc) error {
	for j := range a.spec.Aggs {
		c := &a.spec.Aggs[j]
		ac := &accs[j]
		if ac.n <= 0 || (c.Func != planner.AggSum && c.Func != planner.AggAvg) {
			continue
		}
		switch class(c.ArgT.Kind) {
		case 'i':
			if c.Func == planner.AggSum && !fitsKind(ac.i, c.T.Kind) {
				return fmt.Errorf("%w: %s overflows %s: the sum %d is out of its range", ErrOverflow, c.Text, c.T.Nullable(), ac.i)
			}
		case 'd':
			if c.Func == planner.AggSum {
				if !ac.d.FitsInPrecision(int32(c.T.Precision)) {
					return fmt.Errorf("%w: %s overflows %s: the sum %s has more than %d digits", ErrOverflow, c.Text, c.T.Nullable(), types.FormatDecimal(ac.d, c.ArgT.Scale), c.T.Precision)
				}
			} else if _, ok := avgDecimal(ac.d, ac.n, c.T.Scale-c.ArgT.Scale, c.T.Precision); !ok {
				return fmt.Errorf("%w: %s overflows %s: the average of %d values summing to %s has more than %d integer digits", ErrOverflow, c.Text, c.T.Nullable(), ac.n, types.FormatDecimal(ac.d, c.ArgT.Scale), c.T.Precision-c.T.Scale)
			}
		}
	}
	return nil
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

// appendResult appends the result of c held in ac; checkResults has
// checked that it fits its type.
func (a *groupAggOp) appendResult(b array.Builder, c *planner.AggCall, ac *acc, rows int64) {
	switch c.Func {
	case planner.AggCount:
		if c.Arg < 0 {
			b.(*array.Int64Builder).Append(rows)
		} else {
			b.(*array.Int64Builder).Append(ac.n)
		}
		return
	case planner.AggSum:
		if ac.n == 0 {
			b.AppendNull()
			return
		}
		appendTyped(b, c.T, ac.i, ac.f, ac.d, "")
	case planner.AggAvg:
		if ac.n == 0 {
			b.AppendNull()
			return
		}
		switch class(c.ArgT.Kind) {
		case 'i':
			appendTyped(b, c.T, ac.i/ac.n, 0, decimal128.Num{}, "")
		case 'f':
			appendTyped(b, c.T, 0, ac.f/float64(ac.n), decimal128.Num{}, "")
		case 'd':
			avg, _ := avgDecimal(ac.d, ac.n, c.T.Scale-c.ArgT.Scale, c.T.Precision)
			appendTyped(b, c.T, 0, 0, avg, "")
		}
	case planner.AggMin, planner.AggMax:
		if !ac.valid {
			b.AppendNull()
			return
		}
		appendTyped(b, c.T, ac.i, ac.f, ac.d, ac.s)
	}
}

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

// snapshot writes the dirty groups to the store and checkpoints the store.
func (a *groupAggOp) snapshot(cp *snapshotContext) (checkpoint.SubtaskState, error) {
	if err := a.cache.Flush(); err != nil {
		return checkpoint.SubtaskState{}, err
	}
	return storeState(a.t.store, cp)
}

// endInput emits the row of a global aggregate over an input that had no
// rows (COUNT(*) = 0, the others NULL), as SQL requires.
func (a *groupAggOp) endInput(out *emitter) error {
	if len(a.spec.Keys) > 0 || a.sawAny {
		return nil
	}
	bs := a.builders()
	g := &group{accs: make([]acc, len(a.spec.Aggs))}
	a.appendRow(bs, g, g.accs, 0)
	return a.emitBuilt(bs, []RowKind{Insert}, out)
}

func (a *groupAggOp) close() error { return closeStore(a.t) }

var errStopScan = errors.New("stop")

// ErrOverflow is returned when an aggregate's result leaves the range of
// its type (an integer type's, or a DECIMAL's precision), or its running
// sum leaves the range of its accumulator. The message names the call and
// where it is in the statement.
var ErrOverflow = errors.New("numeric overflow")
