package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
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
	registerOperator(planner.KindRank, func(t *subtask) (operator, error) { return newRank(t), nil })
}

// rankOp is the TopN / deduplication operator (planner.RankSpec), Flink's
// AppendOnlyTopNFunction and RetractableTopNFunction, with ROW_NUMBER
// semantics: it keeps, per partition key, rows sorted by the order keys
// (a row equal to rows already there goes after them; in a deduplication
// keeping the last row, before them) and emits the changes of the rows
// numbered Start..End:
//
//   - without the row number: +I of a row entering the range, -D of a row
//     leaving it (a deduplication: -U of the row replaced, +U of the new);
//   - with it: for every position of the range whose row changed, -U of
//     the old row and +U of the new one at that position (+I when the
//     position was empty, -D when it is empty now).
//
// Over an append-only input only the first End rows of a key are kept: a
// row pushed out never comes back. Over an updating input every row of the
// key is kept, so that the retraction of a row in the range brings the
// next one in (Flink's retracting strategy), except under the update
// strategy (planner.RankSpec.UpsertKey, upsert), which keeps the first
// End rows as over an append-only input.
//
// State: one entry per partition key in the groups key space (spaceGroups),
// the key's rows in order (rankCodec), read through the write-back cache on
// the key's first use and written back at each checkpoint barrier; the
// layout in spaceMeta, checked on restore.
type rankOp struct {
	t      *taskContext
	spec   *planner.RankSpec
	owner  string
	layout string
	maxPar int
	cache  *state.Cache[rankPart]

	inT    []types.T
	outSch *arrow.Schema
	part   []int
	partT  []types.T
	partR  []colReader
	order  []planner.SortKey
	ordR   []colReader
	colR   []colReader
	// s and e bound the range: positions s..e-1 (0-based) of a key's rows.
	s, e       int
	keepAll    bool
	newerFirst bool
	dedup      bool
	outputRank bool

	hashes []uint64
	kbuf   []byte
	sbuf   []byte
	rbuf   []byte
	// update: the update strategy (planner.RankSpec.UpsertKey), whose
	// rows are identified by upsertKey (input columns): ukbuf is a new
	// row's, ukrow a kept row's; next is the new list of a key's rows,
	// matched a scratch of emitLeft.
	update       bool
	upsertKey    []int
	ukbuf, ukrow []byte
	next         []rankRow
	matched      []bool
	// A batch's keys and order keys (processAppendOnly): row i's are
	// kall[koffs[i]:koffs[i+1]] and sall[soffs[i]:soffs[i+1]]; ents are
	// their entries; touched keeps the read of each entry's last row.
	// outs is the rows the last batch emitted, for which the next
	// batch's builders are sized.
	kall, sall   []byte
	koffs, soffs []int
	ents         []*state.Entry[rankPart]
	touched      byte
	outs         int
	bs           []array.Builder
	ops          []RowKind
}

// rankPart is one partition key's rows, in order.
type rankPart struct {
	rows []rankRow
}

// rankRow is one kept row: its order keys in an order-preserving encoding
// (appendSortKey) and its columns (colReader.encodeKey form). Each is a
// buffer of its own (its capacity ends where it does), which the row that
// replaces it may take over (keepRankRow).
type rankRow struct {
	sort []byte
	row  []byte
}

// keepRankRow copies x (in scratch buffers) into the buffers of spare, a
// row that is gone, growing them as needed. Without spare buffers both
// are cut from one allocation, each still ending where it does.
func keepRankRow(x, spare rankRow) rankRow {
	if spare.sort == nil && spare.row == nil {
		ls, n := len(x.sort), len(x.sort)+len(x.row)
		buf := make([]byte, n)
		copy(buf, x.sort)
		copy(buf[ls:], x.row)
		return rankRow{sort: buf[:ls:ls], row: buf[ls:n:n]}
	}
	return rankRow{sort: append(spare.sort[:0], x.sort...), row: append(spare.row[:0], x.row...)}
}

