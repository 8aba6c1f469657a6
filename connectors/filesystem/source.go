package filesystem

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

type source struct {
	spec exec.TableSpec
	cfg  config
	dec  format.Decoder
	// files are this subtask's files, relative to the root (errors and
	// snapshots name them so).
	root  string
	files []string
	pos   position
	// restored is a position to resume from once the files are listed;
	// rescaled the positions of every subtask of a checkpoint taken at
	// another parallelism (RestoreRescaled).
	restored *position
	rescaled []position
	// resume is where the files after the current one are to be read from,
	// for those a rescaled restore found started or done.
	resume  map[string]filePos
	f       *os.File
	r       *bufio.Reader
	rec     []byte       // a record assembled from several reads
	skipped atomic.Int64 // read by SHOW JOBS from other goroutines
	// runs says which file the rows of the last batch came from.
	runs []exec.SplitRun
	// Partitioned tables (partition.go): out is the batch's schema; dataOut
	// the positions in it of the decoder's columns, and parts of the
	// partition columns (keys[parts[i].key]); pvals and pnull the values of
	// the current file's partition. A batch holds the rows of one file.
	out     *arrow.Schema
	dataOut []int
	parts   []partField
	pvals   []string
	pnull   []bool
}

// partField is a partition column a scan reads.
type partField struct {
	out, key int
	t        types.T
}

// position is where the next record starts; it is the snapshot, as JSON
// after the header of snapshotVersion (checkpoint.AppendStateHeader).
// Versions: 1, the position below.
type position struct {
	Index  int    // into files; len(files) when done
	File   string // files[Index], to check on restore
	Offset int64  // byte offset in the file
	Line   int64  // lines consumed before Offset
	// Skipped counts the bad records skipped so far.
	Skipped int64
	// Resume lists the files after Index that are not to be read from
	// their start (after a restore at another parallelism).
	Resume []filePos `json:",omitempty"`
}

// filePos is where to read a file from: Offset and Line as in position, or
// nowhere (Done: read to its end already).
type filePos struct {
	File         string
	Offset, Line int64 `json:",omitempty"`
	Done         bool  `json:",omitempty"`
}

func newSource(spec exec.TableSpec) (exec.Source, error) {
	cfg, err := parsePartitioned(spec.Schema, spec.PartitionKeys, spec.Options)
	if err != nil {
		return nil, fmt.Errorf("filesystem table %s: %w", spec.Table, err)
	}
	if spec.BatchSize <= 0 {
		spec.BatchSize = exec.DefaultBatchSize
	}
	return &source{spec: spec, cfg: cfg}, nil
}

// listFiles returns the files under path, in name order, relative to root.
func listFiles(path string) (root string, files []string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", nil, err
	}
	if !st.IsDir() {
		return filepath.Dir(path), []string{filepath.Base(path)}, nil
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(path, p)
			files = append(files, rel)
		}
		return nil
	})
	slices.SortStableFunc(files, comparePaths)
	return path, files, err
}

// comparePaths orders relative paths as the walk does, directory by
// directory, but with names in natural order (comparePaths).
func comparePaths(a, b string) int {
	for {
		ah, at, amore := strings.Cut(a, string(filepath.Separator))
		bh, bt, bmore := strings.Cut(b, string(filepath.Separator))
		if c := compareNames(ah, bh); c != 0 || !amore || !bmore {
			if c == 0 { // a file and a directory of the same name
				return cmp.Compare(a, b)
			}
			return c
		}
		a, b = at, bt
	}
}

