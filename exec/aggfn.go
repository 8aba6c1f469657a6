package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The aggregate-function layer, shared by the group, window and session
// aggregates. Each aggregate call gets an aggDef (what it computes, built
// once per operator) whose accumulators hold one group's state. The
// operator reads the arguments (aggFold), skips NULL arguments and rows
// its FILTER rejects, and hands the accumulators each value with a sign:
// +1 to accumulate, -1 to retract. One file per family: aggfn_count.go,
// aggfn_sum.go (SUM, AVG), aggfn_minmax.go, aggfn_distinct.go,
// aggfn_stats.go (STDDEV, VAR), aggfn_bool.go, aggfn_value.go
// (FIRST_VALUE, LAST_VALUE, LISTAGG).

// accumulator is one aggregate's state for one group (or window, or
// session). Implementations allocate nothing per row once a value is
// known to them.
type accumulator interface {
	// add folds v (never NULL; nil for COUNT(*)) with sign +1 or -1. A
	// retraction the function cannot undo is an error.
	add(x *foldCtx, v *aggValue, sign int64) error
	// merge folds src, an accumulator of the same call, into this one
	// (session windows that merge).
	merge(x *foldCtx, src accumulator) error
	// result writes the current result into dst; an error says it does
	// not fit its type (ErrOverflow).
	result(dst *scalar) error
	// encode appends the accumulator's state (not its value set when that
	// lives in a key space); decode reads it back, checking every field.
	encode(dst []byte) []byte
	decode(d *decoder)
	// reset makes the accumulator as new (reuse of fired windows' state).
	reset()
}

// aggDef is one aggregate call as the operators run it.
type aggDef struct {
	call *planner.AggCall
	idx  int
	cls  byte // the argument's class (class()); 0 for COUNT(*)
	// tag identifies the accumulator's encoding in the state: decoding
	// checks it, so that state of another aggregate never decodes.
	tag    byte
	newAcc func() accumulator
	// spaced: the accumulator keeps a value set in the operator's value
	// key space (a retractable MIN/MAX, a DISTINCT aggregate of the group
	// aggregate); otherwise any value set is inside the accumulator.
	spaced bool
	// share: the index of the shared DISTINCT set the aggregate counts in
	// (aggFold.shares); -1: none.
	share int
	// flat (not flatNone): the group aggregate keeps the state in words
	// from off on of its group's block (aggfn_flat.go); avg, isMax and and
	// say which function of the kind it is.
	flat            flatKind
	off             int
	avg, isMax, and bool
}

// aggMode says where an operator runs its aggregates.
type aggMode struct {
	// updating: retractions arrive (group aggregate over an updating input).
	updating bool
	// spaces: value sets live in the operator's key space (group
	// aggregate); window and session aggregates keep DISTINCT sets inline,
	// their state living only until the window fires.
	spaces bool
	// shareDistinct (with spaces): the DISTINCT aggregates over one
	// column share one value set (aggfn_distinct_shared.go); otherwise
	// each has its own, as state written before sharing has.
	shareDistinct bool
}

// newAggDefs builds the definitions of calls. An aggregate that cannot
// run in mode is an error (the planner refuses those earlier, with the
// place in the statement).
func newAggDefs(calls []planner.AggCall, mode aggMode) ([]aggDef, []distinctShare, error) {
	defs := make([]aggDef, len(calls))
	var shares []distinctShare
	for j := range calls {
		c := &calls[j]
		d := &defs[j]
		d.call, d.idx, d.share = c, j, -1
		if c.Arg >= 0 {
			d.cls = class(c.ArgT.Kind)
		}
		var err error
		d.tag, d.newAcc, err = newAccFunc(c, d.cls, mode, &d.spaced)
		if err != nil {
			return nil, nil, err
		}
		if c.Distinct && c.Func != planner.AggMin && c.Func != planner.AggMax {
			inner, newInner := d.tag, d.newAcc
			d.tag = 'X'
			spaced, cls := mode.spaces, d.cls
			d.spaced = spaced
			d.newAcc = func() accumulator { return &distinctAcc{inner: newInner(), innerTag: inner, cls: cls, spaced: spaced} }
			if spaced && mode.shareDistinct {
				d.share = len(shares)
				for k := range shares {
					if calls[shares[k].leader].Arg == c.Arg {
						d.share = k
					}
				}
				if d.share == len(shares) {
					shares = append(shares, distinctShare{leader: j, cls: cls})
				}
				shares[d.share].members = append(shares[d.share].members, j)
			}
		}
	}
	return defs, shares, nil
}

