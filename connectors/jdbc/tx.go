package jdbc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// maxGIDLen is PostgreSQL's limit on a prepared transaction's identifier
// (GIDSIZE less its terminating zero).
const maxGIDLen = 199

// lockTimeout bounds how long the transaction of a checkpoint waits for
// rows that a prepared transaction of an earlier checkpoint, which did
// not complete, still holds (see write). Tests shorten it.
var lockTimeout = 30 * time.Second

// tx is the exactly-once side of a sink subtask: the transaction of the
// rows since the last barrier on the data connection, the prepared
// transactions not yet committed, and a second connection that commits
// and rolls them back (COMMIT PREPARED cannot run inside a transaction).
type tx struct {
	prefix    string // gids are prefix-subtask-checkpoint
	subtask   int
	par       int
	ctl       *pgx.Conn
	inTx      bool     // the data connection has an open transaction
	pending   []string // prepared, not committed, oldest first
	committed map[string]bool
	// started is set by the first Write, PreCommit or Finish: a Commit
	// before is of a restored checkpoint's handle.
	started   bool
	recovered bool
}

// handle is what PreCommit returns and Commit takes: the subtask's
// prepared transactions not committed when the barrier came, oldest
// first. It is JSON after the header of handleVersion
// (statecodec.EncodeJSON). Versions: 1, the fields below.
type handle struct {
	Prefix  string   `json:"prefix"`
	Subtask int      `json:"subtask"`
	GIDs    []string `json:"gids,omitempty"`
}

const (
	minHandleVersion = 1
	handleVersion    = 1
)

func (t *tx) init(spec exec.TableSpec) error {
	if spec.Job == "" && spec.OperatorID == "" {
		return errors.New("the job has no name to derive the identifiers of its prepared transactions from")
	}
	t.prefix = "streamsql-" + spec.Job + "-" + spec.OperatorID
	t.subtask, t.par = spec.Subtask, max(spec.Parallelism, 1)
	t.committed = map[string]bool{}
	if n := len(t.gid(1<<62)) - maxGIDLen; n > 0 {
		return fmt.Errorf("the identifiers of its prepared transactions (%s-<subtask>-<checkpoint>) would be %d bytes longer than PostgreSQL allows: give the job a shorter name",
			t.prefix, n)
	}
	return nil
}

func (t *tx) gid(checkpointID int64) string {
	return t.prefix + "-" + strconv.Itoa(t.subtask) + "-" + strconv.FormatInt(checkpointID, 10)
}

// parseGID returns the subtask and checkpoint of a gid under prefix.
func parseGID(prefix, gid string) (subtask int, checkpointID int64, ok bool) {
	rest, ok := strings.CutPrefix(gid, prefix+"-")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, 0, false
	}
	st, err1 := strconv.Atoi(a)
	cp, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || st < 0 {
		return 0, 0, false
	}
	return st, cp, true
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// open checks that the server prepares transactions and opens the
// connection that commits them.
func (t *tx) open(ctx context.Context, s *Sink) error {
	var v string
	if err := s.conn.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&v); err != nil {
		return s.serverError("reading max_prepared_transactions for", err)
	}
	if v == "0" {
		return s.errorf("'%s' = '%s' needs prepared transactions, but the server (%s) has max_prepared_transactions = 0: "+
			"set it in postgresql.conf to at least the sink's parallelism times 2 (say 64) and restart the server, or use '%s'",
			OptDeliveryGuarantee, ExactlyOnce, s.cfg.url, AtLeastOnce)
	}
	ctl, err := s.connect(ctx)
	if err != nil {
		return err
	}
	t.ctl = ctl
	return nil
}

// recover rolls back, once, before the subtask's first transaction, every
// prepared transaction of the sink that no restored handle committed: of
// the old subtasks this one took over (subtask mod parallelism), each
// prepared for a checkpoint that did not complete, or by an instance that
// no checkpoint restores. A restore commits the handles of its checkpoint
// first (Commit before the first Write).
func (t *tx) recover(ctx context.Context, s *Sink) error {
	if t.recovered {
		return nil
	}
	rows, err := t.ctl.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
	if err != nil {
		return s.serverError("listing the prepared transactions (pg_prepared_xacts) of", err)
	}
	gids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return s.serverError("listing the prepared transactions (pg_prepared_xacts) of", err)
	}
	for _, g := range gids {
		st, _, ok := parseGID(t.prefix, g)
		if !ok || st%t.par != t.subtask || t.committed[g] {
			continue
		}
		if _, err := t.ctl.Exec(ctx, "ROLLBACK PREPARED "+quote(g)); err != nil && !gone(err) {
			return s.serverError("rolling back prepared transaction "+g+" of", err)
		}
	}
	t.recovered = true
	return nil
}

// gone says whether err is the server not knowing a prepared transaction
// (committed or rolled back already).
func gone(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42704"
}

