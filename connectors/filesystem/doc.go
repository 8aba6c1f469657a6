// Package filesystem is Flink's filesystem connector for text formats: a
// bounded source reading CSV, JSON-lines or Debezium JSON files, and an
// exactly-once sink writing them (as Flink's FileSink).
//
// Options:
//
//	path    required: a local path or a file:// URI (file:///tmp/x); a
//	        file, or a directory whose files are read in name
//	        order (recursively; digit runs compared as numbers, so part-0-9
//	        comes before part-0-10; names starting with '.' or '_' are
//	        skipped, as Flink skips hidden and in-progress files). For the
//	        sink, the directory the part files go to (created if needed).
//	format  required: 'csv', 'json' or 'debezium-json', with the format's
//	        options ('csv.field-delimiter', 'json.ignore-parse-errors',
//	        'debezium-json.ignore-parse-errors', ...; see the format
//	        packages).
//	sink.rolling-policy.rollover-interval, sink.rolling-policy.file-size
//	        roll a part file that has been open that long or holds that
//	        many bytes: it is closed at the next batch and committed with
//	        the next checkpoint. sink.rolling-policy.check-interval is
//	        checked as a duration; the policy is checked at every batch.
//	partition.default-name, sink.partition-commit.*,
//	partition.time-extractor.timestamp-pattern
//	        tables with PARTITIONED BY: see partition.go.
//
// # Source
//
// The scan is bounded. With parallelism P, subtask i reads the files whose
// index in the ordered list is i mod P. Records are decoded straight into
// the batch's Arrow builders; a blank line is skipped. A bad record fails
// the job with an error naming file:line and the column, unless the
// format's ignore-parse-errors is set: then it is skipped and counted
// (Skipped). The snapshot is the current file (its name and index), the
// byte offset and line number of the next record, so a restore resumes at
// exactly the next record. A checkpoint taken at another parallelism
// restores too (exec.Rescalable): old subtask o of P read the files at
// o, o+P, ... in order, so its snapshot says which files are done and where
// the current one stands; each new subtask resumes the files it owns now
// from there (the snapshot then also lists, as Resume, the files after the
// current one that are not to be read from their start). With
// 'debezium-json' the scan reads a changelog:
// its batches carry the kind of each row (+I, -U, +U, -D).
//
// Each file is a split with its own watermark (exec.SplitSource): a
// subtask reads its files one after another, and the files it has not
// finished hold its watermark back, so that no row is late only because
// its file is read after another file with later times.
//
// # Sink
//
// The sink commits in two phases, with the checkpoints, so that readers of
// the directory see every row exactly once. Subtask i writes the rows that
// arrive between two checkpoints to a hidden in-progress file
//
//	.part-<i>-<k><ext>.inprogress
//
// where ext is the format's extension ('.csv', or '.json' for json and
// debezium-json) and k numbers the part files of subtask i: one more than
// the highest number of a part file of subtask i (committed or hidden) in
// the directory when the sink starts, counting up. The file is created by
// the first row after a checkpoint, so a checkpoint without rows writes no
// file.
//
//   - PreCommit(n) flushes, fsyncs and closes the in-progress file (and
//     fsyncs the directory): the file is pending. It returns the handle
//     (below), listing every pending file of this sink instance with its
//     final name, the pending files of earlier checkpoints not yet
//     committed included, or nil when there is none. If the file cannot
//     be made durable (a failed write, fsync or directory sync), it is
//     deleted and the sink fails: every later Write, PreCommit and Finish
//     returns the error, so that the job restarts from its last checkpoint
//     and writes those rows again, rather than tolerate the failed
//     checkpoint and go on without them.
//   - Commit(n, handle) renames each pending file of the handle, and each
//     file this instance pre-committed at checkpoint n or before, to its
//     final name 'part-<i>-<k><ext>', then fsyncs the directory. A file
//     whose pending name is gone and whose final name exists was committed
//     before: Commit is idempotent, and may be called before Open (a
//     restored job committing the handle of its checkpoint). A file with
//     neither name is an error, as is a final name that exists while the
//     pending file does too (Commit never replaces a file).
//   - When the sink first needs the directory (its first Write, PreCommit
//     or Finish), it deletes the hidden in-progress files of its subtask
//     left there: rows after the checkpoint a restored job resumes from
//     (the job writes them again) and files of checkpoints that never
//     completed. A restored job must therefore commit the handle of its
//     checkpoint before that: before Open or after it, but before the
//     first row.
//   - Finish (the end of a bounded input) pre-commits the in-progress file
//     and commits it together with every other pending file of the
//     instance.
//   - Close deletes the in-progress file of a failed job; pending files
//     stay for a restored job to commit or delete.
//
// The handle is JSON, with names relative to path, oldest file first,
// after the versioned header of every state encoding
// (checkpoint.AppendStateHeader; the source's snapshot has it too):
//
//	{"files":[{"pending":".part-0-3.csv.inprogress","final":"part-0-3.csv"}]}
//
// A handle or snapshot of a version this build does not read, or with a
// field it does not know, fails the restore with
// checkpoint.ErrIncompatibleState naming the table.
//
// With 'csv' and 'json' the sink is append-only: a -U, +U or -D row is an
// error. With 'debezium-json' it takes every kind of row and writes it as
// Flink does (+I and +U as a create, -U and -D as a delete; see the
// debezium format). The planner learns this per table through
// catalog.Connector.AcceptsUpdatesWith, and that a 'debezium-json' scan
// reads a changelog through ProducesUpdates.
//
// Hidden files of subtasks numbered at or above the parallelism of a
// rescaled job are not deleted. Several jobs writing to one directory at
// the same time are not supported: a sink deletes the in-progress files of
// its subtask number when it starts.
package filesystem
