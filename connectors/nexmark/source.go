package nexmark

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// Name is the value of the 'connector' option.
const Name = "nexmark"

func init() {
	registry.Register(catalog.Connector{
		Name:           Name,
		Source:         true,
		ReadsRowFields: true,
		Bounded:        bounded,
		Options:        optionKeys,
		Validate: func(t *catalog.Table) error {
			if _, err := ParseOptions(t.Options); err != nil {
				return err
			}
			_, err := bindColumns(t.Columns)
			return err
		},
	}, newSource, nil)
}

// maxWait bounds how long Next sleeps before returning exec.ErrNoData.
const maxWait = 100 * time.Millisecond

type source struct {
	table     string
	gen       *Generator
	schema    *arrow.Schema
	batchSize int
	subtask   uint64
	par       uint64
	// total is the table's number of events (MaxUint64: unbounded).
	total uint64
	// paced is set when max-emit-speed is false: events are emitted when
	// the wall clock since Open has passed their event time since the
	// split's first event.
	paced bool
	// splits are the event sequences this subtask emits: normally one,
	// events subtask, subtask+par, ...; after a restore into another
	// parallelism, the splits of old subtasks assigned to this one. They
	// take turns, a batch each.
	splits []split
	next   int
	// live names the splits with events left (nil: to be listed again),
	// run the split of the last batch (exec.SplitSource).
	live []string
	run  [1]exec.SplitRun
	// opened is the wall-clock time of Open (pacing).
	opened time.Time
	// w writes the projected columns; ev is the event being written.
	w  writers
	ev Event
}

// split is the sequence of event numbers next, next+step, ... below the
// table's total.
type split struct {
	next, step uint64
	// name is the split's name as a watermark split: its first event
	// number modulo step, and step.
	name string
	// paceFrom is the event time of the first event emitted since Open
	// (-1: none yet), the origin of pacing.
	paceFrom int64
}

func (sp *split) key() string {
	if sp.name == "" {
		sp.name = fmt.Sprintf("%d/%d", sp.next%sp.step, sp.step)
	}
	return sp.name
}

// left reports whether the split has events below total.
func (sp *split) left(total uint64) bool { return sp.next < total }

func newSource(spec exec.TableSpec) (exec.Source, error) {
	c, err := ParseOptions(spec.Options)
	if err != nil {
		return nil, fmt.Errorf("nexmark table %s: %w", spec.Table, err)
	}
	cols, err := bindColumns(spec.Schema)
	if err != nil {
		return nil, fmt.Errorf("nexmark table %s: %w", spec.Table, err)
	}
	par := max(spec.Parallelism, 1)
	if spec.Subtask < 0 || spec.Subtask >= par {
		return nil, fmt.Errorf("nexmark table %s: subtask %d out of range for parallelism %d", spec.Table, spec.Subtask, par)
	}
	s := &source{
		table:     spec.Table,
		gen:       NewGenerator(c),
		schema:    spec.ProducedSchema().Arrow(),
		batchSize: spec.BatchSize,
		subtask:   uint64(spec.Subtask),
		par:       uint64(par),
		total:     math.MaxUint64,
		paced:     !c.MaxEmitSpeed,
	}
	if c.EventsNum > 0 {
		s.total = uint64(c.EventsNum)
	}
	s.splits = []split{{next: s.subtask, step: s.par, paceFrom: -1}}
	if s.batchSize <= 0 {
		s.batchSize = exec.DefaultBatchSize
	}
	mem := spec.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	fields := spec.Fields
	if fields == nil {
		for i := range spec.Schema {
			fields = append(fields, i)
		}
	}
	proj := make([]bound, len(fields))
	for i, f := range fields {
		proj[i] = cols[f]
	}
	s.w = newWriters(mem, proj)
	return s, nil
}

func (s *source) Open(context.Context) error {
	s.opened = time.Now()
	for i := range s.splits {
		s.splits[i].paceFrom = -1
	}
	return nil
}