// write writes the buffer into the open transaction, beginning it if
// needed. Rows written while a prepared transaction is pending could wait
// for its locks, which only its commit frees, so unless force (the
// barrier) the buffer keeps growing until the commit; at the barrier,
// pending transactions are those of aborted checkpoints (the runtime
// holds the barrier until the earlier ones are committed or aborted:
// CommitBeforeNextPreCommit), and a wait for their rows longer than
// lockTimeout fails the job, whose restore rolls them back.
func (t *tx) write(ctx context.Context, s *Sink, force bool) error {
	if len(s.upsert) == 0 || (!force && len(t.pending) > 0) {
		return nil
	}
	if err := t.recover(ctx, s); err != nil {
		return err
	}
	if !t.inTx {
		if _, err := s.conn.Exec(ctx, "BEGIN"); err != nil {
			return s.serverError("beginning a transaction on", err)
		}
		t.inTx = true
		if len(t.pending) > 0 {
			if _, err := s.conn.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", lockTimeout.Milliseconds())); err != nil {
				return s.serverError("setting lock_timeout on", err)
			}
		}
	}
	n := len(s.upsert)
	if err := s.writeBuffer(ctx, s.conn); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" {
			return s.errorf("writing %d rows to PostgreSQL table %s waited more than %v for rows that the prepared transactions %s hold "+
				"(of checkpoints that did not complete): %v", n, s.cfg.tableName, lockTimeout, strings.Join(t.pending, ", "), err)
		}
		return s.serverError(fmt.Sprintf("writing %d rows to", n), err)
	}
	s.resetBuffer()
	return nil
}

// preCommit writes the buffer into the checkpoint's transaction and
// prepares it (PREPARE TRANSACTION with the gid of the checkpoint); the
// handle lists every prepared transaction not yet committed.
func (t *tx) preCommit(ctx context.Context, s *Sink, checkpointID int64) ([]byte, error) {
	if err := t.recover(ctx, s); err != nil {
		return nil, err
	}
	if err := t.write(ctx, s, true); err != nil {
		return nil, err
	}
	if t.inTx {
		g := t.gid(checkpointID)
		t.inTx = false
		if _, err := s.conn.Exec(ctx, "PREPARE TRANSACTION "+quote(g)); err != nil {
			return nil, s.serverError(fmt.Sprintf("preparing the transaction of checkpoint %d (%s) on", checkpointID, g), err)
		}
		t.pending = append(t.pending, g)
	}
	return statecodec.EncodeJSON(handleVersion, handle{Prefix: t.prefix, Subtask: t.subtask, GIDs: t.pending})
}

// commit commits the prepared transactions of a handle, in order. One the
// server no longer has was committed before (a restore commits its
// checkpoint's handle again).
func (t *tx) commit(ctx context.Context, s *Sink, checkpointID int64, hb []byte) error {
	var h handle
	if _, err := statecodec.DecodeJSON(hb, "jdbc table "+s.spec.Table+" (sink)", minHandleVersion, handleVersion, &h); err != nil {
		return fmt.Errorf("commit handle of checkpoint %d: %w", checkpointID, err)
	}
	for _, g := range h.GIDs {
		if t.committed[g] {
			continue
		}
		if err := t.commitPrepared(ctx, s, g); err != nil {
			return s.errorf("the rows of checkpoint %d may be lost: %v", checkpointID, err)
		}
	}
	return nil
}

// commitPrepared commits the prepared transaction g, retrying a lost
// connection up to 'sink.max-retries' times.
func (t *tx) commitPrepared(ctx context.Context, s *Sink, g string) error {
	var err error
	for attempt := 0; ; attempt++ {
		if t.ctl == nil || t.ctl.IsClosed() {
			t.ctl, err = s.connect(ctx)
		}
		if err == nil {
			_, err = t.ctl.Exec(ctx, "COMMIT PREPARED "+quote(g))
			if err == nil || gone(err) {
				break
			}
		}
		if attempt >= s.cfg.maxRetries || refused(err) || ctx.Err() != nil {
			return fmt.Errorf("COMMIT PREPARED %s on %s: %v", quote(g), s.cfg.url, err)
		}
		select {
		case <-time.After(time.Duration(attempt+1) * time.Second):
		case <-ctx.Done():
		}
	}
	for i, p := range t.pending {
		if p == g {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
	if len(t.committed) >= 4096 {
		clear(t.committed)
	}
	t.committed[g] = true
	return nil
}

// finish commits everything at the end of a bounded input: the pending
// prepared transactions, then the open one with the buffer.
func (t *tx) finish(ctx context.Context, s *Sink) error {
	if err := t.recover(ctx, s); err != nil {
		return err
	}
	for len(t.pending) > 0 {
		if err := t.commitPrepared(ctx, s, t.pending[0]); err != nil {
			return s.errorf("at the end of the input: %v", err)
		}
	}
	if err := t.write(ctx, s, true); err != nil {
		return err
	}
	if t.inTx {
		t.inTx = false
		if _, err := s.conn.Exec(ctx, "COMMIT"); err != nil {
			return s.serverError("committing the last rows to", err)
		}
	}
	return nil
}

func (t *tx) close(ctx context.Context) {
	if t.ctl != nil {
		t.ctl.Close(ctx)
		t.ctl = nil
	}
}
