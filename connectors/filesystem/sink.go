package filesystem

import (
	"bufio"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/fsutil"
)

func init() {
	registry.Register(catalog.Connector{
		Name:   Name,
		Source: true,
		Sink:   true,
		// With 'debezium-json' the sink takes -U/+U/-D rows and a scan
		// reads them back; csv and json are append-only.
		AcceptsUpdatesWith: isChangelogFormat,
		ProducesUpdates:    isChangelogFormat,
		Bounded:            func(map[string]string) bool { return true },
		Partitioned:        true,
		Options:            optionKeys(),
		Required:           []string{OptPath, OptFormat},
		Validate:           validate,
	}, newSource, newSink)
}

func isChangelogFormat(opts map[string]string) bool { return opts[OptFormat] == "debezium-json" }

// The suffix of the hidden file a part file is written to until committed.
const inProgressSuffix = ".inprogress"

// sink is one subtask of the two-phase-commit filesystem sink; the package
// doc describes the files and the protocol.
//
// Order of calls: Open first, except for Commit, which may come before Open
// as well as after it: a restored job commits the handles of the restored
// checkpoint before or after Open, but before the sink's first Write,
// PreCommit or Finish, which is when the sink deletes the hidden files its
// subtask left behind. A Commit of a restored handle after that fails,
// since its files are gone.
type sink struct {
	spec exec.TableSpec
	cfg  config
	enc  format.Encoder
	chg  format.ChangelogEncoder // enc, when the format writes a changelog
	ext  string
	// fs is where the sink writes: fsutil.For(the table's path), the
	// operating system unless a test injects faults there.
	fs fsutil.FS

	// started is set once leftover hidden files are deleted and next is
	// past every part number of this subtask in the directory.
	started bool
	next    int64
	// parts are the in-progress files by partition directory ("" for a
	// table without PARTITIONED BY), each created by the first row of its
	// partition after a pre-commit or a roll.
	parts map[string]*partFile
	// order lists parts' keys in creation order (pre-commits seal them so).
	order []string
	buf   []byte
	// pkey is the partition directory of a row being routed; pcols the
	// partition columns' positions, dcols the data columns'.
	pkey         []byte
	pcols, dcols []int
	dataSch      *arrow.Schema
	// wmAt is the watermark when each checkpoint was pre-committed, for the
	// partitions its commit commits; wm the last one received.
	wm   int64
	wmAt map[int64]int64
	// pending are the files this instance pre-committed and has not yet
	// committed, oldest first.
	pending []pendingFile
	// broken is set once a part file could not be made durable: its rows
	// are gone, so every later Write, PreCommit and Finish fails with it,
	// and the job restarts from a checkpoint before those rows instead of
	// going on without them (a failed pre-commit alone only fails its
	// checkpoint, which a job may tolerate).
	broken error
}

// partFile is the open in-progress file.
type partFile struct {
	f      fsutil.File
	w      *bufio.Writer
	hidden string // path relative to the table's while in progress and pending
	final  string // path once committed
	opened time.Time
	size   int64
}

// fileHandle names one pre-committed file of a commit handle.
type fileHandle struct {
	// Pending is the hidden name the file has until it is committed.
	Pending string `json:"pending"`
	// Final is the name Commit renames it to.
	Final string `json:"final"`
}

// handle is what PreCommit returns and Commit receives, as JSON after the
// header of handleVersion (checkpoint.AppendStateHeader):
//
//	{"files":[{"pending":".part-0-3.csv.inprogress","final":"part-0-3.csv"}, ...]}
//
// Names are relative to the table's path: a part file of a partitioned
// table is under its partition's directories ("dt=2024-01-01/.part-0-3.csv.inprogress").
// Versions: 1, the above.
type handle struct {
	Files []fileHandle `json:"files"`
}

const (
	minHandleVersion = 1
	handleVersion    = 1
)

// decodeHandle reads a commit handle of the sink of table: an unknown
// version or a layout that does not fit is checkpoint.ErrIncompatibleState.
func decodeHandle(table string, b []byte) (handle, error) {
	var h handle
	_, err := statecodec.DecodeJSON(b, "filesystem table "+table+" (sink)", minHandleVersion, handleVersion, &h)
	return h, err
}

