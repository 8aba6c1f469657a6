package jdbc

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/failpoint"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// wal is the write-ahead side of a sink subtask ('sink.exactly-once.mode'
// = 'write-ahead', Flink's GenericWriteAheadSink): the rows since the last
// barrier go, as they come, into a file of Arrow IPC record batches (the
// batch's columns and its row kinds) in the subtask's working directory;
// at the barrier the file is closed, synced and linked into the
// subtask's directory of the checkpoint (exec.FileCheckpointingSink), with
// the files of the checkpoints before it whose rows are not written yet;
// when the checkpoint completes, each file's rows are written to the table
// in one transaction with the row (job, operator, subtask, checkpoint) of
// the commit table, which a restore reads to skip what was written.
type wal struct {
	job, operator string
	subtask, par  int
	root          string // the sink's working directory (its subtasks' under it)
	dir           string // this subtask's
	tmpRoot       bool   // root is a temporary directory of this instance

	// The file of the rows since the last barrier (nil: none yet).
	f      *os.File
	bw     *bufio.Writer
	w      *ipc.Writer
	schema *arrow.Schema // the batches' columns and the row kind
	rows   int64
	kinds  *array.Uint8Builder

	pending []walEntry // pre-committed, not written to the table, oldest first
	done    map[walKey]bool
	// dirs are the restored checkpoint's directories of the old subtasks
	// whose handles this one commits (RestoreFiles).
	dirs map[int]string
	// run is this instance's random id: with the subtask and checkpoint,
	// the key of its rows of the commit table, so that a later run whose
	// checkpoint ids start again (a new checkpoint directory) never takes
	// its checkpoints for written ones.
	run string
}

type walKey struct {
	subtask    int
	checkpoint int64
	run        string
}

// walEntry is one checkpoint's rows of one subtask: the file, in the
// subtask's directory of the checkpoint (and of each later one until the
// rows are written), and how many rows it holds.
type walEntry struct {
	Subtask    int    `json:"subtask"`
	Checkpoint int64  `json:"checkpoint"`
	Run        string `json:"run"`
	File       string `json:"file"`
	Rows       int64  `json:"rows"`
}

// walHandle is what PreCommitFiles returns and Commit takes: the
// subtask's checkpoints whose rows are not written yet, oldest first
// (their files are in the subtask's directory of the checkpoint). JSON
// after the header of walHandleVersion; versions: 1, the fields below.
type walHandle struct {
	Job      string     `json:"job"`
	Operator string     `json:"operator"`
	Subtask  int        `json:"subtask"`
	Pending  []walEntry `json:"pending,omitempty"`
}

const (
	minWALHandleVersion = 1
	walHandleVersion    = 1
	// walKindColumn is the column of the row kinds in a file.
	walKindColumn = "$row_kind"
)

func (w *wal) init(spec exec.TableSpec, c *config) error {
	if spec.Job == "" && spec.OperatorID == "" {
		return errors.New("the job has no name to record its checkpoints in the commit table under")
	}
	if spec.CheckpointInterval > 0 && !spec.ExactlyOnce {
		return fmt.Errorf("'%s' = '%s' needs exactly-once checkpoints: with 'execution.checkpointing.mode' = 'AT_LEAST_ONCE' a checkpoint's rows may hold rows after its barrier, which a restore reads again",
			OptExactlyOnceMode, WriteAhead)
	}
	if c.maxRows == 0 {
		return fmt.Errorf("'%s' = '0' (no limit) does not fit '%s' = '%s': a checkpoint's rows are written in statements of at most that many rows, and without a limit one statement would hold them all in memory",
			OptFlushMaxRows, OptExactlyOnceMode, WriteAhead)
	}
	w.job, w.operator = spec.Job, spec.OperatorID
	w.subtask, w.par = spec.Subtask, max(spec.Parallelism, 1)
	w.done = map[walKey]bool{}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	w.run = hex.EncodeToString(r[:])
	if spec.DataDir != "" {
		w.root = filepath.Join(spec.DataDir, "jdbc-wal", url.PathEscape(w.job)+"-"+url.PathEscape(w.operator))
	}
	return nil
}