// current returns the split whose turn it is, the next one after it with
// events left, or nil at the end.
func (s *source) current() *split {
	for k := range s.splits {
		i := (s.next + k) % len(s.splits)
		if s.splits[i].left(s.total) {
			s.next = (i + 1) % len(s.splits)
			return &s.splits[i]
		}
	}
	return nil
}

// Splits lists the splits with events left (exec.SplitSource); each has
// its own watermark.
func (s *source) Splits() []string {
	if s.live == nil {
		s.live = make([]string, 0, len(s.splits))
		for i := range s.splits {
			if sp := &s.splits[i]; sp.left(s.total) {
				s.live = append(s.live, sp.key())
			}
		}
	}
	return s.live
}

// BatchSplits says which split the last batch came from (one per batch).
func (s *source) BatchSplits() []exec.SplitRun { return s.run[:] }

// count returns how many events of sp the next batch holds: up to a
// batch, up to the table's end, and when paced, those whose event time is
// due.
func (s *source) count(ctx context.Context, sp *split) (int, error) {
	n := uint64(s.batchSize)
	if s.total != math.MaxUint64 {
		n = min(n, (s.total-sp.next-1)/sp.step+1)
	}
	if !s.paced {
		return int(n), nil
	}
	if sp.paceFrom < 0 {
		sp.paceFrom = s.gen.Timestamp(sp.next)
	}
	due := func(now time.Time) uint64 {
		limit := sp.paceFrom + now.Sub(s.opened).Milliseconds()
		k := uint64(0)
		for k < n && s.gen.Timestamp(sp.next+k*sp.step) <= limit {
			k++
		}
		return k
	}
	if k := due(time.Now()); k > 0 {
		return int(k), nil
	}
	wait := time.Duration(s.gen.Timestamp(sp.next)-sp.paceFrom)*time.Millisecond - time.Since(s.opened)
	t := time.NewTimer(min(max(wait, 0), maxWait))
	select {
	case <-ctx.Done():
		t.Stop()
		return 0, ctx.Err()
	case now := <-t.C:
		return int(due(now)), nil
	}
}

func (s *source) Next(ctx context.Context) (exec.Batch, error) {
	sp := s.current()
	if sp == nil {
		return exec.Batch{}, io.EOF
	}
	n, err := s.count(ctx, sp)
	if err != nil {
		return exec.Batch{}, err
	}
	if n == 0 {
		return exec.Batch{}, exec.ErrNoData
	}
	s.w.reserve(s.gen, sp.next, sp.step, n)
	e := sp.next
	for i := 0; i < n; i++ {
		s.gen.fill(e, s.w.evKind[i], s.w.evTime[i], &s.ev, s.w.kinds)
		s.w.write(&s.ev, i)
		e += sp.step
	}
	rec := s.w.record(s.schema, n)
	sp.next = e
	s.run[0] = exec.SplitRun{Split: sp.key(), End: n}
	if !sp.left(s.total) {
		s.live = nil
	}
	return exec.Batch{Rec: rec}, nil
}

// The versions of the snapshot format (checkpoint.AppendStateHeader):
// 1, the list of splits (next event number, step), as uvarints.
const (
	minSnapshotVersion = 1
	snapshotVersion    = 1
)

// Snapshot encodes the splits: for each, its next event number and step.
func (s *source) Snapshot() ([]byte, error) { return encodeSplits(s.splits), nil }

func encodeSplits(splits []split) []byte {
	vals := make([][]uint64, len(splits))
	for i, sp := range splits {
		vals[i] = []uint64{sp.next, sp.step}
	}
	return statecodec.AppendSplits(snapshotVersion, vals)
}