// compareNames orders names with runs of digits compared as numbers, so
// that part-0-9 comes before part-0-10; names equal so are ordered by
// their bytes.
func compareNames(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			i0, j0 := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			x := strings.TrimLeft(a[i0:i], "0")
			y := strings.TrimLeft(b[j0:j], "0")
			if c := cmp.Compare(len(x), len(y)); c != 0 {
				return c
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
			continue
		}
		if a[i] != b[j] {
			return cmp.Compare(a[i], b[j])
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (s *source) Open(context.Context) error {
	root, all, err := listFiles(s.cfg.path)
	if err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	s.root = root
	p := max(s.spec.Parallelism, 1)
	for i := s.spec.Subtask; i < len(all); i += p {
		s.files = append(s.files, all[i])
	}
	if r := s.restored; r != nil {
		if r.Index < len(s.files) && s.files[r.Index] != r.File || r.Index > len(s.files) {
			return fmt.Errorf("filesystem table %s: cannot restore: the snapshot was reading file %q as file %d of subtask %d, which now has %d files", s.spec.Table, r.File, r.Index, s.spec.Subtask, len(s.files))
		}
		s.pos = *r
		s.skipped.Store(r.Skipped)
		s.resume = map[string]filePos{}
		for _, f := range r.Resume {
			s.resume[f.File] = f
		}
	}
	if s.rescaled != nil {
		if err := s.restoreRescaled(all); err != nil {
			return fmt.Errorf("filesystem table %s: cannot restore at parallelism %d: %w", s.spec.Table, p, err)
		}
	}
	if len(s.cfg.partitionKeys) > 0 {
		return s.openPartitioned()
	}
	s.dec, err = s.cfg.format.NewDecoder(format.Spec{
		Schema: s.spec.Schema, Fields: s.spec.Fields, Options: s.spec.Options,
		Prefix: s.cfg.format.Name + ".", Mem: s.spec.Mem,
	})
	return err
}

// openPartitioned builds the decoder of the data columns the scan reads,
// and where the partition columns go.
func (s *source) openPartitioned() error {
	fields := s.spec.Fields
	if fields == nil {
		for i := range s.spec.Schema {
			fields = append(fields, i)
		}
	}
	data := dataSchema(s.spec.Schema, s.cfg.partitionKeys)
	var dfields []int
	s.out = s.spec.ProducedSchema().Arrow()
	for o, f := range fields {
		c := s.spec.Schema[f]
		if k := slices.IndexFunc(s.cfg.partitionKeys, func(k string) bool { return strings.EqualFold(k, c.Name) }); k >= 0 {
			s.parts = append(s.parts, partField{out: o, key: k, t: c.Type})
			continue
		}
		dfields = append(dfields, data.Index(c.Name))
		s.dataOut = append(s.dataOut, o)
	}
	if dfields == nil {
		dfields = []int{} // no data column read: rows only counted
	}
	var err error
	s.dec, err = s.cfg.format.NewDecoder(format.Spec{
		Schema: data, Fields: dfields, Options: s.spec.Options,
		Prefix: s.cfg.format.Name + ".", Mem: s.spec.Mem,
	})
	return err
}

// partitioned turns the decoder's batch of the current file into the
// scan's: the partition columns are the file's partition values.
func (s *source) partitioned(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer rec.Release()
	n := int(rec.NumRows())
	cols := make([]arrow.Array, s.out.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, o := range s.dataOut {
		c := rec.Column(j)
		c.Retain()
		cols[o] = c
	}
	mem := s.spec.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	for _, p := range s.parts {
		b := array.NewBuilder(mem, s.out.Field(p.out).Type)
		v, null := s.pvals[p.key], s.pnull[p.key]
		switch bb := b.(type) {
		case *array.StringBuilder:
			for range n {
				if null {
					bb.AppendNull()
				} else {
					bb.Append(v)
				}
			}
		default:
			var x int64
			if !null {
				var err error
				if x, err = strconv.ParseInt(v, 10, 64); err != nil {
					b.Release()
					return nil, fmt.Errorf("%s: partition %s=%s is not %s", s.pos.File, s.cfg.partitionKeys[p.key], v, p.t)
				}
			}
			for range n {
				if null {
					b.AppendNull()
					continue
				}
				switch ib := b.(type) {
				case *array.Int64Builder:
					ib.Append(x)
				case *array.Int32Builder:
					ib.Append(int32(x))
				case *array.Int16Builder:
					ib.Append(int16(x))
				case *array.Int8Builder:
					ib.Append(int8(x))
				}
			}
		}
		cols[p.out] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(s.out, cols, int64(n)), nil
}

// SkippedRecords is the number of bad records skipped (ignore-parse-errors);
// it implements exec.SkipCounter.
func (s *source) SkippedRecords() int64 { return s.skipped.Load() }

func (s *source) openFile() error {
	name := s.files[s.pos.Index]
	f, err := os.Open(filepath.Join(s.root, name))
	if err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	if _, err := f.Seek(s.pos.Offset, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	s.f = f
	if len(s.cfg.partitionKeys) > 0 {
		if s.pvals, s.pnull, err = s.cfg.partitionValues(name); err != nil {
			f.Close()
			s.f = nil
			return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
		}
	}
	if s.r == nil {
		s.r = bufio.NewReaderSize(f, 256<<10)
	} else {
		s.r.Reset(f)
	}
	s.pos.File = name
	return nil
}

func (s *source) closeFile() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// readLine returns the next line without its terminator, and whether one
// was read (false at the end of the file). The slice is valid until the
// next read.
func (s *source) readLine(dst []byte) ([]byte, bool, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A line longer than the buffer: assemble it.
		long := append(dst, line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long[len(dst):]
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	if len(line) == 0 {
		return nil, false, nil
	}
	s.pos.Offset += int64(len(line))
	s.pos.Line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), true, nil
}

// record returns the next record (one line, or several when a quoted value
// spans lines) and the line it starts on.
func (s *source) record() ([]byte, int64, bool, error) {
	line, ok, err := s.readLine(nil)
	start := s.pos.Line
	if err != nil || !ok || !s.dec.Incomplete(line) {
		return line, start, ok, err
	}
	s.rec = append(s.rec[:0], line...)
	for s.dec.Incomplete(s.rec) {
		more, ok, err := s.readLine(nil)
		if err != nil {
			return nil, start, false, err
		}
		if !ok {
			break // the decoder reports the unterminated value
		}
		s.rec = append(s.rec, '\n')
		s.rec = append(s.rec, more...)
	}
	return s.rec, start, true, nil
}

// Splits lists the files not yet read to their end (exec.SplitSource):
// each file is a split with its own watermark, so a file not yet read holds
// the watermark back and the rows of the files read before it are never
// late because of the order the files are read in.
func (s *source) Splits() []string {
	if s.pos.Index >= len(s.files) {
		return nil
	}
	return s.files[s.pos.Index:]
}

// BatchSplits says which file each row of the last batch came from
// (exec.SplitSource).
func (s *source) BatchSplits() []exec.SplitRun { return s.runs }

// endRun closes the run of the current file's rows in the batch.
func (s *source) endRun() {
	n, last := s.dec.Rows(), 0
	if k := len(s.runs) - 1; k >= 0 {
		last = s.runs[k].End
	}
	if n > last && s.pos.Index < len(s.files) {
		s.runs = append(s.runs, exec.SplitRun{Split: s.files[s.pos.Index], End: n})
	}
}

func (s *source) Next(ctx context.Context) (exec.Batch, error) {
	s.runs = s.runs[:0]
	for s.dec.Rows() < s.spec.BatchSize {
		if s.pos.Index >= len(s.files) {
			break
		}
		if s.f == nil {
			if err := s.openFile(); err != nil {
				return exec.Batch{}, err
			}
		}
		rec, line, ok, err := s.record()
		if err != nil {
			return exec.Batch{}, fmt.Errorf("%s: %w", s.pos.File, err)
		}
		if !ok {
			if len(s.parts) > 0 && s.dec.Rows() > 0 {
				// A batch holds one partition: this file's rows go now.
				b, err := s.flushPartitioned()
				s.closeFile()
				s.pos = position{Index: s.pos.Index + 1, Skipped: s.pos.Skipped}
				s.seek()
				return b, err
			}
			s.endRun()
			s.closeFile()
			s.pos = position{Index: s.pos.Index + 1}
			s.seek()
			continue
		}
		if len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		if err := s.dec.Decode(rec); err != nil {
			if s.dec.IgnoreParseErrors() {
				s.skipped.Add(1)
				continue
			}
			return exec.Batch{}, fmt.Errorf("%s:%d: %w%s", filepath.Join(s.root, s.pos.File), line, err, format.SkipHint(s.cfg.format, s.cfg.format.Name+"."))
		}
	}
	if s.dec.Rows() == 0 {
		return exec.Batch{}, io.EOF
	}
	if len(s.parts) > 0 {
		return s.flushPartitioned()
	}
	s.endRun()
	if c, ok := s.dec.(format.ChangelogDecoder); ok {
		rec, ops := c.FlushChanges()
		return exec.Batch{Rec: rec, Ops: ops}, nil
	}
	return exec.Batch{Rec: s.dec.Flush()}, nil
}

func (s *source) Snapshot() ([]byte, error) {
	p := s.pos
	p.Skipped = s.skipped.Load()
	if p.Index < len(s.files) {
		p.File = s.files[p.Index]
		for _, f := range s.files[p.Index+1:] {
			if r, ok := s.resume[f]; ok {
				p.Resume = append(p.Resume, r)
			}
		}
	}
	return statecodec.EncodeJSON(snapshotVersion, p)
}

const (
	minSnapshotVersion = 1
	snapshotVersion    = 1
)

// decodePosition reads a snapshot of the source of table: an unknown
// version or a layout that does not fit is checkpoint.ErrIncompatibleState.
func decodePosition(table string, state []byte) (position, error) {
	var p position
	_, err := statecodec.DecodeJSON(state, "filesystem table "+table+" (source)", minSnapshotVersion, snapshotVersion, &p)
	return p, err
}

// RestoreRescaled takes the snapshots of every subtask of a checkpoint
// taken at another parallelism (exec.Rescalable); Open then works out where
// each of this subtask's files stands.
func (s *source) RestoreRescaled(states [][]byte) error {
	s.rescaled = make([]position, len(states))
	for i, st := range states {
		p, err := decodePosition(s.spec.Table, st)
		if err != nil {
			return fmt.Errorf("old subtask %d: %w", i, err)
		}
		s.rescaled[i] = p
	}
	return nil
}

// restoreRescaled sets the position of this subtask's files from the
// snapshots of the old subtasks: old subtask o of P read the files all[o],
// all[o+P], ... in order, so those before its Index are done, the one at
// Index is read up to its Offset, and the later ones are where its Resume
// says or untouched. The skipped-record counts add up in subtask 0.
func (s *source) restoreRescaled(all []string) error {
	at := map[string]filePos{}
	var skipped int64
	for o, r := range s.rescaled {
		var old []string
		for i := o; i < len(all); i += len(s.rescaled) {
			old = append(old, all[i])
		}
		if r.Index > len(old) || r.Index < len(old) && old[r.Index] != r.File {
			return fmt.Errorf("the snapshot of subtask %d was reading file %q as its file %d, which is now %d files long", o, r.File, r.Index, len(old))
		}
		for i, f := range old {
			switch {
			case i < r.Index:
				at[f] = filePos{File: f, Done: true}
			case i == r.Index && (r.Offset > 0 || r.Line > 0):
				at[f] = filePos{File: f, Offset: r.Offset, Line: r.Line}
			}
		}
		for _, f := range r.Resume {
			at[f.File] = f
		}
		skipped += r.Skipped
	}
	s.pos, s.resume = position{}, map[string]filePos{}
	for _, f := range s.files {
		if r, ok := at[f]; ok {
			s.resume[f] = r
		}
	}
	s.seek()
	if s.spec.Subtask == 0 {
		s.skipped.Store(skipped)
	}
	return nil
}

// seek moves the position past files read to their end and to where the
// current file is to be read from, as resume says.
func (s *source) seek() {
	for s.pos.Index < len(s.files) {
		r, ok := s.resume[s.files[s.pos.Index]]
		if !ok {
			return
		}
		delete(s.resume, r.File)
		if !r.Done {
			s.pos.Offset, s.pos.Line = r.Offset, r.Line
			return
		}
		s.pos = position{Index: s.pos.Index + 1}
	}
}

func (s *source) Restore(state []byte) error {
	p, err := decodePosition(s.spec.Table, state)
	if err != nil {
		return err
	}
	s.restored = &p
	return nil
}

func (s *source) Close() error {
	s.closeFile()
	if s.dec != nil {
		s.dec.Release()
	}
	return nil
}

// flushPartitioned returns the decoded rows of the current file, with its
// partition values.
func (s *source) flushPartitioned() (exec.Batch, error) {
	s.endRun()
	rec, err := s.partitioned(s.dec.Flush())
	if err != nil {
		return exec.Batch{}, err
	}
	return exec.Batch{Rec: rec}, nil
}