// open creates the commit table if it is absent and empties the working
// directories of the old subtasks this one takes over (subtask mod
// parallelism): rows there are of checkpoints that did not complete (those
// of completed ones are in the checkpoint).
func (w *wal) open(ctx context.Context, s *Sink) error {
	ddl := "CREATE TABLE IF NOT EXISTS " + s.cfg.commitTable + " (job text NOT NULL, operator text NOT NULL, subtask integer NOT NULL, " +
		"checkpoint_id bigint NOT NULL, run text NOT NULL, committed_at timestamptz NOT NULL DEFAULT now(), " +
		"PRIMARY KEY (job, operator, subtask, checkpoint_id, run))"
	for attempt := 0; ; attempt++ {
		_, err := s.conn.Exec(ctx, ddl)
		var pe *pgconn.PgError
		// Two subtasks creating it at once: one of them fails on the
		// catalog's unique index; the table is then there.
		if err != nil && attempt == 0 && errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
			continue
		}
		if err != nil {
			return s.errorf("creating the commit table %s of '%s' = '%s' on %s: %v", s.cfg.commitTableName, OptExactlyOnceMode, WriteAhead, s.cfg.url, err)
		}
		break
	}
	if w.root == "" {
		d, err := os.MkdirTemp("", "streamsql-jdbc-wal-")
		if err != nil {
			return s.errorf("making the working directory of the write-ahead log: %v", err)
		}
		w.root, w.tmpRoot = d, true
	}
	ents, err := os.ReadDir(w.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.errorf("reading the working directory of the write-ahead log: %v", err)
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 && n%w.par == w.subtask {
			if err := os.RemoveAll(filepath.Join(w.root, e.Name())); err != nil {
				return s.errorf("emptying the working directory of the write-ahead log: %v", err)
			}
		}
	}
	w.dir = filepath.Join(w.root, strconv.Itoa(w.subtask))
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return s.errorf("making the working directory of the write-ahead log: %v", err)
	}
	return nil
}

// append writes the rows of b (and their kinds) to the file of the
// current checkpoint.
func (w *wal) append(ctx context.Context, s *Sink, b exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if w.kinds == nil {
		w.kinds = array.NewUint8Builder(memory.DefaultAllocator)
	}
	rec := b.Rec
	if w.schema == nil {
		fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), arrow.Field{Name: walKindColumn, Type: arrow.PrimitiveTypes.Uint8})
		w.schema = arrow.NewSchema(fields, nil)
	}
	if int(rec.NumCols())+1 != w.schema.NumFields() {
		return s.errorf("a batch of %d columns came to a sink of %d", rec.NumCols(), w.schema.NumFields()-1)
	}
	for i := range int(rec.NumCols()) {
		if !arrow.TypeEqual(rec.Column(i).DataType(), w.schema.Field(i).Type) {
			return s.errorf("column %d of a batch is %s, the sink's is %s", i, rec.Column(i).DataType(), w.schema.Field(i).Type)
		}
	}
	if w.f == nil {
		name := fmt.Sprintf("rows-%d.arrow", time.Now().UnixNano())
		f, err := os.Create(filepath.Join(w.dir, name))
		if err != nil {
			return s.errorf("writing the write-ahead log: %v", err)
		}
		w.f, w.bw = f, bufio.NewWriterSize(f, 1<<20)
		w.w = ipc.NewWriter(w.bw, ipc.WithSchema(w.schema))
	}
	w.kinds.Reserve(b.Len())
	if b.Ops == nil {
		for range b.Len() {
			w.kinds.UnsafeAppend(uint8(exec.Insert))
		}
	} else {
		for _, k := range b.Ops {
			w.kinds.UnsafeAppend(uint8(k))
		}
	}
	kinds := w.kinds.NewArray()
	defer kinds.Release()
	cols := append(append(make([]arrow.Array, 0, rec.NumCols()+1), rec.Columns()...), kinds)
	r := array.NewRecordBatch(w.schema, cols, rec.NumRows())
	defer r.Release()
	if err := w.w.Write(r); err != nil {
		return s.errorf("writing the write-ahead log %s: %v", w.f.Name(), err)
	}
	w.rows += rec.NumRows()
	return nil
}

