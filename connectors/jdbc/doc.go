// Package jdbc is Flink's 'jdbc' connector as a sink into PostgreSQL,
// through pgx (github.com/jackc/pgx/v5). 'url' is a
// jdbc:postgresql://host[:port]/database URL (another database is refused);
// 'table-name' the table, [schema.]table, written as Flink's PostgreSQL
// dialect writes names: as they are (PostgreSQL folds them to lower case),
// quoted only when they are not plain identifiers; so are the columns.
//
// # Statements
//
// A table without a PRIMARY KEY takes inserts only (the planner refuses an
// updating query into it): INSERT INTO t (cols) SELECT * FROM
// unnest($1::type[], ...). With a primary key every row is an upsert on it,
// INSERT ... ON CONFLICT (key) DO UPDATE SET (the other columns) =
// EXCLUDED..., and a -D row a DELETE ... WHERE (key) IN (SELECT * FROM
// unnest(...)); -U rows change nothing (the +U that follows does). Each
// column of the buffered rows is one array parameter, so a flush of any
// number of rows is at most two statements (bench/POSTGRES.md measured it
// against multi-row VALUES lists and COPY). A statement the server refuses
// (a constraint, a value out of the column's range) fails the job with an
// error naming the table and the server's message; nothing is dropped.
//
// The buffer holds, with a primary key, one change per key (the last), so
// that one statement never touches a row twice. Engine types map to
// boolean, bigint (TINYINT to BIGINT), double precision (FLOAT, DOUBLE),
// numeric, text, bytea, date, time and timestamp arrays; the server
// casts them to the table's column types as an INSERT does (a value that
// does not fit is its error). Other types (intervals, ROW) are refused at
// CREATE TABLE.
//
// # At least once (the default)
//
// The buffer is written, in one transaction, when it holds
// 'sink.buffer-flush.max-rows' rows (default 100; 0: no limit), when its
// oldest row is 'sink.buffer-flush.interval' old (default 1 s; 0: never)
// and at each checkpoint barrier, so that a checkpoint covers every row
// before it. A failure that is not the server refusing the rows (a lost
// connection, a serialization failure or deadlock) is retried up to
// 'sink.max-retries' times (default 3) on a new connection, after 1 s,
// 2 s, ... as Flink's. A restore writes the rows after the checkpoint
// again: upserts make that idempotent; inserts into a table without a key
// are then duplicated.
//
// # Exactly once ('sink.delivery-guarantee' = 'exactly-once')
//
// Each subtask writes the rows between two barriers in one transaction and
// prepares it at the barrier (PREPARE TRANSACTION 'gid', gid =
// streamsql-<job>-<operator>-<subtask>-<checkpoint>); the handle in the
// checkpoint lists the subtask's prepared transactions not yet committed.
// When the checkpoint completes, COMMIT PREPARED commits them (on a second
// connection: the first may have the next transaction open). On restore
// the runtime hands the restored checkpoint's handles to Commit before the
// first row, and before its first transaction each subtask rolls back
// (ROLLBACK PREPARED) every other prepared transaction under the job's
// prefix of the old subtasks it took over (pg_prepared_xacts: those of
// checkpoints that did not complete, or of an instance that no checkpoint
// names), so a crash at any step loses and duplicates nothing and nothing
// stays prepared. A prepared transaction the server no longer has when
// its handle is committed again was committed before (PostgreSQL cannot
// tell it from one rolled back by hand). The server must have
// max_prepared_transactions > 0, else the job fails at its start saying so.
//
// A prepared transaction holds its rows' locks until COMMIT PREPARED, so
// the sink is an exec.OrderedCommitter: the runtime holds each barrier
// until the checkpoints the sink pre-committed before are committed or
// known to be aborted (the coordinator may trigger a checkpoint before
// the last one's metadata is written). Rows go into the open transaction
// when the buffer reaches its max rows and no prepared transaction is
// pending, else at the barrier; a prepared transaction is still pending
// at a barrier only if its checkpoint was aborted, and a wait for its
// rows longer than 30 s fails the job, whose restore rolls it back.
// 'sink.buffer-flush.interval' does not apply (rows become visible when a
// checkpoint completes) and is refused. Rows are visible once per
// checkpoint, and at the end of a bounded input.
//
// 'sink.parallelism' (catalog.OptSinkParallelism, read by the planner)
// runs the sink at its own parallelism; an updating input reaches it
// hashed by the primary key, so that the changes of a key stay in order.
package jdbc