func newRank(t *subtask) *rankOp {
	sp := t.op.Spec.(*planner.RankSpec)
	r := sp.Rank
	o := &rankOp{spec: sp, maxPar: t.job.graph.MaxParallelism, outSch: t.op.Schema.Arrow(),
		part: r.Partition, order: r.Order, keepAll: sp.InputUpdating, newerFirst: sp.NewerFirst(), outputRank: r.OutputRank}
	o.dedup, _, _ = r.Dedup()
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
	if r.Start == 0 { // no range: every row (bounded input)
		o.s, o.e, o.keepAll = 0, math.MaxInt, true
	} else {
		o.s, o.e = int(r.Start-1), int(r.End)
		if o.e < o.s {
			o.e = o.s
		}
		if sp.UpsertKey != nil { // the update strategy: the first e rows
			o.keepAll, o.update, o.upsertKey = false, true, sp.UpsertKey
		}
	}
	var lay strings.Builder
	fmt.Fprintf(&lay, "rank keep-all %v partition", o.keepAll)
	if o.update {
		fmt.Fprintf(&lay, " update key %v", o.upsertKey)
	}
	writeRankLayout(&lay, o.partT, r, o.inT)
	o.layout = lay.String()
	return o
}

// writeRankLayout appends what a TopN's stored rows depend on, after its
// kind: the partition's types, the order keys and the input's columns.
func writeRankLayout(lay *strings.Builder, partT []types.T, r *planner.Rank, inT []types.T) {
	for _, t := range partT {
		lay.WriteString(" " + t.Nullable().String())
	}
	lay.WriteString(" order")
	in := r.Input.Schema()
	for _, k := range r.Order {
		fmt.Fprintf(lay, " %s desc %v nulls-first %v", in[k.Index].Type.Nullable(), k.Desc, k.NullsFirst)
	}
	lay.WriteString(" columns")
	for _, t := range inT {
		lay.WriteString(" " + t.Nullable().String())
	}
}

func (o *rankOp) open(t *taskContext) error {
	o.t = t
	o.owner = stateOwner(t)
	st, err := t.declareState(stateDecl{Owner: o.owner, Layout: o.layout})
	if err != nil {
		return err
	}
	o.cache = declareCache[rankPart](st, spaceGroups, "rank rows", rankCodec{owner: o.owner})
	o.cache.SetSizer(rankPartBytes)
	return nil
}

func (o *rankOp) process(_ int, b Batch, out *emitter) error {
	n := b.Len()
	rec := b.Rec
	for j, k := range o.part {
		o.partR[j].reset(o.partT[j], rec.Column(k))
	}
	for j, k := range o.order {
		o.ordR[j].reset(o.inT[k.Index], rec.Column(k.Index))
	}
	for c := range o.colR {
		o.colR[c].reset(o.inT[c], rec.Column(c))
	}
	if cap(o.hashes) < n {
		o.hashes = make([]uint64, n)
	}
	h := o.hashes[:n]
	clear(h)
	for j, k := range o.part {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: o.partT[j]}, n, h)
	}
	o.ops = o.ops[:0]
	if !o.keepAll && !o.update {
		if err := o.processAppendOnly(n, h); err != nil {
			o.abort()
			return err
		}
		if err := o.flushOutput(out); err != nil {
			return err
		}
		_, err := trimCache(o.t, o.cache, 0)
		return err
	}
	for i := 0; i < n; i++ {
		o.kbuf = o.kbuf[:0]
		for j := range o.partR {
			o.kbuf = o.partR[j].encodeKey(o.kbuf, i)
		}
		o.sbuf = o.sbuf[:0]
		for j := range o.ordR {
			o.sbuf = appendSortKey(o.sbuf, &o.ordR[j], i, o.order[j].Desc, o.order[j].NullsFirst)
		}
		ent, _, err := o.cache.Get(state.KeyGroup(h[i], o.maxPar), o.kbuf)
		if err != nil {
			o.abort()
			return err
		}
		switch {
		case o.update && b.Op(i) == UpdateBefore:
			// The update strategy: the +U that follows replaces the row.
		case o.update && b.Op(i) == Delete:
			err = fmt.Errorf("%s: the update strategy of a TopN received a %s row: its input's order keys must only move a row up", o.owner, b.Op(i))
		case o.update:
			o.upsert(ent, i)
		case b.Op(i).IsRetract():
			err = o.retract(ent, i)
		default:
			o.accumulate(ent, i)
		}
		if err != nil {
			o.abort()
			return err
		}
	}
	if err := o.flushOutput(out); err != nil {
		return err
	}
	_, err := trimCache(o.t, o.cache, 0)
	return err
}

