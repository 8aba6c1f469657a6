// Package memory is the connector of tables created without WITH
// (catalog.MemoryConnector): a bounded table that INSERT INTO fills and
// scans read, as a database table would. It takes no options.
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
// Scan: a scan sees the committed rows as of Open (a consistent snapshot;
// later commits do not affect it). Subtask i of P reads every P-th stored
// batch starting at batch i. The snapshot is the number of batches the
// subtask has emitted. The snapshot and the sink's commit handle start
// with the versioned header of every state encoding
// (checkpoint.AppendStateHeader); one of a version this build does not
// read is checkpoint.ErrIncompatibleState naming the table.
package memory
