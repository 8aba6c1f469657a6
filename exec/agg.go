package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
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
	a := &groupAggOp{spec: t.op.Agg, updating: t.op.InputUpdating, outSch: t.op.Schema, arrowSch: t.op.Schema.Arrow()}
	in := t.op.Agg.Input.Schema()
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
				v := r.int(i) * sign
				s := ac.i + v
				if (v > 0 && s < ac.i) || (v < 0 && s > ac.i) || !fitsKind(s, c.T.Kind) && c.Func == planner.AggSum {
					return fmt.Errorf("%w: SUM overflows %s", ErrOverflow, c.T)
				}
				ac.i = s
			case 'f':
				ac.f += r.float(i) * float64(sign)
			case 'd':
				if sign > 0 {
					ac.d = ac.d.Add(r.decimal(i))
				} else {
					ac.d = ac.d.Sub(r.decimal(i))
				}
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
			v := int64(binary.BigEndian.Uint64([]byte(k)))
			s := ac.i + v
			if (v > 0 && s < ac.i) || (v < 0 && s > ac.i) || !fitsKind(s, c.T.Kind) && c.Func == planner.AggSum {
				return fmt.Errorf("%w: SUM overflows %s", ErrOverflow, c.T)
			}
			ac.i = s
		case 'f':
			ac.f += math.Float64frombits(binary.BigEndian.Uint64([]byte(k)))
		case 'd':
			ac.d = ac.d.Add(decimal128.New(int64(binary.BigEndian.Uint64([]byte(k))), binary.BigEndian.Uint64([]byte(k[8:]))))
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
			a.appendRow(bs, g, g.accs, g.rows)
			ops = append(ops, Insert)
			g.emitted = true
		case !a.sameResult(g):
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
			num := ac.d.BigInt()
			num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.T.Scale-c.ArgT.Scale)), nil))
			appendTyped(b, c.T, 0, 0, decimal128.FromBigInt(num.Quo(num, big.NewInt(ac.n))), "")
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

// ErrOverflow is returned when an aggregate's integer result leaves the
// range of its type.
var ErrOverflow = errors.New("integer overflow")