// newAccFunc returns the tag and constructor of c's accumulator.
func newAccFunc(c *planner.AggCall, cls byte, mode aggMode, spaced *bool) (byte, func() accumulator, error) {
	switch c.Func {
	case planner.AggCount:
		return 'C', func() accumulator { return &countAcc{} }, nil
	case planner.AggSum, planner.AggAvg:
		avg := c.Func == planner.AggAvg
		switch cls {
		case 'i':
			return 'I', func() accumulator { return &sumIntAcc{c: c, avg: avg} }, nil
		case 'f':
			return 'F', func() accumulator { return &sumFloatAcc{avg: avg} }, nil
		case 'd':
			return 'D', func() accumulator { return &sumDecAcc{c: c, avg: avg} }, nil
		}
	case planner.AggMin, planner.AggMax:
		isMax := c.Func == planner.AggMax
		if mode.updating {
			if !mode.spaces {
				return 0, nil, fmt.Errorf("%s: MIN/MAX over an updating input needs a value key space", c.Text)
			}
			*spaced = true
			return 'R', func() accumulator { return &minMaxAcc{orderedCell: orderedCell{cls: cls}, isMax: isMax, retract: true} }, nil
		}
		if cls == 'i' {
			return 'N', func() accumulator { return &minMaxIntAcc{isMax: isMax} }, nil
		}
		return 'M', func() accumulator { return &minMaxAcc{orderedCell: orderedCell{cls: cls}, isMax: isMax} }, nil
	case planner.AggStddevPop, planner.AggStddevSamp, planner.AggVarPop, planner.AggVarSamp:
		f := c.Func
		return 'V', func() accumulator { return &varAcc{fn: f} }, nil
	case planner.AggBoolAnd, planner.AggBoolOr:
		and := c.Func == planner.AggBoolAnd
		return 'B', func() accumulator { return &boolAcc{and: and} }, nil
	case planner.AggFirstValue, planner.AggLastValue:
		if mode.updating {
			return 0, nil, fmt.Errorf("%s cannot take retractions", c.Text)
		}
		last := c.Func == planner.AggLastValue
		return 'L', func() accumulator { return &firstLastAcc{orderedCell: orderedCell{cls: cls}, last: last} }, nil
	case planner.AggListAgg:
		if mode.updating {
			return 0, nil, fmt.Errorf("%s cannot take retractions", c.Text)
		}
		sep := c.Separator
		return 'G', func() accumulator { return &listAggAcc{sep: sep} }, nil
	case planner.AggJSONArrayAgg, planner.AggJSONObjectAgg:
		if mode.updating {
			return 0, nil, fmt.Errorf("%s cannot take retractions", c.Text)
		}
		object := c.Func == planner.AggJSONObjectAgg
		return 'J', func() accumulator { return &jsonAggAcc{object: object} }, nil
	}
	return 0, nil, fmt.Errorf("aggregate %s of %s is not implemented", c.Func, c.ArgT)
}