type pendingFile struct {
	fileHandle
	checkpoint int64 // the checkpoint it was pre-committed at; rolled before the next one
}

// rolled is the checkpoint of a file rolled before a checkpoint's barrier:
// the next pre-commit gives it that checkpoint's id.
const rolled = math.MaxInt64 - 1

func newSink(spec exec.TableSpec) (exec.Sink, error) {
	cfg, err := parsePartitioned(spec.Schema, spec.PartitionKeys, spec.Options)
	if err != nil {
		return nil, fmt.Errorf("filesystem table %s: %w", spec.Table, err)
	}
	enc, err := cfg.format.NewEncoder(format.Spec{Schema: dataSchema(spec.Schema, spec.PartitionKeys), Options: spec.Options, Prefix: cfg.format.Name + "."})
	if err != nil {
		return nil, err
	}
	s := &sink{spec: spec, cfg: cfg, enc: enc, ext: cfg.format.Extension, fs: fsutil.For(cfg.path),
		parts: map[string]*partFile{}, wm: math.MinInt64, wmAt: map[int64]int64{}}
	for i, c := range spec.Schema {
		if containsFold(spec.PartitionKeys, c.Name) {
			s.pcols = append(s.pcols, i)
		} else {
			s.dcols = append(s.dcols, i)
		}
	}
	s.dataSch = dataSchema(spec.Schema, spec.PartitionKeys).Arrow()
	if len(s.pcols) > 0 && s.chg != nil {
		return nil, fmt.Errorf("filesystem table %s: PARTITIONED BY with a changelog format is not supported", spec.Table)
	}
	s.chg, _ = enc.(format.ChangelogEncoder)
	return s, nil
}

func (s *sink) errorf(f string, args ...any) error {
	return fmt.Errorf("filesystem table %s: "+f, append([]any{s.spec.Table}, args...)...)
}

// partNumber returns k if name is "<prefix><k>" followed by nothing or by
// a '.' (an extension), for the prefix "part-<subtask>-" of this subtask.
func (s *sink) partNumber(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "part-"+strconv.Itoa(s.spec.Subtask)+"-")
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, ".")
	k, err := strconv.ParseInt(digits, 10, 64)
	return k, err == nil && k >= 0 && digits[0] != '+'
}

// Open creates the directory.
func (s *sink) Open(context.Context) error {
	if err := s.fs.MkdirAll(s.cfg.path, 0o755); err != nil {
		return s.errorf("%w", err)
	}
	return nil
}

// start deletes the hidden files this subtask left in the directory (rows
// written after the checkpoint a restored job resumes from, which it
// writes again, and files of checkpoints that never completed) and numbers
// the next part file after every part file of the subtask there. It runs
// once, before the first file is written or committed by this instance.
func (s *sink) start() error {
	if s.started {
		return nil
	}
	if err := s.fs.MkdirAll(s.cfg.path, 0o755); err != nil {
		return s.errorf("%w", err)
	}
	if err := s.scanDir("", len(s.cfg.partitionKeys)); err != nil {
		return err
	}
	s.started = true
	return nil
}

