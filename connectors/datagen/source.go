package datagen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
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
	mem       memory.Allocator
	schema    *arrow.Schema
	gens      []*generator
	batchSize int
	subtask   uint64
	par       uint64
	// limit is the number of rows this subtask emits (MaxUint64: unbounded).
	limit uint64
	// emitted is the number of rows this subtask has emitted.
	emitted uint64
	// rate is this subtask's rows per second (0: unthrottled); the rows
	// emitted since paceStart (paceBase at that time) follow it.
	rate      float64
	paceStart time.Time
	paceBase  uint64
	cols      []arrow.Array
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
		mem:       spec.Mem,
		schema:    spec.ProducedSchema().Arrow(),
		batchSize: spec.BatchSize,
		subtask:   uint64(spec.Subtask),
		par:       uint64(par),
		limit:     math.MaxUint64,
		rate:      float64(c.rowsPerSecond) / float64(par),
	}
	if s.mem == nil {
		s.mem = memory.DefaultAllocator
	}
	if s.batchSize <= 0 {
		s.batchSize = exec.DefaultBatchSize
	}
	if c.total >= 0 {
		s.limit = 0
		if n := uint64(c.total); n > s.subtask {
			s.limit = (n-s.subtask-1)/s.par + 1
		}
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
	s.paceStart, s.paceBase = time.Now(), s.emitted
	return nil
}

// due returns how many rows the rate allows to have been emitted at t.
func (s *source) due(t time.Time) uint64 {
	return s.paceBase + uint64(t.Sub(s.paceStart).Seconds()*s.rate)
}

func (s *source) Next(ctx context.Context) (exec.Batch, error) {
	if s.emitted >= s.limit {
		return exec.Batch{}, io.EOF
	}
	n := uint64(s.batchSize)
	if left := s.limit - s.emitted; left < n {
		n = left
	}
	if s.rate > 0 {
		// Emit a full batch once it is due; otherwise wait up to maxWait
		// and emit what is due by then, so a slow rate still flows.
		now := time.Now()
		if s.due(now) < s.emitted+n {
			full := s.paceStart.Add(time.Duration(float64(s.emitted+n-s.paceBase) / s.rate * float64(time.Second)))
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
	r := rows{g0: s.subtask + s.emitted*s.par, step: s.par, n: int(n)}
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
	s.emitted += n
	return exec.Batch{Rec: rec}, nil
}

func needsClock(gens []*generator) bool {
	for _, g := range gens {
		if g.f.t.IsTemporal() {
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

const snapshotVersion = 1

// Snapshot encodes (version, parallelism, rows emitted).
func (s *source) Snapshot() ([]byte, error) {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64)
	b = append(b, snapshotVersion)
	b = binary.AppendUvarint(b, s.par)
	b = binary.AppendUvarint(b, s.emitted)
	return b, nil
}

func (s *source) Restore(state []byte) error {
	if len(state) < 1 || state[0] != snapshotVersion {
		return errors.New("datagen: unknown snapshot format")
	}
	par, n := binary.Uvarint(state[1:])
	if n <= 0 {
		return errors.New("datagen: damaged snapshot")
	}
	emitted, m := binary.Uvarint(state[1+n:])
	if m <= 0 {
		return errors.New("datagen: damaged snapshot")
	}
	if par != s.par {
		return fmt.Errorf("datagen: cannot restore a position taken at parallelism %d into parallelism %d", par, s.par)
	}
	s.emitted = min(emitted, s.limit)
	return nil
}

func (s *source) Close() error { return nil }