// aggLayout is the layout of an aggregate operator's state, written in its
// state and compared on restore: the operator kind, the key types and each
// aggregate's function, argument and result types, and encoding. A
// restore into a query whose layout differs is ErrIncompatibleState.
func aggLayout(kind string, keyT []types.T, defs []aggDef) string {
	var sb strings.Builder
	sb.WriteString(kind)
	sb.WriteString(" keys (")
	for i, t := range keyT {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(t.Nullable().String())
	}
	sb.WriteString(") aggregates (")
	for i := range defs {
		d := &defs[i]
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(string(d.call.Func))
		sb.WriteByte('(')
		if d.call.Distinct {
			sb.WriteString("DISTINCT ")
		}
		if d.call.Arg < 0 {
			sb.WriteByte('*')
		} else {
			sb.WriteString(d.call.ArgT.Nullable().String())
		}
		sb.WriteString(") ")
		sb.WriteString(d.call.T.Nullable().String())
		if d.call.HasFilter {
			sb.WriteString(" FILTER")
		}
		switch {
		case d.share >= 0:
			fmt.Fprintf(&sb, " +shared set %d", d.share+1)
		case d.spaced:
			sb.WriteString(" +set")
		}
	}
	sb.WriteByte(')')
	return sb.String()
}

// aggValue is one argument value, read from its column by class, with its
// order-preserving encoding made on demand.
type aggValue struct {
	cls byte
	i   int64
	f   float64
	d   decimal128.Num
	s   string // a view into the batch (or a set's value)
	key []byte
	// keyed: key holds this value's encoding.
	keyed bool
}

func (v *aggValue) load(r *colReader, i int, cls byte) {
	v.cls, v.keyed = cls, false
	switch cls {
	case 'i':
		v.i = r.int(i)
	case 'f':
		v.f = r.float(i)
	case 'd':
		v.d = r.decimal(i)
	case 's':
		if r.str != nil {
			v.s = r.str.Value(i)
		} else {
			v.s = unsafeString(r.bin.Value(i))
		}
	}
}

// ordered returns v's encoding, in which bytewise order is the value
// order: integers and decimals with the sign bit flipped, floats with the
// usual flip (-0 and +0 are one value; NaN sorts above +Inf), strings as
// they are.
func (v *aggValue) ordered() []byte {
	if v.keyed {
		return v.key
	}
	v.keyed = true
	v.key = appendOrdered(v.key[:0], v)
	return v.key
}

func appendOrdered(dst []byte, v *aggValue) []byte {
	switch v.cls {
	case 'i':
		return binary.BigEndian.AppendUint64(dst, uint64(v.i)^(1<<63))
	case 'f':
		f := v.f
		if f == 0 {
			f = 0
		}
		b := math.Float64bits(f)
		if b>>63 != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(dst, b)
	case 'd':
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.d.HighBits())^(1<<63))
		return binary.BigEndian.AppendUint64(dst, v.d.LowBits())
	}
	return append(dst, v.s...)
}

// fromOrdered sets v from an encoding made by ordered.
func (v *aggValue) fromOrdered(cls byte, k string) error {
	v.cls, v.keyed = cls, false
	if cls != 's' && len(k) != orderedLen(cls) {
		return fmt.Errorf("%w: value of %d bytes for class %c", errCorrupt, len(k), cls)
	}
	switch cls {
	case 'i':
		v.i = int64(binary.BigEndian.Uint64([]byte(k)) ^ (1 << 63))
	case 'f':
		b := binary.BigEndian.Uint64([]byte(k))
		if b>>63 != 0 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		v.f = math.Float64frombits(b)
	case 'd':
		v.d = decimal128.New(int64(binary.BigEndian.Uint64([]byte(k))^(1<<63)), binary.BigEndian.Uint64([]byte(k[8:])))
	case 's':
		v.s = k
	}
	return nil
}

func orderedLen(cls byte) int {
	if cls == 'd' {
		return 16
	}
	return 8
}

// scalar is an aggregate's result: a value of its class (strings and
// bytes in b, reused), or NULL.
type scalar struct {
	null bool
	i    int64
	f    float64
	d    decimal128.Num
	b    []byte
}

func (s *scalar) equal(o *scalar) bool {
	return s.null == o.null && (s.null || s.i == o.i && s.f == o.f && s.d == o.d && string(s.b) == string(o.b))
}

func (s *scalar) copyFrom(o *scalar) {
	s.null, s.i, s.f, s.d = o.null, o.i, o.f, o.d
	s.b = append(s.b[:0], o.b...)
}