// scanDir does start's work in the directory dir (relative to the table's
// path), and in its partition directories levels deep.
func (s *sink) scanDir(dir string, levels int) error {
	entries, err := os.ReadDir(filepath.Join(s.cfg.path, dir))
	if err != nil {
		return s.errorf("%w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if levels > 0 {
			if e.IsDir() && strings.Contains(name, "=") {
				if err := s.scanDir(filepath.Join(dir, name), levels-1); err != nil {
					return err
				}
			}
			continue
		}
		if hidden, ok := strings.CutPrefix(name, "."); ok {
			k, ok := s.partNumber(hidden)
			if !ok || !strings.HasSuffix(name, inProgressSuffix) || !e.Type().IsRegular() {
				continue
			}
			if err := s.fs.Remove(filepath.Join(s.cfg.path, dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return s.errorf("deleting a leftover in-progress file: %w", err)
			}
			s.next = max(s.next, k+1)
		} else if k, ok := s.partNumber(name); ok {
			s.next = max(s.next, k+1)
		}
	}
	return nil
}

// openPart creates the next in-progress file, in partition directory dir.
func (s *sink) openPart(dir string) (*partFile, error) {
	if dir != "" {
		if err := s.fs.MkdirAll(filepath.Join(s.cfg.path, dir), 0o755); err != nil {
			return nil, s.errorf("%w", err)
		}
	}
	for {
		name := fmt.Sprintf("part-%d-%d%s", s.spec.Subtask, s.next, s.ext)
		final, hidden := filepath.Join(dir, name), filepath.Join(dir, "."+name+inProgressSuffix)
		s.next++
		if _, err := os.Lstat(filepath.Join(s.cfg.path, final)); err == nil {
			continue // written since start by someone else
		}
		f, err := s.fs.Create(filepath.Join(s.cfg.path, hidden), true)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, s.errorf("%w", err)
		}
		size := 256 << 10
		if dir != "" {
			size = 64 << 10 // one per open partition
		}
		p := &partFile{f: f, w: bufio.NewWriterSize(f, size), hidden: hidden, final: final, opened: time.Now()}
		s.parts[dir] = p
		s.order = append(s.order, dir)
		return p, nil
	}
}

// part returns the in-progress file of partition directory dir, creating
// it if needed.
func (s *sink) part(dir []byte) (*partFile, error) {
	if p, ok := s.parts[string(dir)]; ok {
		return p, nil
	}
	return s.openPart(string(dir))
}

// partitionDir appends the partition directory of row i of b.
func (s *sink) partitionDir(dst []byte, b exec.Batch, i int) []byte {
	for j, c := range s.pcols {
		if j > 0 {
			dst = append(dst, filepath.Separator)
		}
		dst = append(dst, s.spec.Schema[c].Name...)
		dst = append(dst, '=')
		col := b.Rec.Column(c)
		if col.IsNull(i) {
			dst = append(dst, s.cfg.defaultPartition...)
			continue
		}
		n := len(dst)
		switch a := col.(type) {
		case *array.String:
			dst = appendEscaped(dst, a.Value(i))
		case *array.Int64:
			dst = strconv.AppendInt(dst, a.Value(i), 10)
		case *array.Int32:
			dst = strconv.AppendInt(dst, int64(a.Value(i)), 10)
		case *array.Int16:
			dst = strconv.AppendInt(dst, int64(a.Value(i)), 10)
		case *array.Int8:
			dst = strconv.AppendInt(dst, int64(a.Value(i)), 10)
		default:
			dst = appendEscaped(dst, col.ValueStr(i))
		}
		if len(dst) == n {
			dst = append(dst, s.cfg.defaultPartition...) // Flink: an empty value is the default partition
		}
	}
	return dst
}

// Write appends the rows of b to the in-progress file, creating it for the
// first row after a pre-commit. Rows other than +I are an error unless the
// format writes a changelog.
func (s *sink) Write(_ context.Context, b exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if b.Ops != nil && s.chg == nil {
		for i := 0; i < b.Len(); i++ {
			if op := b.Op(i); op != exec.Insert {
				return fmt.Errorf("filesystem table %s is append-only but received a %s row", s.spec.Table, op)
			}
		}
	}
	if s.broken != nil {
		return s.broken
	}
	if err := s.start(); err != nil {
		return err
	}
	if len(s.pcols) == 0 {
		p, err := s.part(nil)
		if err != nil {
			return err
		}
		buf := s.buf[:0]
		if s.chg != nil {
			for i := 0; i < b.Len(); i++ {
				buf = s.chg.AppendChange(buf, b.Rec, i, b.Op(i))
			}
		} else {
			for i := 0; i < b.Len(); i++ {
				buf = s.enc.AppendRow(buf, b.Rec, i)
			}
		}
		s.buf = buf
		if _, err := p.w.Write(buf); err != nil {
			return s.errorf("%w", err)
		}
		p.size += int64(len(buf))
		return s.roll()
	}
	// Partitioned: the files hold the data columns; each row goes to its
	// partition's file.
	cols := make([]arrow.Array, len(s.dcols))
	for j, c := range s.dcols {
		cols[j] = b.Rec.Column(c)
	}
	data := array.NewRecordBatch(s.dataSch, cols, b.Rec.NumRows())
	defer data.Release()
	for i := 0; i < b.Len(); i++ {
		s.pkey = s.partitionDir(s.pkey[:0], b, i)
		p, err := s.part(s.pkey)
		if err != nil {
			return err
		}
		s.buf = s.enc.AppendRow(s.buf[:0], data, i)
		if _, err := p.w.Write(s.buf); err != nil {
			return s.errorf("%w", err)
		}
		p.size += int64(len(s.buf))
	}
	return s.roll()
}

