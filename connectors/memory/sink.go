package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// opColumn is the extra column of a staged file holding each row's op.
const opColumn = "$op"

type sink struct {
	spec    exec.TableSpec
	t       *table
	key     []int // the primary key's columns
	pending []change
	// staged holds the changes pre-committed at each checkpoint, until
	// Commit (or Finish) installs them.
	staged map[int64]stagedChanges
}

type stagedChanges struct {
	changes []change
	file    string // the staged file under <dir>/staged ("" without a data dir)
}

// handle is what PreCommit returns and Commit receives, as JSON after the
// header of handleVersion (checkpoint.AppendStateHeader). Versions: 1, the
// staged file.
type handle struct {
	File string `json:",omitempty"`
}

const (
	minHandleVersion = 1
	handleVersion    = 1
)

func encodeHandle(h handle) ([]byte, error) { return statecodec.EncodeJSON(handleVersion, h) }

// decodeHandle reads a commit handle of table's sink: an unknown version
// or a layout that does not fit is checkpoint.ErrIncompatibleState.
func decodeHandle(table string, b []byte) (handle, error) {
	var h handle
	_, err := statecodec.DecodeJSON(b, "memory table "+table+" (sink)", minHandleVersion, handleVersion, &h)
	return h, err
}

func newSink(spec exec.TableSpec) (exec.Sink, error) {
	return &sink{spec: spec, staged: map[int64]stagedChanges{}}, nil
}

func (s *sink) Open(context.Context) error {
	t, err := open(s.spec.DataDir, s.spec.Table, s.spec.Schema)
	s.t = t
	if err != nil {
		return err
	}
	s.key, err = upsertKey(s.spec.Table, s.spec.Schema, s.spec.PrimaryKey, s.spec.Watermark)
	return err
}

// Write copies b: the runtime releases it after Write returns.
func (s *sink) Write(_ context.Context, b exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if err := s.checkTypes(b.Rec); err != nil {
		return err
	}
	cp := arrowutil.CopyRecord(memory.DefaultAllocator, b.Rec)
	// Keep the rows under the table's schema (the batch's names are the
	// query's).
	c := change{rec: array.NewRecordBatch(s.t.schema, cp.Columns(), cp.NumRows())}
	cp.Release()
	if b.Ops != nil {
		c.ops = slices.Clone(b.Ops)
	}
	s.pending = append(s.pending, c)
	return nil
}

func (s *sink) checkTypes(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != s.t.schema.NumFields() {
		return fmt.Errorf("memory table %s: got rows of %d columns, the table has %d", s.spec.Table, rec.NumCols(), s.t.schema.NumFields())
	}
	for i := range s.t.schema.NumFields() {
		if want, got := s.t.schema.Field(i).Type, rec.Column(i).DataType(); !arrow.TypeEqual(want, got) {
			return fmt.Errorf("memory table %s: column %s got %s values, want %s", s.spec.Table, s.t.schema.Field(i).Name, got, want)
		}
	}
	return nil
}

// PreCommit stages the changes written since the last pre-commit for
// checkpoint id (in a staged file, with a data directory). If they cannot
// be staged, the checkpoint fails and they stay pending: the next
// checkpoint stages them with the later ones, so a job that tolerates the
// failed checkpoint loses nothing.
func (s *sink) PreCommit(_ context.Context, id int64) ([]byte, error) {
	st := stagedChanges{changes: s.pending}
	if s.t.dir != "" && len(st.changes) > 0 {
		dir := filepath.Join(s.t.dir, "staged")
		if err := fsutil.For(dir).MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("memory table %s: staging checkpoint %d: %w", s.spec.Table, id, err)
		}
		st.file = fmt.Sprintf("%d-%d-%x.arrow", s.spec.Subtask, id, time.Now().UnixNano())
		if err := writeStaged(filepath.Join(dir, st.file), s.t.schema, st.changes); err != nil {
			return nil, fmt.Errorf("memory table %s: staging checkpoint %d: %w", s.spec.Table, id, err)
		}
	}
	s.pending = nil
	s.staged[id] = st
	return encodeHandle(handle{File: st.file})
}