// seal closes the file of the rows since the last barrier, synced, as the
// entry of checkpoint id (no entry when no row came).
func (w *wal) seal(s *Sink, id int64) error {
	if w.f == nil {
		return nil
	}
	f := w.f
	w.f = nil
	err := w.w.Close()
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.errorf("closing the write-ahead log %s: %v", f.Name(), err)
	}
	name := fmt.Sprintf("rows-%d-%d.arrow", w.subtask, id)
	if err := os.Rename(f.Name(), filepath.Join(w.dir, name)); err != nil {
		return s.errorf("naming the write-ahead log of checkpoint %d: %v", id, err)
	}
	w.pending = append(w.pending, walEntry{Subtask: w.subtask, Checkpoint: id, Run: w.run, File: name, Rows: w.rows})
	w.rows = 0
	return nil
}

// preCommit seals the rows since the last barrier as checkpoint id's and
// puts the file of every checkpoint not written yet into dir, the
// subtask's directory of the checkpoint (a hard link, or a copy where the
// working directory is on another file system).
func (w *wal) preCommit(ctx context.Context, s *Sink, id int64, dir string) ([]byte, error) {
	if err := w.seal(s, id); err != nil {
		return nil, err
	}
	if len(w.pending) > 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, s.errorf("checkpoint %d: %v", id, err)
		}
		for _, e := range w.pending {
			if err := linkOrCopy(filepath.Join(w.dir, e.File), filepath.Join(dir, e.File)); err != nil {
				return nil, s.errorf("putting the rows of checkpoint %d into checkpoint %d: %v", e.Checkpoint, id, err)
			}
		}
		if err := fsutil.SyncDir(dir); err != nil {
			return nil, s.errorf("checkpoint %d: %v", id, err)
		}
	}
	return statecodec.EncodeJSON(walHandleVersion, walHandle{Job: w.job, Operator: w.operator, Subtask: w.subtask, Pending: w.pending})
}

