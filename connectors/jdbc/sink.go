package jdbc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/exec"
)

// Sink is one subtask of a jdbc sink. The package documentation describes
// the statements, the buffer and the delivery guarantees.
type Sink struct {
	cfg  *config
	spec exec.TableSpec

	// The buffer: one column buffer per column, a slot per row (per key
	// with a primary key: the key's last change).
	cols   []column
	keyIdx []int          // the primary key's columns (nil: none)
	slots  map[string]int // key -> slot
	upsert []bool         // per slot: an upsert (true) or a delete
	keyBuf []byte
	oldest time.Time // when the oldest buffered row came

	// The statements, built once.
	insertSQL, deleteSQL string

	// mu guards the buffer and conn against the flusher of
	// 'sink.buffer-flush.interval' (at-least-once).
	mu      sync.Mutex
	conn    *pgx.Conn
	bgErr   error // the flusher's first error
	stop    chan struct{}
	stopped chan struct{}

	tx // exactly-once
}

func newSink(spec exec.TableSpec) (exec.Sink, error) {
	c, err := parse(spec.Options, spec.Schema, spec.PrimaryKey)
	if err != nil {
		return nil, fmt.Errorf("jdbc table %s: %w", spec.Table, err)
	}
	s := &Sink{cfg: c, spec: spec, slots: map[string]int{}}
	var names, casts []string
	for i, col := range spec.Schema {
		b, _ := newColumn(col.Type)
		s.cols = append(s.cols, b)
		names = append(names, ident(col.Name))
		casts = append(casts, fmt.Sprintf("$%d::%s[]", i+1, b.elem()))
	}
	s.insertSQL = fmt.Sprintf("INSERT INTO %s (%s) SELECT * FROM unnest(%s)", c.table, strings.Join(names, ", "), strings.Join(casts, ", "))
	if len(spec.PrimaryKey) > 0 {
		var keys, keyCasts, sets []string
		for _, k := range spec.PrimaryKey {
			i := spec.Schema.Index(k)
			s.keyIdx = append(s.keyIdx, i)
			keys = append(keys, ident(spec.Schema[i].Name))
			keyCasts = append(keyCasts, fmt.Sprintf("$%d::%s[]", len(keyCasts)+1, s.cols[i].elem()))
		}
		for i, col := range spec.Schema {
			if !contains(s.keyIdx, i) {
				sets = append(sets, fmt.Sprintf("%s = EXCLUDED.%s", ident(col.Name), ident(col.Name)))
			}
		}
		s.insertSQL += " ON CONFLICT (" + strings.Join(keys, ", ") + ") DO "
		if len(sets) == 0 {
			s.insertSQL += "NOTHING"
		} else {
			s.insertSQL += "UPDATE SET " + strings.Join(sets, ", ")
		}
		s.deleteSQL = fmt.Sprintf("DELETE FROM %s WHERE (%s) IN (SELECT * FROM unnest(%s))", c.table, strings.Join(keys, ", "), strings.Join(keyCasts, ", "))
	}
	if c.exactly {
		if err := s.tx.init(spec); err != nil {
			return nil, fmt.Errorf("jdbc table %s: %w", spec.Table, err)
		}
	}
	return s, nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("jdbc table %s: %s", s.spec.Table, fmt.Sprintf(format, args...))
}

// serverError names the PostgreSQL table and what the server said.
func (s *Sink) serverError(what string, err error) error {
	return s.errorf("%s PostgreSQL table %s (%s): %v", what, s.cfg.tableName, s.cfg.url, err)
}

// connect opens a connection to the server.
func (s *Sink) connect(ctx context.Context) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(s.cfg.connString)
	if err != nil {
		return nil, s.errorf("'%s': %v", OptURL, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, s.errorf("connecting to %s: %v", s.cfg.url, err)
	}
	return conn, nil
}

// Open connects and prepares the statements, so that a table or column
// the server does not have fails the job at its start; exactly-once also
// checks that the server can prepare transactions.
func (s *Sink) Open(ctx context.Context) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	s.conn = conn
	if _, err := conn.Prepare(ctx, "", s.insertSQL); err != nil {
		return s.serverError("preparing the writes to", err)
	}
	if s.deleteSQL != "" {
		if _, err := conn.Prepare(ctx, "", s.deleteSQL); err != nil {
			return s.serverError("preparing the deletes from", err)
		}
	}
	if s.cfg.exactly {
		return s.tx.open(ctx, s)
	}
	if s.cfg.interval > 0 {
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go s.flusher(s.cfg.interval)
	}
	return nil
}

