// Package memory is the connector of tables created without WITH
// (catalog.MemoryConnector): a table that INSERT INTO fills and scans
// read, as a database table would, and that a job can follow as a
// changelog.
//
// Rows live in a process-wide store keyed by (data dir, lower-case table
// name). With a data dir they are also kept on disk, under
// <data dir>/tables/<escaped lower-case name>/:
//
//	MANIFEST           JSON: the live segment files, in order (written atomically)
//	seg-NNNNNN.arrow   Arrow IPC files holding the rows
//	staged/*.arrow     rows pre-committed at a checkpoint, not yet committed
//
// so a process restarted on the same data dir sees them. Dropping the table
// (catalog.Connector.Drop) deletes them.
//
// Sink: it accepts updates. +I and +U add a row; -U and -D remove one row
// equal to theirs (all columns), which must exist then (among the committed
// rows and those of the same commit before it), or the commit fails and
// changes nothing. A table with a PRIMARY KEY and no WATERMARK upserts, as
// RisingWave's tables do: +I and +U replace the row of their key if there
// is one, -U and -D remove the row of their key (whatever its other
// values), which must exist. A table with a key and a watermark is a
// versioned table: its rows are the versions of each key, kept as a
// multiset. Apply commits the changes of UPDATE, DELETE and REPLACE the
// same way, outside any job. The sink copies the rows it keeps. Rows become visible
// to scans atomically when the sink commits: on Finish (a bounded INSERT) or
// on Commit of a checkpoint. PreCommit writes the checkpoint's rows to a
// staged file named in the returned handle, so a restored job committing
// that handle after a crash installs them; committing a handle twice
// installs its rows once. Appends add a segment; a commit that removes rows
// rewrites the table as one segment, as does an append once there are more
// than 16 segments.
//
// Scan: its one option, 'scan.mode' (OptScanMode; given by a table hint,
// FROM t /*+ OPTIONS('scan.mode'='follow') */, or in WITH ('connector' =
// 'memory', ...)), says how it reads the table.
//
//   - 'snapshot' (the default): a bounded scan of the committed rows as of
//     Open (a consistent snapshot; later commits do not affect it).
//     Subtask i of P reads every P-th stored batch starting at batch i.
//     Its checkpointed position is the number of batches it emitted
//     (version 1).
//   - 'follow': an unbounded, updating scan: the rows as of Open, then the
//     changes of every later commit (a job's checkpoint, an INSERT,
//     UPDATE, DELETE or REPLACE) in commit order, until the job is
//     stopped. Those of a table without an upsert key are the rows as the
//     commit received them (+I, -U, +U, -D); those of a table that upserts
//     say what happened to each key: +I for a new key, -U of the row it
//     held then +U for a replaced one, -D (or -U) of the row it held for
//     a removed one.
//   - 'replay': the rows as of Open read as an unbounded input (planned as a
//     stream), that ends after them.
//
// A follower (follow or replay) reads everything in subtask 0, in order,
// in batches of at most the job's batch size; the other subtasks end at
// once. Commits are numbered (MANIFEST's Seq). Once a table is followed,
// it keeps the changes of its later commits in memory, and the rows as of
// each commit a follower started at, for the life of the process
// (log.go). A follower's position (version 2) is the commit its rows are
// as of and the row it reached in them, or the last commit it read and
// the row it reached in the next: restored, it goes on from there,
// exactly once. A position whose later commits this process does not
// know (made by an earlier process: the server or shell restarted and
// the table was changed before the job was restored) is ErrChangesGone,
// never a silent gap; with no commit since, the follower goes on.
//
// The positions and the sink's commit handle start with the versioned
// header of every state encoding (checkpoint.AppendStateHeader); one of a
// version this build does not read is checkpoint.ErrIncompatibleState
// naming the table.
package memory