func (s *sink) Commit(_ context.Context, id int64, h []byte) error {
	if st, ok := s.staged[id]; ok {
		delete(s.staged, id)
		return s.install(st.changes, st.file)
	}
	// A restored job committing a checkpoint of an earlier run.
	var hd handle
	if len(h) > 0 {
		var err error
		if hd, err = decodeHandle(s.spec.Table, h); err != nil {
			return err
		}
	}
	if hd.File == "" || s.t.dir == "" {
		return nil
	}
	s.t.mu.Lock()
	done := slices.Contains(s.t.man.Applied, hd.File)
	s.t.mu.Unlock()
	path := filepath.Join(s.t.dir, "staged", hd.File)
	if done {
		return nil
	}
	changes, err := readStaged(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // committed and cleaned up already
	}
	if err != nil {
		return fmt.Errorf("memory table %s: %w", s.spec.Table, err)
	}
	return s.install(changes, hd.File)
}

func (s *sink) install(changes []change, file string) error {
	if err := s.t.apply(changes, s.spec.Schema, file, s.key); err != nil {
		return err
	}
	if file != "" {
		os.Remove(filepath.Join(s.t.dir, "staged", file))
	}
	return nil
}

// Finish installs what was staged and not committed, then what follows.
func (s *sink) Finish(context.Context) error {
	ids := make([]int64, 0, len(s.staged))
	for id := range s.staged {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		st := s.staged[id]
		delete(s.staged, id)
		if err := s.install(st.changes, st.file); err != nil {
			return err
		}
	}
	p := s.pending
	s.pending = nil
	return s.install(p, "")
}

func (s *sink) Close() error {
	for _, c := range s.pending {
		c.rec.Release()
	}
	s.pending = nil
	for id, st := range s.staged {
		for _, c := range st.changes {
			c.rec.Release()
		}
		delete(s.staged, id)
	}
	return nil
}

// writeStaged writes changes as batches of the table's columns plus opColumn.
func writeStaged(path string, schema *arrow.Schema, changes []change) error {
	fields := append(slices.Clone(schema.Fields()), arrow.Field{Name: opColumn, Type: arrow.PrimitiveTypes.Int8})
	ss := arrow.NewSchema(fields, nil)
	recs := make([]arrow.RecordBatch, 0, len(changes))
	defer func() { releaseAll(recs) }()
	for _, c := range changes {
		ob := array.NewInt8Builder(memory.DefaultAllocator)
		for r := range int(c.rec.NumRows()) {
			op := exec.Insert
			if c.ops != nil {
				op = c.ops[r]
			}
			ob.Append(int8(op))
		}
		ops := ob.NewArray()
		ob.Release()
		cols := append(slices.Clone(c.rec.Columns()), ops)
		recs = append(recs, array.NewRecordBatch(ss, cols, c.rec.NumRows()))
		ops.Release()
	}
	return writeArrowFile(path, ss, recs)
}

func readStaged(path string) ([]change, error) {
	sch, recs, err := readArrowFile(path)
	if err != nil {
		return nil, err
	}
	defer releaseAll(recs)
	n := sch.NumFields() - 1
	if n < 0 || sch.Field(n).Name != opColumn {
		return nil, fmt.Errorf("%s is not a staged file", path)
	}
	data := arrow.NewSchema(sch.Fields()[:n], nil)
	var out []change
	for _, r := range recs {
		opsArr := r.Column(n).(*array.Int8)
		c := change{rec: array.NewRecordBatch(data, r.Columns()[:n], r.NumRows()), ops: make([]exec.RowKind, r.NumRows())}
		for i := range c.ops {
			c.ops[i] = exec.RowKind(opsArr.Value(i))
		}
		out = append(out, c)
	}
	return out, nil
}
