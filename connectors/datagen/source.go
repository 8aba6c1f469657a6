package datagen

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
const Name = "datagen"

func init() {
	registry.Register(catalog.Connector{
		Name:    Name,
		Source:  true,
		Bounded: bounded,
		Options: []string{OptRowsPerSecond, OptNumberOfRows, fieldsPrefix + "#"},
		Validate: func(t *catalog.Table) error {
			_, err := parse(t.Name, t.Columns, t.Options)
			return err
		},
	}, newSource, nil)
}

// maxWait bounds how long Next sleeps before returning exec.ErrNoData.
const maxWait = 100 * time.Millisecond

type source struct {
	table     string
	mem       memory.Allocator
	schema    *arrow.Schema
	gens      []*generator
	batchSize int
	subtask   uint64
	par       uint64
	// total is the table's number of rows (MaxUint64: unbounded).
	total uint64
	// splits are the row sequences this subtask emits, in order: normally
	// one, rows subtask, subtask+par, ...; after a restore into another
	// parallelism, the splits of old subtasks assigned to this one.
	splits []split
	// next is the split the next batch comes from when it has rows left:
	// the splits take turns, batch by batch, so that they advance together
	// (an unbounded split never ends, and event time moves in all of them).
	next int
	// live names the splits with rows left (nil: to be listed again), run
	// the split of the last batch (exec.SplitSource).
	live []string
	run  [1]exec.SplitRun
	// emitted counts the rows emitted since Open (pacing).
	emitted uint64
	// rate is this subtask's rows per second (0: unthrottled); the rows
	// emitted since paceStart follow it.
	rate      float64
	paceStart time.Time
	cols      []arrow.Array
}

// split is the sequence of row indexes origin, origin+step, ... below the
// table's total; done of them were emitted.
type split struct {
	origin, step, done uint64
	// name is the split's name as a watermark split (see key).
	name string
}

// limit is the number of rows of the split.
func (sp split) limit(total uint64) uint64 {
	if total == math.MaxUint64 {
		return math.MaxUint64
	}
	if total <= sp.origin {
		return 0
	}
	return (total-sp.origin-1)/sp.step + 1
}

func newSource(spec exec.TableSpec) (exec.Source, error) {
	c, err := parse(spec.Table, spec.Schema, spec.Options)
	if err != nil {
		return nil, fmt.Errorf("datagen table %s: %w", spec.Table, err)
	}
	par := max(spec.Parallelism, 1)
	if spec.Subtask < 0 || spec.Subtask >= par {
		return nil, fmt.Errorf("datagen table %s: subtask %d out of range for parallelism %d", spec.Table, spec.Subtask, par)
	}
	s := &source{
		table:     spec.Table,
		mem:       spec.Mem,
		schema:    spec.ProducedSchema().Arrow(),
		batchSize: spec.BatchSize,
		subtask:   uint64(spec.Subtask),
		par:       uint64(par),
		total:     math.MaxUint64,
		rate:      float64(c.rowsPerSecond) / float64(par),
	}
	s.splits = []split{{origin: s.subtask, step: s.par}}
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	if s.batchSize <= 0 {
		s.batchSize = exec.DefaultBatchSize
	}
	if c.total >= 0 {
		s.total = uint64(c.total)
	}
	fields := spec.Fields
	if fields == nil {
		for i := range spec.Schema {
			fields = append(fields, i)
		}
	}
	for _, f := range fields {
		s.gens = append(s.gens, newGenerator(&c.fields[f]))
	}
	s.cols = make([]arrow.Array, len(s.gens))
	return s, nil
}

func (s *source) Open(context.Context) error {
	s.paceStart, s.emitted = time.Now(), 0
	return nil
}

// due returns how many rows the rate allows to have been emitted at t.
func (s *source) due(t time.Time) uint64 {
	return uint64(t.Sub(s.paceStart).Seconds() * s.rate)
}

// current returns the split whose turn it is, the next one after it with
// rows left, or nil at the end.
func (s *source) current() *split {
	for k := range s.splits {
		i := (s.next + k) % len(s.splits)
		if s.splits[i].done < s.splits[i].limit(s.total) {
			s.next = (i + 1) % len(s.splits)
			return &s.splits[i]
		}
	}
	return nil
}

// key names split sp as a split of exec.SplitSource: its first row index
// and its stride.
func (sp *split) key() string {
	if sp.name == "" {
		sp.name = fmt.Sprintf("%d/%d", sp.origin, sp.step)
	}
	return sp.name
}