// roll seals the in-progress files the rolling policy says are done: they
// are committed with the next checkpoint, and the partition's next row
// starts a new file.
func (s *sink) roll() error {
	if s.cfg.rollInterval == 0 && s.cfg.rollSize == 0 {
		return nil
	}
	now := time.Now()
	for _, dir := range s.order {
		p := s.parts[dir]
		if (s.cfg.rollSize > 0 && p.size >= s.cfg.rollSize) || (s.cfg.rollInterval > 0 && now.Sub(p.opened) >= s.cfg.rollInterval) {
			if err := s.seal(dir, rolled); err != nil {
				return err
			}
		}
	}
	s.compact()
	return nil
}

// compact drops the sealed partitions from order.
func (s *sink) compact() {
	kept := s.order[:0]
	for _, d := range s.order {
		if _, ok := s.parts[d]; ok {
			kept = append(kept, d)
		}
	}
	s.order = kept
}

// Watermark records the watermark the sink's input reached (it implements
// exec.WatermarkSink): the partitions it has passed are committed with the
// next checkpoint.
func (s *sink) Watermark(wm int64) { s.wm = max(s.wm, wm) }

// seal makes the in-progress file of partition dir durable and closes it:
// it is pending, to be committed with the rows of checkpoint id.
func (s *sink) seal(dir string, id int64) error {
	p := s.parts[dir]
	delete(s.parts, dir)
	err := p.w.Flush()
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.SyncDir(filepath.Join(s.cfg.path, dir)) // the file's directory entry
	}
	if err != nil {
		s.fs.Remove(filepath.Join(s.cfg.path, p.hidden))
		s.broken = s.errorf("making %s durable: %w (its rows are gone: the sink fails, and a job restored from its last checkpoint writes them again)", p.hidden, err)
		return s.broken
	}
	s.pending = append(s.pending, pendingFile{fileHandle{Pending: p.hidden, Final: p.final}, id})
	return nil
}