// processAppendOnly ranks the rows of an append-only batch in passes: the
// keys and order keys of all rows, then their entries, then a read of each
// entry's last row, then each row ranked. Each pass's memory reads are
// independent from row to row, so they overlap: with many keys, a key's
// entry, its rows and their order keys are most often cache misses, which
// a row at a time would wait for one after the other.
func (o *rankOp) processAppendOnly(n int, h []uint64) error {
	o.koffs, o.soffs = o.koffs[:0], o.soffs[:0]
	o.kall, o.sall = o.kall[:0], o.sall[:0]
	for i := 0; i < n; i++ {
		o.koffs = append(o.koffs, len(o.kall))
		for j := range o.partR {
			o.kall = o.partR[j].encodeKey(o.kall, i)
		}
		o.soffs = append(o.soffs, len(o.sall))
		for j := range o.ordR {
			o.sall = appendSortKey(o.sall, &o.ordR[j], i, o.order[j].Desc, o.order[j].NullsFirst)
		}
	}
	o.koffs = append(o.koffs, len(o.kall))
	o.soffs = append(o.soffs, len(o.sall))
	if cap(o.ents) < n {
		o.ents = make([]*state.Entry[rankPart], n)
	}
	ents := o.ents[:n]
	for i := range ents {
		e, _, err := o.cache.Get(state.KeyGroup(h[i], o.maxPar), o.kall[o.koffs[i]:o.koffs[i+1]])
		if err != nil {
			clear(ents)
			return err
		}
		ents[i] = e
	}
	var touch byte
	for _, e := range ents {
		if r := e.Value.rows; len(r) > 0 {
			// The last row is compared with (its order key) and, when
			// pushed out, emitted (its columns).
			if last := r[len(r)-1]; len(last.sort) > 0 && len(last.row) > 0 {
				touch += last.sort[0] + last.row[0]
			}
		}
	}
	o.touched = touch
	for i, e := range ents {
		o.sbuf = o.sall[o.soffs[i]:o.soffs[i+1]:o.soffs[i+1]]
		o.accumulate(e, i)
	}
	o.sbuf = nil // not to append into sall
	clear(ents)
	return nil
}

// upsert adds row i (its order key in o.sbuf) under the update strategy:
// it replaces the kept row of its upsert key, if there is one (the order
// keys move it up, or leave it among its equals), else it enters as a new
// row of an append-only input would (accumulate).
func (o *rankOp) upsert(ent *state.Entry[rankPart], i int) {
	o.ukbuf = o.ukbuf[:0]
	for _, c := range o.upsertKey {
		o.ukbuf = o.colR[c].encodeKey(o.ukbuf, i)
	}
	old := ent.Value.rows
	idx := -1
	for j := range old {
		if o.hasUpsertKey(old[j].row) {
			idx = j
			break
		}
	}
	if idx < 0 {
		o.accumulate(ent, i)
		return
	}
	o.rbuf = o.rbuf[:0]
	for c := range o.colR {
		o.rbuf = o.colR[c].encodeKey(o.rbuf, i)
	}
	x := rankRow{sort: o.sbuf, row: o.rbuf}
	// The new list: the old one without row idx, x inserted at its place.
	next := append(append(o.next[:0], old[:idx]...), old[idx+1:]...)
	pos := o.position(next, o.sbuf)
	next = append(next, rankRow{})
	copy(next[pos+1:], next[pos:])
	next[pos] = x
	o.next = next
	L := len(old)
	end := min(o.e, L)
	if o.outputRank {
		for j := o.s; j < end; j++ {
			if !bytes.Equal(old[j].row, next[j].row) {
				o.add(UpdateBefore, old[j].row, j)
				o.add(UpdateAfter, next[j].row, j)
			}
		}
	} else if o.s < end {
		// The range's rows that left it, and those that entered it.
		o.emitLeft(old[o.s:end], next[o.s:end], Delete)
		o.emitLeft(next[o.s:end], old[o.s:end], Insert)
	}
	next[pos] = keepRankRow(x, old[idx])
	copy(old, next)
	clear(next)
	o.cache.MarkDirty(ent)
	o.cache.Resized(ent)
}

