package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/types"
)

type storeKey struct{ dataDir, name string }

var store = struct {
	sync.Mutex
	m map[storeKey]*table
}{m: map[storeKey]*table{}}

// maxSegments is the number of segment files above which an append
// rewrites the table as one segment.
const maxSegments = 16

// table is the committed content of one memory table.
type table struct {
	mu     sync.Mutex
	name   string
	dir    string // "" when not persisted
	schema *arrow.Schema
	// batches are the committed rows. The slice is never modified in
	// place, so a scan may keep the one it saw at Open.
	batches []arrow.RecordBatch
	man     manifest
	// log lists the commits after logFrom (their sequence numbers are
	// logFrom+1, ...), kept once a scan has followed the table (log.go).
	// pins keeps the rows as of the sequence numbers followers started at.
	logging bool
	logFrom int64
	log     []commit
	pins    map[int64][]arrow.RecordBatch
	// changed is closed (and replaced) at each commit.
	changed chan struct{}
}

// manifest is the MANIFEST file.
type manifest struct {
	Version int
	// Segments are the segment files holding the rows, in order, and the
	// number of batches each holds.
	Segments []segment
	// Next numbers the next segment file.
	Next int
	// Applied lists staged files whose rows are already in a segment (their
	// deletion may not have happened yet), so committing them again is a no-op.
	Applied []string `json:",omitempty"`
	// Seq numbers the commits: the number of commits that changed the
	// table since it was created.
	Seq int64 `json:",omitempty"`
}

type segment struct {
	File    string
	Batches int
}

// Dir returns where the rows of the table called name are kept under dataDir.
func Dir(dataDir, name string) string {
	return filepath.Join(dataDir, "tables", url.PathEscape(strings.ToLower(name)))
}

// Reset forgets the in-process copy of every table of dataDir, so that the
// next access reads them from disk, as a newly started process would.
func Reset(dataDir string) {
	store.Lock()
	defer store.Unlock()
	for k, t := range store.m {
		if k.dataDir == dataDir {
			t.mu.Lock()
			releaseAll(t.batches)
			t.batches = nil
			t.dropLog()
			t.mu.Unlock()
			delete(store.m, k)
		}
	}
}

// drop deletes the rows of the table, in memory and on disk.
func drop(dataDir string, t *catalog.Table) error {
	store.Lock()
	defer store.Unlock()
	k := storeKey{dataDir, strings.ToLower(t.Name)}
	if tb := store.m[k]; tb != nil {
		tb.mu.Lock()
		releaseAll(tb.batches)
		tb.batches = nil
		tb.dropLog()
		tb.mu.Unlock()
		delete(store.m, k)
	}
	if dataDir == "" {
		return nil
	}
	return os.RemoveAll(Dir(dataDir, t.Name))
}

// open returns the table called name, loading it from disk on first use.
func open(dataDir, name string, schema types.Schema) (*table, error) {
	store.Lock()
	defer store.Unlock()
	k := storeKey{dataDir, strings.ToLower(name)}
	if t := store.m[k]; t != nil {
		if err := t.checkSchema(schema); err != nil {
			return nil, err
		}
		return t, nil
	}
	t := &table{name: name, schema: schema.Arrow(), man: manifest{Version: 1, Next: 1}, changed: make(chan struct{})}
	if dataDir != "" {
		t.dir = Dir(dataDir, name)
		if err := t.load(schema); err != nil {
			return nil, fmt.Errorf("memory table %s: %w", name, err)
		}
	}
	store.m[k] = t
	return t, nil
}

func (t *table) checkSchema(s types.Schema) error {
	if !sameSchema(t.schema, s.Arrow()) {
		return fmt.Errorf("memory table %s: stored rows have columns %v, the table declares %v", t.name, t.schema, s.Arrow())
	}
	return nil
}

func sameSchema(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		ta, errA := types.FromField(fa)
		tb, errB := types.FromField(fb)
		if errA != nil || errB != nil || !ta.Equal(tb) || !strings.EqualFold(fa.Name, fb.Name) {
			return false
		}
	}
	return true
}

