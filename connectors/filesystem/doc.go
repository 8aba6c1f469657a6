// Package filesystem is Flink's filesystem connector for text formats: a
// bounded source reading CSV or JSON-lines files, and a sink writing them.
//
// Options:
//
//	path    required: a file, or a directory whose files are read in name
//	        order (recursively; names starting with '.' or '_' are skipped,
//	        as Flink skips hidden and in-progress files). For the sink, the
//	        directory the part files go to (created if needed).
//	format  required: 'csv' or 'json', with the format's options
//	        ('csv.field-delimiter', 'json.ignore-parse-errors', ...; see the
//	        format packages).
//
// Source: the scan is bounded. With parallelism P, subtask i reads the
// files whose index in the ordered list is i mod P. Records are decoded
// straight into the batch's Arrow builders; a blank line is skipped. A bad
// record fails the job with an error naming file:line and the column,
// unless the format's ignore-parse-errors is set: then it is skipped and
// counted (Skipped). The snapshot is the current file (its name and index),
// the byte offset and line number of the next record, so a restore resumes
// at exactly the next record.
//
// Sink: append-only. Subtask i writes its rows to a hidden in-progress file
// '.part-<i>-<n>.inprogress' in path and, at each checkpoint (PreCommit)
// and at the end of a bounded input (Finish), syncs it and renames it to
// 'part-<i>-<n>', n counting up from the highest part number of subtask i
// already in the directory. This is not yet exactly-once: rows written after
// the last completed checkpoint are written again after a restore.
package filesystem