// linkOrCopy makes to a hard link of from, or a synced copy.
func linkOrCopy(from, to string) error {
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// commit writes the rows of every checkpoint of a handle not written yet,
// oldest first, each in one transaction with its row of the commit table.
func (w *wal) commit(ctx context.Context, s *Sink, checkpointID int64, hb []byte) error {
	var h walHandle
	if _, err := statecodec.DecodeJSON(hb, "jdbc table "+s.spec.Table+" (write-ahead sink)", minWALHandleVersion, walHandleVersion, &h); err != nil {
		return fmt.Errorf("commit handle of checkpoint %d: %w", checkpointID, err)
	}
	if h.Job != w.job || h.Operator != w.operator {
		return s.errorf("the commit handle of checkpoint %d is of job %q, operator %s, not of this sink (job %q, operator %s)",
			checkpointID, h.Job, h.Operator, w.job, w.operator)
	}
	low := int64(-1) // the commit table's rows below it are no longer needed
	for _, e := range h.Pending {
		if low < 0 || e.Checkpoint < low {
			low = e.Checkpoint
		}
	}
	for _, e := range h.Pending {
		if w.done[walKey{e.Subtask, e.Checkpoint, e.Run}] {
			continue
		}
		if err := w.writeEntry(ctx, s, e, true, low); err != nil {
			return err
		}
		w.forget(e)
	}
	return nil
}

// forget drops e from the pending checkpoints once its rows are written.
func (w *wal) forget(e walEntry) {
	for i, p := range w.pending {
		if p.Subtask == e.Subtask && p.Checkpoint == e.Checkpoint && p.Run == e.Run {
			w.pending = append(w.pending[:i], w.pending[i+1:]...)
			if e.Subtask == w.subtask {
				os.Remove(filepath.Join(w.dir, e.File))
			}
			break
		}
	}
	if len(w.done) >= 4096 {
		clear(w.done)
	}
	w.done[walKey{e.Subtask, e.Checkpoint, e.Run}] = true
}

// path is where the file of e is: in the working directory while this
// instance has it pending, else in the restored checkpoint.
func (w *wal) path(e walEntry) (string, error) {
	for _, p := range w.pending {
		if p.Subtask == e.Subtask && p.Checkpoint == e.Checkpoint && p.Run == e.Run {
			return filepath.Join(w.dir, e.File), nil
		}
	}
	if d, ok := w.dirs[e.Subtask]; ok {
		return filepath.Join(d, e.File), nil
	}
	return "", fmt.Errorf("the restored checkpoint has no directory of subtask %d, whose rows of checkpoint %d (%s) it lists", e.Subtask, e.Checkpoint, e.File)
}

// writeEntry writes the rows of e in one transaction: with its row of the
// commit table (record), unless that row is there already (the rows were
// written before: skip them); the rows of the commit table of e's subtask
// below low are deleted in the same transaction. A lost connection or a
// serialization failure is retried up to 'sink.max-retries' times.
func (w *wal) writeEntry(ctx context.Context, s *Sink, e walEntry, record bool, low int64) error {
	var err error
	for attempt := 0; ; attempt++ {
		if s.conn == nil || s.conn.IsClosed() {
			s.conn, err = s.connect(ctx)
		}
		if err == nil {
			err = w.writeTx(ctx, s, e, record, low)
		}
		if err == nil {
			return nil
		}
		s.resetBuffer()
		lost := s.conn == nil || s.conn.IsClosed()
		if !lost {
			s.conn.Exec(ctx, "ROLLBACK")
		}
		var pe *pgconn.PgError
		retry := lost || errors.As(err, &pe) && !refused(err)
		if attempt >= s.cfg.maxRetries || !retry || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(time.Duration(attempt+1) * time.Second):
		case <-ctx.Done():
		}
	}
	what := fmt.Sprintf("writing the %d rows of checkpoint %d (subtask %d) to", e.Rows, e.Checkpoint, e.Subtask)
	if !record {
		what = fmt.Sprintf("writing the last %d rows to", e.Rows)
	}
	return s.serverError(what, err)
}

func (w *wal) writeTx(ctx context.Context, s *Sink, e walEntry, record bool, low int64) error {
	prune := e.Run == w.run && low >= 0
	failpoint.Hit(failpoint.WALBeforeWrite)
	if _, err := s.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if record {
		var n int
		err := s.conn.QueryRow(ctx, "SELECT count(*) FROM "+s.cfg.commitTable+" WHERE job = $1 AND operator = $2 AND subtask = $3 AND checkpoint_id = $4 AND run = $5",
			w.job, w.operator, e.Subtask, e.Checkpoint, e.Run).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			_, err := s.conn.Exec(ctx, "ROLLBACK")
			return err
		}
	}
	path, err := w.path(e)
	if err != nil {
		return err
	}
	if err := w.replay(ctx, s, path); err != nil {
		return err
	}
	failpoint.Hit(failpoint.WALAfterWrite)
	if record {
		if _, err := s.conn.Exec(ctx, "INSERT INTO "+s.cfg.commitTable+" (job, operator, subtask, checkpoint_id, run) VALUES ($1, $2, $3, $4, $5)",
			w.job, w.operator, e.Subtask, e.Checkpoint, e.Run); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" { // written meanwhile by another instance
				_, err = s.conn.Exec(ctx, "ROLLBACK")
				return err
			}
			return err
		}
		if prune {
			if _, err := s.conn.Exec(ctx, "DELETE FROM "+s.cfg.commitTable+" WHERE job = $1 AND operator = $2 AND subtask % $3 = $4 AND (run <> $5 OR checkpoint_id < $6)",
				w.job, w.operator, w.par, w.subtask, w.run, low); err != nil {
				return err
			}
		}
	}
	failpoint.Hit(failpoint.WALBeforeCommit)
	if _, err := s.conn.Exec(ctx, "COMMIT"); err != nil {
		return err
	}
	failpoint.Hit(failpoint.WALAfterCommit)
	return nil
}