// emitLeft emits with op each row of a that is not in b (as many times as
// it is in a more than in b).
func (o *rankOp) emitLeft(a, b []rankRow, op RowKind) {
	if cap(o.matched) < len(b) {
		o.matched = make([]bool, len(b))
	}
	m := o.matched[:len(b)]
	clear(m)
	for _, x := range a {
		found := false
		for j := range b {
			if !m[j] && bytes.Equal(x.row, b[j].row) {
				m[j], found = true, true
				break
			}
		}
		if !found {
			o.add(op, x.row, 0)
		}
	}
}

// hasUpsertKey says whether an encoded row's upsert key columns are those
// in o.ukbuf.
func (o *rankOp) hasUpsertKey(row []byte) bool {
	o.ukrow = o.ukrow[:0]
	for _, c := range o.upsertKey {
		start, end := encodedCell(row, o.inT, c)
		if start < 0 {
			return false
		}
		o.ukrow = append(o.ukrow, row[start:end]...)
	}
	return bytes.Equal(o.ukrow, o.ukbuf)
}

// encodedCell finds column c of a row in colReader.encodeKey's form, its
// columns of types ts: its bounds, or -1 if the row is cut short.
func encodedCell(row []byte, ts []types.T, c int) (int, int) {
	at := 0
	for k := 0; k <= c; k++ {
		if at >= len(row) {
			return -1, -1
		}
		start := at
		if row[at] == 0 { // NULL
			at++
		} else {
			at++
			switch class(ts[k].Kind) {
			case 's':
				n, m := binary.Uvarint(row[at:])
				if m <= 0 || uint64(len(row)-at-m) < n {
					return -1, -1
				}
				at += m + int(n)
			case 'd':
				at += 16
			default:
				at += 8
			}
			if at > len(row) {
				return -1, -1
			}
		}
		if k == c {
			return start, at
		}
	}
	return -1, -1
}

// position is where a new row with order key sk goes among rows.
func (o *rankOp) position(rows []rankRow, sk []byte) int {
	if o.newerFirst {
		return sort.Search(len(rows), func(j int) bool { return string(rows[j].sort) >= string(sk) })
	}
	return sort.Search(len(rows), func(j int) bool { return string(rows[j].sort) > string(sk) })
}

// before says whether a new row with order key sk goes before a kept row
// with order key kept.
func (o *rankOp) before(sk, kept []byte) bool {
	if o.newerFirst {
		return string(sk) <= string(kept)
	}
	return string(sk) < string(kept)
}

// accumulate adds row i (its order key in o.sbuf) to its key's rows.
func (o *rankOp) accumulate(ent *state.Entry[rankPart], i int) {
	p := &ent.Value
	old := p.rows
	if !o.keepAll && len(old) >= o.e && o.e > 0 && !o.before(o.sbuf, old[o.e-1].sort) {
		return // the common case: not ahead of the last row kept
	}
	pos := o.position(old, o.sbuf)
	if pos >= o.e && !o.keepAll {
		return // outside the range, and (append-only) never in it
	}
	o.rbuf = o.rbuf[:0]
	for c := range o.colR {
		o.rbuf = o.colR[c].encodeKey(o.rbuf, i)
	}
	// x is the new row, in the scratch buffers until it is kept.
	x := rankRow{sort: o.sbuf, row: o.rbuf}
	L := len(old)
	if pos >= o.e { // kept for when rows before it go
		x = keepRankRow(x, rankRow{})
		p.rows = append(old, rankRow{})
		copy(p.rows[pos+1:], p.rows[pos:L])
		p.rows[pos] = x
		o.cache.MarkDirty(ent)
		o.cache.Resized(ent)
		return
	}
	// The changes, from the rows before (old) and after the insertion.
	at := func(j int) rankRow { // the new list's row j
		switch {
		case j < pos:
			return old[j]
		case j == pos:
			return x
		}
		return old[j-1]
	}
	switch {
	case o.outputRank:
		for j := max(pos, o.s); j < min(L+1, o.e); j++ {
			if j < L {
				o.add(UpdateBefore, old[j].row, j)
				o.addAt(UpdateAfter, at(j).row, j, j == pos, i)
			} else {
				o.addAt(Insert, at(j).row, j, j == pos, i)
			}
		}
	case o.dedup:
		if L > 0 {
			o.add(UpdateBefore, old[0].row, 0)
			o.addAt(UpdateAfter, x.row, 0, true, i)
		} else {
			o.addAt(Insert, x.row, 0, true, i)
		}
	default:
		if o.s < L+1 {
			o.addAt(Insert, at(max(pos, o.s)).row, 0, max(pos, o.s) == pos, i)
			if o.e-1 < L {
				o.add(Delete, old[o.e-1].row, 0)
			}
		}
	}
	if !o.keepAll && L >= o.e {
		// The last row leaves for good: reuse its slot and its buffers.
		x = keepRankRow(x, old[L-1])
		copy(old[pos+1:], old[pos:L-1])
		old[pos] = x
	} else {
		x = keepRankRow(x, rankRow{})
		old = append(old, rankRow{})
		copy(old[pos+1:], old[pos:L])
		old[pos] = x
	}
	p.rows = old
	o.cache.MarkDirty(ent)
	o.cache.Resized(ent)
}