// Splits lists the splits with rows left (exec.SplitSource); each has its
// own watermark.
func (s *source) Splits() []string {
	if s.live == nil {
		s.live = make([]string, 0, len(s.splits))
		for i := range s.splits {
			if sp := &s.splits[i]; sp.done < sp.limit(s.total) {
				s.live = append(s.live, sp.key())
			}
		}
	}
	return s.live
}

// BatchSplits says which split the last batch came from (one per batch).
func (s *source) BatchSplits() []exec.SplitRun { return s.run[:] }

func (s *source) Next(ctx context.Context) (exec.Batch, error) {
	sp := s.current()
	if sp == nil {
		return exec.Batch{}, io.EOF
	}
	n := uint64(s.batchSize)
	if left := sp.limit(s.total) - sp.done; left < n {
		n = left
	}
	if s.rate > 0 {
		// Emit a full batch once it is due; otherwise wait up to maxWait
		// and emit what is due by then, so a slow rate still flows.
		now := time.Now()
		if s.due(now) < s.emitted+n {
			full := s.paceStart.Add(time.Duration(float64(s.emitted+n) / s.rate * float64(time.Second)))
			wait := min(full.Sub(now), maxWait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return exec.Batch{}, ctx.Err()
			case now = <-t.C:
			}
			d := s.due(now)
			if d <= s.emitted {
				return exec.Batch{}, exec.ErrNoData
			}
			n = min(n, d-s.emitted)
		}
	}
	r := rows{g0: sp.origin + sp.done*sp.step, step: sp.step, n: int(n)}
	if needsClock(s.gens) {
		r.now = localMicros(time.Now())
	}
	for i, g := range s.gens {
		s.cols[i] = g.column(s.mem, r)
	}
	rec := array.NewRecordBatch(s.schema, s.cols, int64(n))
	for i, c := range s.cols {
		c.Release()
		s.cols[i] = nil
	}
	sp.done += n
	s.emitted += n
	s.run[0] = exec.SplitRun{Split: sp.key(), End: int(n)}
	if sp.done >= sp.limit(s.total) {
		s.live = nil
	}
	return exec.Batch{Rec: rec}, nil
}

func needsClock(gens []*generator) bool {
	for _, g := range gens {
		if g.f.t.IsTemporal() && g.f.kind != kindSequence {
			return true
		}
	}
	return false
}

// localMicros is t's wall-clock reading in its zone as microseconds since
// 1970-01-01 00:00:00 (a TIMESTAMP without zone, as Flink's LocalDateTime.now()).
func localMicros(t time.Time) int64 {
	_, off := t.Zone()
	return t.UnixMicro() + int64(off)*1e6
}

// The versions of the snapshot format (checkpoint.AppendStateHeader):
// 1, the list of splits (origin, step, rows emitted), as uvarints.
const (
	minSnapshotVersion = 1
	snapshotVersion    = 1
)

// Snapshot encodes the splits and how far each got.
func (s *source) Snapshot() ([]byte, error) { return encodeSplits(s.splits), nil }

func encodeSplits(splits []split) []byte {
	vals := make([][]uint64, len(splits))
	for i, sp := range splits {
		vals[i] = []uint64{sp.origin, sp.step, sp.done}
	}
	return statecodec.AppendSplits(snapshotVersion, vals)
}

// decodeSplits reads a snapshot of the table's source: an unknown version
// or a layout that does not fit is checkpoint.ErrIncompatibleState.
func decodeSplits(table string, state []byte) ([]split, error) {
	vals, err := statecodec.DecodeSplits(state, "datagen table "+table, minSnapshotVersion, snapshotVersion, 3)
	if err != nil {
		return nil, err
	}
	out := make([]split, len(vals))
	for i, v := range vals {
		out[i] = split{origin: v[0], step: v[1], done: v[2]}
	}
	return out, nil
}

// Restore resumes the splits of a snapshot this subtask took.
func (s *source) Restore(state []byte) error {
	sps, err := decodeSplits(s.table, state)
	if err != nil {
		return err
	}
	s.splits, s.live = sps, nil
	return nil
}

// RestoreRescaled implements exec.Rescalable: states are the snapshots of
// every subtask of the old parallelism, in subtask order. The old splits
// are dealt round-robin to the new subtasks, so every row not yet emitted
// is emitted by exactly one of them.
func (s *source) RestoreRescaled(states [][]byte) error {
	var all []split
	for i, st := range states {
		sps, err := decodeSplits(s.table, st)
		if err != nil {
			return fmt.Errorf("old subtask %d: %w", i, err)
		}
		all = append(all, sps...)
	}
	s.splits, s.live = nil, nil
	for k, sp := range all {
		if uint64(k)%s.par == s.subtask {
			s.splits = append(s.splits, sp)
		}
	}
	return nil
}

func (s *source) Close() error { return nil }