// setValue sets s to v's value.
func (s *scalar) setValue(v *aggValue) {
	s.null, s.i, s.f, s.d = false, v.i, v.f, v.d
	s.b = append(s.b[:0], v.s...)
}

// appendScalar appends s, a result of type t, to b.
func appendScalar(b array.Builder, t types.T, s *scalar) {
	if s.null {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		b.BinaryBuilder.Append(s.b)
	case *array.BinaryBuilder:
		b.Append(s.b)
	default:
		appendTyped(b, t, s.i, s.f, s.d, "")
	}
}

// foldCtx is where accumulators find their group's value sets: the set of
// aggregate idx of the group keyed key in key group kg.
type foldCtx struct {
	sets  *state.CountedSets
	dsets *distinctSets
	kg    int
	key   string
	idx   int
	owner []byte
	// lenient: a retraction of a value the group's set lacks is ignored
	// (a state TTL dropped it), not an error.
	lenient bool
}

// set returns the value set ref points at, looking it up when needed.
func (x *foldCtx) set(ref *state.SetRef) (*state.CountedSet, error) {
	if s, ok := x.sets.Cached(ref); ok {
		return s, nil
	}
	x.owner = append(append(x.owner[:0], x.key...), byte(x.idx))
	return x.sets.Lookup(ref, x.kg, x.owner)
}

// aggFold reads the aggregate arguments (and FILTER conditions) of a batch
// and folds its rows into accumulators.
type aggFold struct {
	defs   []aggDef
	shares []distinctShare
	pass   []bool
	argR   []colReader
	filR   []colReader
	v      aggValue
	res    scalar
	x      foldCtx
}

func newAggFold(calls []planner.AggCall, mode aggMode) (*aggFold, error) {
	defs, shares, err := newAggDefs(calls, mode)
	if err != nil {
		return nil, err
	}
	return &aggFold{defs: defs, shares: shares, pass: make([]bool, len(defs)), argR: make([]colReader, len(defs)), filR: make([]colReader, len(defs))}, nil
}

// read points the readers at rec's columns.
func (f *aggFold) read(rec arrow.RecordBatch) {
	for j := range f.defs {
		c := f.defs[j].call
		if c.Arg >= 0 {
			f.argR[j].reset(c.ArgT, rec.Column(c.Arg))
		}
		if c.HasFilter {
			f.filR[j].reset(types.BooleanType, rec.Column(c.Filter))
		}
	}
}

// newAccs returns fresh accumulators, reusing those of accs if it has them.
func (f *aggFold) newAccs(accs []accumulator) []accumulator {
	if len(accs) == len(f.defs) {
		for _, a := range accs {
			a.reset()
		}
		return accs
	}
	accs = make([]accumulator, len(f.defs))
	for j := range f.defs {
		accs[j] = f.defs[j].newAcc()
	}
	return accs
}

// input is row i's input to aggregate j: whether its FILTER (if any)
// accepts the row and its argument (if any) is not NULL, and then the
// argument, loaded (nil for COUNT(*)).
func (f *aggFold) input(j, i int) (*aggValue, bool) {
	d := &f.defs[j]
	if d.call.HasFilter {
		r := &f.filR[j]
		if r.isNull(i) || !r.bl.Value(i) {
			return nil, false
		}
	}
	if d.call.Arg < 0 {
		return nil, true
	}
	r := &f.argR[j]
	if r.isNull(i) {
		return nil, false
	}
	f.v.load(r, i, d.cls)
	return &f.v, true
}

// add folds row i into accs with sign; x locates the group's value sets
// (x.sets nil: none).
func (f *aggFold) add(accs []accumulator, x *foldCtx, i int, sign int64) error {
	for j := range f.defs {
		d := &f.defs[j]
		if d.share >= 0 {
			continue
		}
		v, ok := f.input(j, i)
		if !ok {
			continue
		}
		x.idx = j
		if err := accs[j].add(x, v, sign); err != nil {
			return err
		}
	}
	for k := range f.shares {
		sh := &f.shares[k]
		r := &f.argR[sh.leader]
		if r.isNull(i) {
			continue
		}
		some := false
		for m, j := range sh.members {
			fr := &f.filR[j]
			f.pass[m] = !f.defs[j].call.HasFilter || !fr.isNull(i) && fr.bl.Value(i)
			some = some || f.pass[m]
		}
		if !some {
			continue
		}
		f.v.load(r, i, sh.cls)
		if err := f.addShared(accs, x, sh, f.pass, &f.v, sign); err != nil {
			return err
		}
	}
	return nil
}