// decodeSplits reads a snapshot of the table's source: an unknown version
// or a layout that does not fit is checkpoint.ErrIncompatibleState.
func decodeSplits(table string, state []byte) ([]split, error) {
	vals, err := statecodec.DecodeSplits(state, "nexmark table "+table, minSnapshotVersion, snapshotVersion, 2)
	if err != nil {
		return nil, err
	}
	out := make([]split, len(vals))
	for i, v := range vals {
		out[i] = split{next: v[0], step: v[1], paceFrom: -1}
	}
	return out, nil
}

// Restore resumes the splits of a snapshot this subtask took.
func (s *source) Restore(state []byte) error {
	sps, err := decodeSplits(s.table, state)
	if err != nil {
		return err
	}
	s.splits, s.live, s.next = sps, nil, 0
	return nil
}

// RestoreRescaled implements exec.Rescalable: states are the snapshots of
// every subtask of the old parallelism, in subtask order. The old splits
// are dealt round-robin to the new subtasks, so every event not yet
// emitted is emitted by exactly one of them.
func (s *source) RestoreRescaled(states [][]byte) error {
	var all []split
	for i, st := range states {
		sps, err := decodeSplits(s.table, st)
		if err != nil {
			return fmt.Errorf("old subtask %d: %w", i, err)
		}
		all = append(all, sps...)
	}
	s.splits, s.live, s.next = nil, nil, 0
	for k, sp := range all {
		if uint64(k)%s.par == s.subtask {
			s.splits = append(s.splits, sp)
		}
	}
	return nil
}

func (s *source) Close() error {
	s.w.release()
	return nil
}

// writers append the projected columns of events to Arrow builders: a
// ROW column straight into its struct builder's field builders. Strings
// are appended event by event; fixed-width values are kept in a slice per
// field and appended a batch at a time (with the ROW's validity), and
// event_type and the dateTime fields are appended from the batch's kinds
// and event times without a step per event.
type writers struct {
	cols []writer
	arrs []arrow.Array
	// kinds has a bit per event kind some projected column needs the
	// fields of.
	kinds uint8
	// evKind and evTime are the kind and the event time of each event of
	// the batch (scratch, reused).
	evKind []int32
	evTime []int64
}

// writer is the builder of one projected column: event_type (leaf) or a
// ROW (st, with a leaf per declared field).
type writer struct {
	leaf
	kind   int32 // the ROW's event kind; -1 for event_type
	st     *array.StructBuilder
	fields []leaf
	// strs are the fields that are strings (appended NULL for the events
	// of other kinds).
	strs  []int
	valid []bool // scratch: the rows of the batch that are of kind
}

// leaf is the builder of one value; one of the builders is set, by the
// field's type.
type leaf struct {
	f   field
	i32 *array.Int32Builder
	i64 *array.Int64Builder
	ts  *array.TimestampBuilder
	str *array.StringBuilder
	// vals holds a BIGINT or TIMESTAMP field's values of the batch, by
	// row (milliseconds for a TIMESTAMP), appended by record; a dateTime
	// field takes its values from the batch's event times instead.
	vals []int64
	// avg is the average bytes per event reserved for a string; lastBytes
	// and lastRows are the bytes the last batch's strings took and its
	// events (dataHint).
	avg                 int
	lastBytes, lastRows int
}

// dataHint returns the bytes to reserve for the strings of n events: as
// many per event as the last batch took, plus a sixteenth (so that a
// batch like it does not grow its buffer, copying it), and at least avg
// per event.
func (l *leaf) dataHint(n int) int {
	h := n * l.avg
	if l.lastRows > 0 {
		h = max(h, l.lastBytes*n/l.lastRows+l.lastBytes/16+64)
	}
	return h
}

func newLeaf(f field, bld array.Builder) leaf {
	l := leaf{f: f}
	switch b := bld.(type) {
	case *array.Int32Builder:
		l.i32 = b
	case *array.Int64Builder:
		l.i64 = b
	case *array.TimestampBuilder:
		l.ts = b
	case *array.StringBuilder:
		l.str, l.avg = b, avgBytes[f]
	}
	return l
}