// retract removes row i (its order key in o.sbuf) from its key's rows.
func (o *rankOp) retract(ent *state.Entry[rankPart], i int) error {
	p := &ent.Value
	old := p.rows
	o.rbuf = o.rbuf[:0]
	for c := range o.colR {
		o.rbuf = o.colR[c].encodeKey(o.rbuf, i)
	}
	lo := sort.Search(len(old), func(j int) bool { return string(old[j].sort) >= string(o.sbuf) })
	pos := -1
	for j := lo; j < len(old) && string(old[j].sort) == string(o.sbuf); j++ {
		if string(old[j].row) == string(o.rbuf) {
			pos = j
			break
		}
	}
	if pos < 0 {
		if !o.keepAll {
			return nil // an append-only input has no retraction
		}
		row := make([]types.Value, len(o.colR))
		for c := range row {
			row[c] = types.ValueAt(o.colR[c].arr, i)
		}
		sch := o.spec.Rank.Input.Schema()
		return errRetractMissing(sch, row)
	}
	L := len(old)
	at := func(j int) rankRow { // the new list's row j
		if j < pos {
			return old[j]
		}
		return old[j+1]
	}
	if pos < o.e {
		switch {
		case o.outputRank:
			for j := max(pos, o.s); j < min(L, o.e); j++ {
				o.add(UpdateBefore, old[j].row, j)
				if j < L-1 {
					o.add(UpdateAfter, at(j).row, j)
				} else {
					o.ops[len(o.ops)-1] = Delete
				}
			}
		case o.dedup:
			if L > 1 {
				o.add(UpdateBefore, old[0].row, 0)
				o.add(UpdateAfter, old[1].row, 0)
			} else {
				o.add(Delete, old[0].row, 0)
			}
		default:
			if o.s < L {
				o.add(Delete, old[max(pos, o.s)].row, 0)
				if o.e < L {
					o.add(Insert, old[o.e].row, 0)
				}
			}
		}
	}
	copy(old[pos:], old[pos+1:])
	old[L-1] = rankRow{}
	p.rows = old[:L-1]
	if len(p.rows) == 0 {
		o.cache.Delete(ent)
	} else {
		o.cache.MarkDirty(ent)
		o.cache.Resized(ent)
	}
	return nil
}

// add appends an output row: the encoded row and, when the row number is
// output, its position j + 1.
func (o *rankOp) add(op RowKind, row []byte, j int) {
	if o.bs == nil {
		o.newBuilders()
	}
	if err := appendEncodedRow(o.bs[:len(o.inT)], o.inT, unsafeString(row)); err != nil {
		panic(err) // rows are encoded by this operator or checked on decoding
	}
	if o.outputRank {
		o.bs[len(o.inT)].(*array.Int64Builder).Append(int64(j + 1))
	}
	o.ops = append(o.ops, op)
}

// addAt is add, but when isNew the row is row i of the batch, appended
// from its columns rather than decoded from row.
func (o *rankOp) addAt(op RowKind, row []byte, j int, isNew bool, i int) {
	if !isNew {
		o.add(op, row, j)
		return
	}
	if o.bs == nil {
		o.newBuilders()
	}
	for c := range o.colR {
		appendCell(o.bs[c], &o.colR[c], i)
	}
	if o.outputRank {
		o.bs[len(o.inT)].(*array.Int64Builder).Append(int64(j + 1))
	}
	o.ops = append(o.ops, op)
}

// newBuilders starts the output's builders, sized for as many rows as
// the last batch emitted.
func (o *rankOp) newBuilders() {
	o.bs = make([]array.Builder, o.outSch.NumFields())
	for c, f := range o.outSch.Fields() {
		o.bs[c] = array.NewBuilder(o.t.mem, f.Type)
		if o.outs > 0 {
			o.bs[c].Reserve(o.outs)
		}
	}
}