// flusher flushes the buffer once its oldest row is interval old.
func (s *Sink) flusher(interval time.Duration) {
	defer close(s.stopped)
	tick := time.NewTicker(max(interval/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		if s.bgErr == nil && len(s.upsert) > 0 && time.Since(s.oldest) >= interval {
			s.bgErr = s.flush(context.Background())
		}
		s.mu.Unlock()
	}
}

// Write buffers the rows of b (with a primary key, the last change of
// each key: a -U row changes nothing, the +U or -D that follows does) and
// writes the buffer once it holds 'sink.buffer-flush.max-rows' rows.
func (s *Sink) Write(ctx context.Context, b exec.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if s.bgErr != nil {
		return s.bgErr
	}
	rec := b.Rec
	for i := range b.Len() {
		op := b.Op(i)
		if s.keyIdx == nil {
			if op != exec.Insert {
				return s.errorf("a %s row came to a table without a PRIMARY KEY, which only takes inserts", op)
			}
			s.addRow(rec, i, true)
			continue
		}
		if op == exec.UpdateBefore {
			continue
		}
		s.keyBuf = s.keyBuf[:0]
		for _, k := range s.keyIdx {
			s.keyBuf = s.cols[k].key(s.keyBuf, rec.Column(k), i)
		}
		if slot, ok := s.slots[string(s.keyBuf)]; ok {
			for c, col := range s.cols {
				col.set(slot, rec.Column(c), i)
			}
			s.upsert[slot] = op != exec.Delete
			continue
		}
		s.slots[string(s.keyBuf)] = len(s.upsert)
		s.addRow(rec, i, op != exec.Delete)
	}
	if s.cfg.maxRows > 0 && len(s.upsert) >= s.cfg.maxRows {
		if s.cfg.exactly {
			return s.tx.write(ctx, s, false)
		}
		return s.flush(ctx)
	}
	return nil
}

func (s *Sink) addRow(rec arrow.RecordBatch, i int, upsert bool) {
	if len(s.upsert) == 0 {
		s.oldest = time.Now()
	}
	for c, col := range s.cols {
		col.add(rec.Column(c), i)
	}
	s.upsert = append(s.upsert, upsert)
}

// resetBuffer empties the buffer.
func (s *Sink) resetBuffer() {
	for _, c := range s.cols {
		c.reset()
	}
	clear(s.slots)
	s.upsert = s.upsert[:0]
}

// writeBuffer runs the buffer's statements on q (a connection in a
// transaction): the deletes, then the inserts or upserts (one change per
// key: their order does not matter).
func (s *Sink) writeBuffer(ctx context.Context, q *pgx.Conn) error {
	var ins, del []int
	for slot, up := range s.upsert {
		if up {
			ins = append(ins, slot)
		} else {
			del = append(del, slot)
		}
	}
	if len(del) > 0 {
		args := make([]any, len(s.keyIdx))
		for j, k := range s.keyIdx {
			args[j] = s.cols[k].array(del)
		}
		if _, err := q.Exec(ctx, s.deleteSQL, args...); err != nil {
			return err
		}
	}
	if len(ins) > 0 {
		if len(del) == 0 {
			ins = nil // every slot
		}
		args := make([]any, len(s.cols))
		for c, col := range s.cols {
			args[c] = col.array(ins)
		}
		if _, err := q.Exec(ctx, s.insertSQL, args...); err != nil {
			return err
		}
	}
	return nil
}

// flush writes the buffer in one transaction (at-least-once), retrying
// up to 'sink.max-retries' times a failure that is not the server
// refusing the rows, on a new connection if the old one broke.
func (s *Sink) flush(ctx context.Context) error {
	if len(s.upsert) == 0 {
		return nil
	}
	var err error
	for attempt := 0; ; attempt++ {
		if s.conn == nil || s.conn.IsClosed() {
			s.conn, err = s.connect(ctx)
		}
		if err == nil {
			err = s.writeTx(ctx)
		}
		if err == nil {
			s.resetBuffer()
			return nil
		}
		if attempt >= s.cfg.maxRetries || refused(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(time.Duration(attempt+1) * time.Second): // Flink's backoff
		case <-ctx.Done():
		}
	}
	return s.serverError(fmt.Sprintf("writing %d rows to", len(s.upsert)), err)
}

func (s *Sink) writeTx(ctx context.Context) error {
	if _, err := s.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if err := s.writeBuffer(ctx, s.conn); err != nil {
		if !s.conn.IsClosed() {
			s.conn.Exec(ctx, "ROLLBACK")
		}
		return err
	}
	_, err := s.conn.Exec(ctx, "COMMIT")
	return err
}

// refused says whether err is the server refusing the statement itself
// (bad data, a constraint, a missing column): retrying cannot help. A
// serialization failure or deadlock (class 40) and a lost connection can.
func refused(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return !strings.HasPrefix(pe.Code, "40") && !strings.HasPrefix(pe.Code, "08") && !strings.HasPrefix(pe.Code, "57")
	}
	return false
}

// PreCommit writes the buffer: at-least-once, committed; exactly-once,
// into the checkpoint's transaction, which it prepares (tx.preCommit).
func (s *Sink) PreCommit(ctx context.Context, checkpointID int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if s.cfg.exactly {
		return s.tx.preCommit(ctx, s, checkpointID)
	}
	if s.bgErr != nil {
		return nil, s.bgErr
	}
	return nil, s.flush(ctx)
}

// CommitBeforeNextPreCommit implements exec.OrderedCommitter: exactly
// once, the runtime holds a barrier until the checkpoints before it are
// committed or aborted, whose prepared transactions the barrier's writes
// could otherwise wait for.
func (s *Sink) CommitBeforeNextPreCommit() bool { return s.cfg.exactly }

// Commit commits the prepared transactions of a handle (exactly-once);
// at-least-once has nothing to commit.
func (s *Sink) Commit(ctx context.Context, checkpointID int64, handle []byte) error {
	if !s.cfg.exactly || len(handle) == 0 {
		return nil
	}
	return s.tx.commit(ctx, s, checkpointID, handle)
}

// Finish writes and commits everything at the end of a bounded input.
func (s *Sink) Finish(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if s.cfg.exactly {
		return s.tx.finish(ctx, s)
	}
	if s.bgErr != nil {
		return s.bgErr
	}
	return s.flush(ctx)
}

// Close stops the flusher and closes the connections: rows not yet
// written are in no checkpoint (a restore reads them again); an open
// transaction is rolled back by the server, prepared ones stay for a
// restored job to commit or roll back.
func (s *Sink) Close() error {
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
		s.stop = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.conn != nil {
		s.conn.Close(ctx)
		s.conn = nil
	}
	s.tx.close(ctx)
	return nil
}