// PreCommit flushes, syncs and closes the in-progress file, which becomes
// pending; the next row starts a new one. The handle lists every file this
// instance pre-committed and has not committed (those of an earlier
// checkpoint that has not completed yet, or never will, included: their
// rows precede this checkpoint's barrier too). It is nil when there is no
// such file: an empty checkpoint writes nothing.
func (s *sink) PreCommit(_ context.Context, id int64) ([]byte, error) {
	if s.broken != nil {
		return nil, s.broken
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	for _, dir := range s.order {
		if err := s.seal(dir, id); err != nil {
			return nil, err
		}
	}
	s.order = s.order[:0]
	for i := range s.pending {
		if s.pending[i].checkpoint == rolled {
			s.pending[i].checkpoint = id
		}
	}
	if s.cfg.commit {
		s.wmAt[id] = s.wm
	}
	if len(s.pending) == 0 {
		return nil, nil
	}
	h := handle{Files: make([]fileHandle, len(s.pending))}
	for i, p := range s.pending {
		h.Files[i] = p.fileHandle
	}
	return statecodec.EncodeJSON(handleVersion, h)
}

// Commit renames the pending files of the handle, and those this instance
// pre-committed at checkpoint id or before, to their final names, and
// syncs the directory. It is idempotent: a file whose pending name is gone
// and whose final name exists is already committed. A file with neither
// name is an error (its rows are lost: deleted by hand, or by a sink that
// started writing before the restored handle was committed), and so is a
// final name taken by another file. Commit may be called before Open.
func (s *sink) Commit(_ context.Context, id int64, h []byte) error {
	var files []fileHandle
	if len(h) > 0 {
		hd, err := decodeHandle(s.spec.Table, h)
		if err != nil {
			return fmt.Errorf("commit handle of checkpoint %d: %w", id, err)
		}
		for _, f := range hd.Files {
			if !validRel(f.Pending) || !strings.HasPrefix(filepath.Base(f.Pending), ".") || !validRel(f.Final) || strings.HasPrefix(filepath.Base(f.Final), ".") || strings.HasPrefix(filepath.Base(f.Final), "_") ||
				filepath.Dir(f.Pending) != filepath.Dir(f.Final) {
				return s.errorf("bad commit handle of checkpoint %d: file names %q, %q", id, f.Pending, f.Final)
			}
		}
		files = hd.Files
	}
	for _, p := range s.pending {
		if p.checkpoint <= id && !containsPending(files, p.Pending) {
			files = append(files, p.fileHandle)
		}
	}
	synced := map[string]bool{}
	for _, f := range files {
		did, err := s.commitFile(f)
		if err != nil {
			return s.errorf("committing checkpoint %d: %w", id, err)
		}
		if dir := filepath.Dir(f.Final); did && !synced[dir] {
			synced[dir] = true
			if err := s.fs.SyncDir(filepath.Join(s.cfg.path, dir)); err != nil {
				return s.errorf("committing checkpoint %d: %w", id, err)
			}
		}
	}
	kept := s.pending[:0]
	for _, p := range s.pending {
		if !containsPending(files, p.Pending) {
			kept = append(kept, p)
		}
	}
	s.pending = kept
	// The partitions the watermark of this checkpoint passed.
	if wm, ok := s.wmAt[id]; ok || id == math.MaxInt64 {
		if id == math.MaxInt64 {
			wm = maxWatermark
		}
		for c := range s.wmAt {
			if c <= id {
				delete(s.wmAt, c)
			}
		}
		return s.commitPartitions(wm)
	}
	return nil
}

// commitFile renames f's pending file to its final name, and reports
// whether it did (false: committed before).
func (s *sink) commitFile(f fileHandle) (bool, error) {
	pending, final := filepath.Join(s.cfg.path, f.Pending), filepath.Join(s.cfg.path, f.Final)
	_, perr := os.Lstat(pending)
	_, ferr := os.Lstat(final)
	switch {
	case perr == nil && ferr == nil:
		return false, fmt.Errorf("%s exists: will not replace it with %s (is another job writing to %s?)", final, pending, s.cfg.path)
	case perr == nil:
		if err := s.fs.Rename(pending, final); err != nil {
			return false, err
		}
		return true, nil
	case !errors.Is(perr, fs.ErrNotExist):
		return false, perr
	case ferr == nil:
		return false, nil // committed already
	case errors.Is(ferr, fs.ErrNotExist):
		return false, fmt.Errorf("neither the pending file %s nor its final name %s exists", pending, final)
	default:
		return false, ferr
	}
}

// Finish pre-commits the in-progress file and commits every file this
// instance pre-committed, whether or not its checkpoint completed (the
// input has ended: all rows are final).
func (s *sink) Finish(ctx context.Context) error {
	if s.broken != nil {
		return s.broken
	}
	if err := s.start(); err != nil {
		return err
	}
	for _, dir := range s.order {
		if err := s.seal(dir, math.MaxInt64); err != nil {
			return err
		}
	}
	s.order = s.order[:0]
	return s.Commit(ctx, math.MaxInt64, nil)
}

// Close deletes the in-progress file, if any: its rows were not
// pre-committed, and a restored job writes them again. Pending files stay
// for a restored job to commit (or delete).
func (s *sink) Close() error {
	for dir, p := range s.parts {
		delete(s.parts, dir)
		p.f.Close()
		s.fs.Remove(filepath.Join(s.cfg.path, p.hidden))
	}
	s.order = s.order[:0]
	return nil
}

// validRel reports whether name is a file name, or a relative path of
// file names (a part file under its partition directories).
func validRel(name string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(name), "/") {
		if !validName(seg) {
			return false
		}
	}
	return true
}

func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && filepath.Base(name) == name
}

func containsPending(files []fileHandle, pending string) bool {
	for _, f := range files {
		if f.Pending == pending {
			return true
		}
	}
	return false
}