func (o *rankOp) abort() {
	if o.bs != nil {
		releaseAll(o.bs)
		o.bs = nil
	}
	o.ops = o.ops[:0]
}

func (o *rankOp) flushOutput(out *emitter) error {
	if o.bs == nil {
		return nil
	}
	bs := o.bs
	o.bs = nil
	o.outs = len(o.ops)
	ops := o.ops
	if !anyRetract(ops) {
		ops = nil
	} else {
		ops = append([]RowKind(nil), ops...)
	}
	return emitColumns(o.outSch, bs, len(o.ops), ops, out)
}

func (o *rankOp) endInput(*emitter) error { return nil }
func (o *rankOp) close() error            { o.abort(); return nil }

// appendSortKey appends row i's value of an order key so that bytewise
// order is the key's order: a NULL flag placed by nullsFirst, then the
// value (aggValue.ordered; strings with 0x00 escaped and a terminator, so
// a prefix sorts first), all of it inverted when desc (but the flag).
func appendSortKey(dst []byte, r *colReader, i int, desc, nullsFirst bool) []byte {
	if r.isNull(i) {
		if nullsFirst {
			return append(dst, 0)
		}
		return append(dst, 2)
	}
	dst = append(dst, 1)
	start := len(dst)
	var v aggValue
	v.load(r, i, class(r.kind))
	if v.cls == 's' {
		for k := 0; k < len(v.s); k++ {
			if v.s[k] == 0 {
				dst = append(dst, 0, 0xff)
			} else {
				dst = append(dst, v.s[k])
			}
		}
		dst = append(dst, 0, 0)
	} else {
		dst = appendOrdered(dst, &v)
	}
	if desc {
		for k := start; k < len(dst); k++ {
			dst[k] = ^dst[k]
		}
	}
	return dst
}

// rankStateVersion is the version of rankCodec's encoding.
const rankStateVersion = 1

// rankCodec encodes a partition key's rows (appendRankRows).
type rankCodec struct{ owner string }

func (rankCodec) Encode(dst []byte, p *rankPart) []byte {
	return appendRankRows(checkpoint.AppendStateHeader(dst, rankStateVersion), p.rows)
}

func (c rankCodec) Decode(src []byte, p *rankPart) error {
	_, rest, err := checkpoint.ReadStateHeader(src, c.owner, 1, rankStateVersion)
	if err != nil {
		return err
	}
	p.rows, err = readRankRows(rest, c.owner)
	return err
}

// appendRankRows appends rows: the count, then each row's order key and
// columns, length-prefixed.
func appendRankRows(dst []byte, rows []rankRow) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for _, r := range rows {
		dst = binary.AppendUvarint(dst, uint64(len(r.sort)))
		dst = append(dst, r.sort...)
		dst = binary.AppendUvarint(dst, uint64(len(r.row)))
		dst = append(dst, r.row...)
	}
	return dst
}

// readRankRows reads what appendRankRows wrote, all of rest.
func readRankRows(rest []byte, owner string) ([]rankRow, error) {
	bad := fmt.Errorf("%w: %s: a rank entry is cut short", checkpoint.ErrIncompatibleState, owner)
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil, bad
	}
	rest = rest[k:]
	rows := make([]rankRow, n)
	// One copy of the entry; each buffer a slice of it that ends where it
	// does (so a row that takes it over does not write into the next).
	buf := append([]byte(nil), rest...)
	at := 0
	str := func() ([]byte, bool) {
		m, k := binary.Uvarint(buf[at:])
		if k <= 0 || uint64(len(buf)-at-k) < m {
			return nil, false
		}
		s := buf[at+k : at+k+int(m) : at+k+int(m)]
		at += k + int(m)
		return s, true
	}
	for j := range rows {
		var ok1, ok2 bool
		rows[j].sort, ok1 = str()
		rows[j].row, ok2 = str()
		if !ok1 || !ok2 {
			return nil, bad
		}
	}
	if at != len(buf) {
		return nil, fmt.Errorf("%w: %s: a rank entry has %d bytes more than its rows", checkpoint.ErrIncompatibleState, owner, len(buf)-at)
	}
	return rows, nil
}