// merge folds the accumulators src into dst.
func (f *aggFold) merge(dst, src []accumulator, x *foldCtx) error {
	for j := range f.defs {
		x.idx = j
		if err := dst[j].merge(x, src[j]); err != nil {
			return err
		}
	}
	return nil
}

// check computes every result of accs, to fail before any is appended.
func (f *aggFold) check(accs []accumulator) error {
	for j := range f.defs {
		if err := accs[j].result(&f.res); err != nil {
			return err
		}
	}
	return nil
}

// appendResults appends the results of accs to bs (checked by check).
func (f *aggFold) appendResults(bs []array.Builder, accs []accumulator) {
	for j := range f.defs {
		_ = accs[j].result(&f.res)
		appendScalar(bs[j], f.defs[j].call.T, &f.res)
	}
}

// encodeAccs appends the accumulators with their tags.
func (f *aggFold) encodeAccs(dst []byte, accs []accumulator) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(accs)))
	for j, a := range accs {
		dst = append(dst, f.defs[j].tag)
		dst = a.encode(dst)
	}
	return dst
}

// decodeAccs reads accumulators written by encodeAccs, checking that they
// are those of f's aggregates.
func (f *aggFold) decodeAccs(d *decoder, accs []accumulator) []accumulator {
	if !f.checkCount(d) {
		return accs
	}
	accs = f.newAccs(accs)
	for j, a := range accs {
		if !f.checkTag(d, j) {
			return accs
		}
		a.decode(d)
	}
	return accs
}

// checkCount reads the number of aggregates of an encoding and checks it
// is f's.
func (f *aggFold) checkCount(d *decoder) bool {
	n := d.uvarint()
	if d.err != nil {
		return false
	}
	if n != uint64(len(f.defs)) {
		d.incompatible("%d aggregates in the state, %d in the query", n, len(f.defs))
		return false
	}
	return true
}

// checkTag reads the tag of aggregate j and checks it is f's.
func (f *aggFold) checkTag(d *decoder, j int) bool {
	if tag := d.byte(); d.err == nil && tag != f.defs[j].tag {
		d.incompatible("aggregate %d (%s) is stored as %q, the query's as %q", j+1, f.defs[j].call.Text, tag, f.defs[j].tag)
	}
	return d.err == nil
}

// stateVersion is the version of the aggregate operators' state encodings
// (group, window and session entries, value-set counts, the layout).
// When an encoding changes, bump it, and keep reading the old one.
const stateVersion = 1

// countCodec encodes the counts of the value sets.
type countCodec struct{ owner string }

func (countCodec) Encode(dst []byte, n *int64) []byte {
	return binary.AppendVarint(checkpoint.AppendStateHeader(dst, stateVersion), *n)
}

func (c countCodec) Decode(src []byte, n *int64) error {
	d, err := newStateDecoder(src, c.owner)
	if err != nil {
		return err
	}
	*n = d.varint()
	d.end()
	return d.err
}

// The key spaces of the aggregate operators' stores.
const (
	spaceMeta   = 0 // per key group: watermark, layout
	spaceGroups = 1 // group, window or session entries
	spaceValues = 2 // value sets
	// spaceDistinct: DISTINCT value sets shared per column.
	spaceDistinct = 3
)

// stateOwner names an operator subtask in state errors.
func stateOwner(t *taskContext) string {
	if t == nil || t.op == nil {
		return "operator"
	}
	return fmt.Sprintf("operator %s (%s)", t.op.ID, t.op.Name())
}