func newWriters(mem memory.Allocator, proj []bound) writers {
	var w writers
	for _, b := range proj {
		wr := writer{kind: b.col.kind}
		if b.col.kind < 0 {
			wr.leaf = newLeaf(b.col.first, array.NewBuilder(mem, fields[b.col.first].Type.ArrowType()))
		} else {
			wr.st = array.NewStructBuilder(mem, b.decl.ArrowType().(*arrow.StructType))
			for k, f := range b.fields {
				wr.fields = append(wr.fields, newLeaf(f, wr.st.FieldBuilder(k)))
				if wr.fields[k].str != nil {
					wr.strs = append(wr.strs, k)
				}
				if f != fPersonDateTime && f != fAuctionDateTime && f != fBidDateTime {
					// The event time is there for every event; the other
					// fields are generated for the kinds that need them.
					w.kinds |= 1 << b.col.kind
				}
			}
		}
		w.cols = append(w.cols, wr)
	}
	return w
}

// avgBytes is about the bytes per event (of any kind) of a string field,
// with the mix 1:3:46: what a batch reserves up front.
var avgBytes = [numFields]int{
	fPersonName: 1, fPersonEmail: 1, fPersonCreditCard: 1, fPersonCity: 1, fPersonState: 1, fPersonExtra: 4,
	fAuctionItemName: 1, fAuctionDescription: 4, fAuctionExtra: 24,
	fBidChannel: 8, fBidURL: 60, fBidExtra: 64,
}

func (l *leaf) reserve(n int) {
	switch {
	case l.i32 != nil:
		l.i32.Reserve(n)
	case l.i64 != nil:
		l.i64.Reserve(n)
	case l.ts != nil:
		l.ts.Reserve(n)
	default:
		l.str.Reserve(n)
		l.str.ReserveData(l.dataHint(n))
	}
}

// reserve makes room for the n events first, first+step, ..., sets their
// kinds and event times (evKind, evTime), and writes the validity of the
// ROW columns (a row is NULL for events of other kinds), which reserves
// their fields.
func (w *writers) reserve(g *Generator, first, step uint64, n int) {
	if cap(w.evKind) < n {
		w.evKind, w.evTime = make([]int32, n), make([]int64, n)
	}
	w.evKind, w.evTime = w.evKind[:n], w.evTime[:n]
	g.times(first, step, w.evKind, w.evTime)
	for i := range w.cols {
		c := &w.cols[i]
		if c.st == nil {
			c.leaf.reserve(n)
			continue
		}
		if cap(c.valid) < n {
			c.valid = make([]bool, n)
		}
		c.valid = c.valid[:n]
		for k, kind := range w.evKind {
			c.valid[k] = kind == c.kind
		}
		c.st.AppendValues(c.valid)
		for k := range c.fields {
			f := &c.fields[k]
			switch {
			case f.str != nil:
				f.str.ReserveData(f.dataHint(n))
			case !f.isTime():
				if cap(f.vals) < n {
					f.vals = make([]int64, n)
				}
				f.vals = f.vals[:n]
				clear(f.vals) // rows of other kinds are NULL, and zero
			}
		}
	}
}

// write appends event e, row i of the batch, to every column (its
// fixed-width values to the fields' vals, appended by record).
func (w *writers) write(e *Event, i int) {
	for ci := range w.cols {
		c := &w.cols[ci]
		if c.st == nil {
			continue // event_type: record appends the batch's kinds
		}
		if c.kind != e.Type {
			for _, k := range c.strs {
				c.fields[k].str.AppendNull()
			}
			continue
		}
		for k := range c.fields {
			c.fields[k].write(e, i)
		}
	}
}

// isTime reports whether l is a dateTime field (the event time).
func (l *leaf) isTime() bool {
	return l.f == fPersonDateTime || l.f == fAuctionDateTime || l.f == fBidDateTime
}