func (t *table) load(schema types.Schema) error {
	data, err := os.ReadFile(filepath.Join(t.dir, "MANIFEST"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("damaged MANIFEST: %w", err)
	}
	var batches []arrow.RecordBatch
	for _, seg := range m.Segments {
		sch, recs, err := readArrowFile(filepath.Join(t.dir, seg.File))
		if err != nil {
			releaseAll(batches)
			return err
		}
		batches = append(batches, recs...)
		if !sameSchema(sch, t.schema) {
			releaseAll(batches)
			return fmt.Errorf("stored rows have columns %v, the table declares %v", sch, t.schema)
		}
	}
	t.man, t.batches = m, batches
	return nil
}

// readArrowFile reads every batch of an Arrow IPC file.
func readArrowFile(path string) (*arrow.Schema, []arrow.RecordBatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	var out []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			releaseAll(out)
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, rec)
	}
	return r.Schema(), out, nil
}

// writeArrowFile writes recs to path atomically (temporary file, fsync,
// rename, fsync of the directory), through fsutil.For(path).
func writeArrowFile(path string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	fsys := fsutil.For(path)
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp, false)
	if err != nil {
		return err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err == nil {
		for _, r := range recs {
			if err = w.Write(r); err != nil {
				break
			}
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// install makes batches the committed rows, taking ownership of them. With rewrite the table is
// written as one new segment; otherwise added (the batches appended at the
// end of batches) go into a new segment. applied names a staged file whose
// rows this is. The caller holds t.mu.
func (t *table) install(batches, added []arrow.RecordBatch, rewrite bool, applied string) error {
	t.man.Seq++
	if rewrite || len(t.man.Segments) >= maxSegments || fragmented(batches) {
		// Compact: fewer, fuller batches, in one segment.
		batches, added, rewrite = coalesce(batches), nil, true
	}
	if t.dir != "" {
		if err := t.persist(batches, added, rewrite, applied); err != nil {
			t.man.Seq--
			releaseAll(batches)
			return err
		}
	}
	old := t.batches
	t.batches = batches
	releaseAll(old)
	return nil
}

func (t *table) persist(batches, added []arrow.RecordBatch, rewrite bool, applied string) error {
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	m := t.man
	m.Segments = append([]segment(nil), m.Segments...)
	if len(m.Segments) >= maxSegments {
		rewrite = true
	}
	var obsolete []string
	if rewrite {
		for _, s := range m.Segments {
			obsolete = append(obsolete, s.File)
		}
		m.Segments = nil
		added = batches
	}
	if len(added) > 0 {
		name := fmt.Sprintf("seg-%06d.arrow", m.Next)
		m.Next++
		if err := writeArrowFile(filepath.Join(t.dir, name), t.schema, added); err != nil {
			return err
		}
		m.Segments = append(m.Segments, segment{File: name, Batches: len(added)})
	}
	// Keep in Applied only the staged files that still exist.
	var still []string
	for _, a := range m.Applied {
		if _, err := os.Stat(filepath.Join(t.dir, "staged", a)); err == nil {
			still = append(still, a)
		}
	}
	if applied != "" {
		still = append(still, applied)
	}
	m.Applied = still
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(t.dir, "MANIFEST"), data); err != nil {
		return err
	}
	t.man = m
	for _, f := range obsolete {
		os.Remove(filepath.Join(t.dir, f))
	}
	return nil
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// coalesceRows is the number of rows compaction puts in a batch.
const coalesceRows = 1024

// fragmented reports whether batches hold many more batches than
// compaction would make of their rows (many one-row INSERTs, say).
func fragmented(batches []arrow.RecordBatch) bool {
	rows := int64(0)
	for _, b := range batches {
		rows += b.NumRows()
	}
	return int64(len(batches)) > 2*(rows/coalesceRows)+64
}

// coalesce concatenates runs of consecutive batches into batches of at
// most coalesceRows rows (a bigger batch stays as it is). It takes
// ownership of batches and returns batches the caller owns.
func coalesce(batches []arrow.RecordBatch) []arrow.RecordBatch {
	var out, run []arrow.RecordBatch
	rows := int64(0)
	flush := func() {
		switch len(run) {
		case 0:
		case 1:
			out = append(out, run[0])
		default:
			out = append(out, concat(run))
			releaseAll(run)
		}
		run, rows = nil, 0
	}
	for _, b := range batches {
		if rows+b.NumRows() > coalesceRows {
			flush()
		}
		run = append(run, b)
		rows += b.NumRows()
	}
	flush()
	return out
}

func concat(recs []arrow.RecordBatch) arrow.RecordBatch {
	schema := recs[0].Schema()
	cols := make([]arrow.Array, schema.NumFields())
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			panic(fmt.Sprintf("memory: concatenating batches of one schema: %v", err))
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return out
}
