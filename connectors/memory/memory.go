package memory

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// Name is the value of the 'connector' option, catalog.MemoryConnector.
const Name = catalog.MemoryConnector

func init() {
	registry.Register(catalog.Connector{
		Name:           Name,
		Source:         true,
		Sink:           true,
		AcceptsUpdates: true,
		Options:        []string{OptScanMode},
		Validate:       validate,
		Bounded:        func(opts map[string]string) bool { return scanMode(opts) == ModeSnapshot },
		// A followed table's commits are changes; an upsert key is not
		// claimed, so the retractions carry whole rows.
		ProducesUpdates: func(opts map[string]string) bool { return scanMode(opts) == ModeFollow },
		Drop:            drop,
		Change:          applyChange,
	}, newSource, newSink)
}

type source struct {
	spec    exec.TableSpec
	schema  *arrow.Schema
	batches []arrow.RecordBatch // this subtask's share of the snapshot taken at Open
	pos     int                 // batches emitted
}

func newSource(spec exec.TableSpec) (exec.Source, error) {
	switch scanMode(spec.Options) {
	case ModeFollow:
		return newFollower(spec, true), nil
	case ModeReplay:
		return newFollower(spec, false), nil
	}
	return &source{spec: spec, schema: spec.ProducedSchema().Arrow()}, nil
}

func (s *source) Open(context.Context) error {
	t, err := open(s.spec.DataDir, s.spec.Table, s.spec.Schema)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := max(s.spec.Parallelism, 1)
	for i := s.spec.Subtask; i < len(t.batches); i += p {
		t.batches[i].Retain()
		s.batches = append(s.batches, t.batches[i])
	}
	if s.pos > len(s.batches) {
		return fmt.Errorf("memory table %s: restored position %d is past the %d batches of subtask %d", s.spec.Table, s.pos, len(s.batches), s.spec.Subtask)
	}
	return nil
}

func (s *source) Next(context.Context) (exec.Batch, error) {
	if s.pos >= len(s.batches) {
		return exec.Batch{}, io.EOF
	}
	rec := arrowutil.Project(s.schema, s.batches[s.pos], s.spec.Fields)
	s.pos++
	return exec.Batch{Rec: rec}, nil
}

// The versions of the source's snapshot (checkpoint.AppendStateHeader):
// 1, the number of batches emitted, a uvarint.
const (
	minSnapshotVersion = 1
	snapshotVersion    = 1
)

// Snapshot encodes the number of batches emitted.
func (s *source) Snapshot() ([]byte, error) { return encodePos(s.pos), nil }

func encodePos(pos int) []byte {
	return binary.AppendUvarint(checkpoint.AppendStateHeader(nil, snapshotVersion), uint64(pos))
}

// decodePos reads a snapshot of table's source: an unknown version or a
// layout that does not fit is checkpoint.ErrIncompatibleState.
func decodePos(table string, state []byte) (int, error) {
	owner := "memory table " + table
	version, body, err := checkpoint.ReadStateHeader(state, owner, minSnapshotVersion, snapshotVersion)
	if err != nil {
		return 0, err
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n > 1<<40 {
		return 0, statecodec.Incompatible(owner, version, "bad batch position")
	}
	if k != len(body) {
		return 0, statecodec.Incompatible(owner, version, "%d bytes after the position", len(body)-k)
	}
	return int(n), nil
}

func (s *source) Restore(state []byte) error {
	n, err := decodePos(s.spec.Table, state)
	if err != nil {
		return err
	}
	s.pos = n
	return nil
}

func (s *source) Close() error {
	releaseAll(s.batches)
	s.batches = nil
	return nil
}