// replay writes the rows of the file at path on the connection (in a
// transaction), through the buffer: statements of at most
// 'sink.buffer-flush.max-rows' rows (one change per key each), in order.
func (w *wal) replay(ctx context.Context, s *Sink, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("the rows of a completed checkpoint: %w", err)
	}
	defer f.Close()
	r, err := ipc.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer r.Release()
	var kinds []exec.RowKind
	for r.Next() {
		rec := r.RecordBatch()
		n := int(rec.NumCols()) - 1
		ka, ok := rec.Column(n).(*array.Uint8)
		if n != len(s.cols) || !ok || rec.Schema().Field(n).Name != walKindColumn {
			return fmt.Errorf("%s is not a write-ahead log of this table (%d columns)", path, rec.NumCols())
		}
		for i, col := range s.spec.Schema {
			if got, want := rec.Column(i).DataType(), col.Type.ArrowType(); got.ID() != want.ID() {
				return fmt.Errorf("%s holds column %s as %s, but the table's column is %s (%s): was the table changed between the checkpoint and the restore?",
					path, col.Name, got, col.Type, want)
			}
		}
		kinds = kinds[:0]
		for _, k := range ka.Uint8Values() {
			if exec.RowKind(k) > exec.Delete {
				return fmt.Errorf("%s: row kind %d", path, k)
			}
			kinds = append(kinds, exec.RowKind(k))
		}
		fields := rec.Schema().Fields()[:n]
		data := array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns()[:n], rec.NumRows())
		err := s.buffer(exec.Batch{Rec: data, Ops: kinds})
		data.Release()
		if err != nil {
			return err
		}
		if len(s.upsert) >= s.cfg.maxRows {
			if err := s.writeBuffer(ctx, s.conn); err != nil {
				return err
			}
			s.resetBuffer()
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := s.writeBuffer(ctx, s.conn); err != nil {
		return err
	}
	s.resetBuffer()
	return nil
}

// restoreFiles keeps the restored checkpoint's directories of the old
// subtasks whose handles this subtask commits.
func (w *wal) restoreFiles(dirs map[int]string) {
	w.dirs = dirs
}

// finish writes, at the end of a bounded input, the rows of the
// checkpoints not written yet, then those since the last barrier (in one
// transaction without a row of the commit table: they are of no
// checkpoint).
func (w *wal) finish(ctx context.Context, s *Sink) error {
	for len(w.pending) > 0 {
		e := w.pending[0]
		if err := w.writeEntry(ctx, s, e, true, -1); err != nil {
			return err
		}
		w.forget(e)
	}
	if w.f == nil {
		return nil
	}
	if err := w.seal(s, -1); err != nil {
		return err
	}
	e := w.pending[0]
	if err := w.writeEntry(ctx, s, e, false, -1); err != nil {
		return err
	}
	w.forget(e)
	return nil
}

func (w *wal) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	if w.kinds != nil {
		w.kinds.Release()
		w.kinds = nil
	}
	if w.tmpRoot {
		os.RemoveAll(w.root)
	}
}

// PreCommitFiles implements exec.FileCheckpointingSink: in write-ahead
// mode, the rows since the last barrier (and those of checkpoints not yet
// written) go into dir; the other modes pre-commit as PreCommit does and
// write no file.
func (s *Sink) PreCommitFiles(ctx context.Context, checkpointID int64, dir string) ([]byte, error) {
	if !s.cfg.writeAhead {
		return s.PreCommit(ctx, checkpointID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wal.preCommit(ctx, s, checkpointID, dir)
}

// RestoreFiles implements exec.FileCheckpointingSink.
func (s *Sink) RestoreFiles(dirs map[int]string) error {
	s.wal.restoreFiles(dirs)
	return nil
}

var _ exec.FileCheckpointingSink = (*Sink)(nil)
