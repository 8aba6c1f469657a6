// Package print is Flink's print sink: every row it receives is written as
// one line, the row's changelog op then its values,
//
//	+I[1, a, NULL]
//	-U[1, a, NULL]
//	+U[1, b, 2]
//
// each value printed by types.Format (Flink's CAST AS STRING). As in Flink,
// a line is prefixed with "<subtask+1>> " when the sink runs with
// parallelism > 1, and with the 'print-identifier' option the prefix is
// "<id>> " (parallelism 1) or "<id>:<subtask+1>> ".
//
// Options:
//
//	print-identifier  string, default none: the prefix above
//	standard-error    boolean, default false: print to standard error
//
// The sink accepts updates. Lines go to os.Stdout (os.Stderr with
// standard-error) unless SetOutput redirected them; the lines of one batch
// are written with one Write call under a process-wide lock, so batches of
// different subtasks never interleave within a batch.
//
// Flink prints NULL values as "null"; we print them as types.Format does
// ("NULL"), matching what our shell shows.
package print