// appendTimes appends the TIMESTAMP(3) values ms (milliseconds), NULL
// where valid is false (zero then).
func (l *leaf) appendTimes(ms []int64, valid []bool) {
	b := l.ts
	b.Reserve(len(ms))
	for i, v := range ms {
		if valid[i] {
			b.UnsafeAppend(arrow.Timestamp(v * 1000))
		} else {
			b.UnsafeAppendBoolToBitmap(false)
		}
	}
}

// sized notes the bytes the strings of the batch of n events took.
func (l *leaf) sized(n int) {
	if l.str != nil {
		l.lastBytes, l.lastRows = l.str.DataLen(), n
	}
}

func (l *leaf) write(e *Event, i int) {
	switch l.f {
	case fPersonID:
		l.vals[i] = e.Person.ID
	case fPersonName:
		l.str.BinaryBuilder.Append(e.Person.Name)
	case fPersonEmail:
		l.str.BinaryBuilder.Append(e.Person.EmailAddress)
	case fPersonCreditCard:
		l.str.BinaryBuilder.Append(e.Person.CreditCard)
	case fPersonCity:
		l.str.BinaryBuilder.Append(e.Person.City)
	case fPersonState:
		l.str.BinaryBuilder.Append(e.Person.State)
	case fPersonExtra:
		l.str.BinaryBuilder.Append(e.Person.Extra)
	case fAuctionID:
		l.vals[i] = e.Auction.ID
	case fAuctionItemName:
		l.str.BinaryBuilder.Append(e.Auction.ItemName)
	case fAuctionDescription:
		l.str.BinaryBuilder.Append(e.Auction.Description)
	case fAuctionInitialBid:
		l.vals[i] = e.Auction.InitialBid
	case fAuctionReserve:
		l.vals[i] = e.Auction.Reserve
	case fAuctionExpires:
		l.vals[i] = e.Auction.Expires
	case fAuctionSeller:
		l.vals[i] = e.Auction.Seller
	case fAuctionCategory:
		l.vals[i] = e.Auction.Category
	case fAuctionExtra:
		l.str.BinaryBuilder.Append(e.Auction.Extra)
	case fBidAuction:
		l.vals[i] = e.Bid.Auction
	case fBidBidder:
		l.vals[i] = e.Bid.Bidder
	case fBidPrice:
		l.vals[i] = e.Bid.Price
	case fBidChannel:
		l.str.BinaryBuilder.Append(e.Bid.Channel)
	case fBidURL:
		l.str.BinaryBuilder.Append(e.Bid.URL)
	case fBidExtra:
		l.str.BinaryBuilder.Append(e.Bid.Extra)
	}
}

// record moves the built columns into a record batch of n rows; the
// builders are empty again.
func (w *writers) record(schema *arrow.Schema, n int) arrow.RecordBatch {
	if w.arrs == nil {
		w.arrs = make([]arrow.Array, len(w.cols))
	}
	arrs := w.arrs
	for i := range w.cols {
		c := &w.cols[i]
		if c.st == nil {
			c.i32.AppendValues(w.evKind[:n], nil)
		}
		for k := range c.fields {
			f := &c.fields[k]
			f.sized(n)
			switch {
			case f.i64 != nil:
				f.i64.AppendValues(f.vals[:n], c.valid)
			case f.ts != nil:
				src := f.vals
				if f.isTime() {
					src = w.evTime
				}
				f.appendTimes(src[:n], c.valid)
			}
		}
		if c.st != nil {
			arrs[i] = c.st.NewArray()
		} else {
			arrs[i] = c.i32.NewArray()
		}
	}
	rec := array.NewRecordBatch(schema, arrs, int64(n))
	for i, a := range arrs {
		a.Release()
		arrs[i] = nil
	}
	return rec
}

func (w *writers) release() {
	for i := range w.cols {
		c := &w.cols[i]
		if c.st != nil {
			c.st.Release()
		} else {
			c.i32.Release()
		}
	}
	w.cols = nil
}
