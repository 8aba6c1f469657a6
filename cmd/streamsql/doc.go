// Command streamsql runs streaming SQL: an interactive shell, a runner for
// files of statements, and a sqllogictest runner. Every statement goes
// through a session.Session on a data directory (--data-dir, default
// ./streamsql-data), so it behaves the same from each door.
//
// Usage:
//
//	streamsql [--data-dir DIR] [--sync]               the interactive shell
//	streamsql [--data-dir DIR] [--sync] -f FILE.sql   run a file (also --file)
//	streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...
//	streamsql bench nexmark [--queries q0,q1,...] [--events N] [--parallelism P] [--json FILE] [--flink]
//	streamsql bench groupby [--keys K,...] [--rows R] [--backend pebble,hashmap] [--flink]
//	streamsql bench soak (--query qN [--events N] | --groupby [--keys K] [--rows R]) [--duration D] [--interval I] [--out FILE]
//	streamsql version
//
// --sync makes each INSERT wait for its job, as SET 'table.dml-sync' =
// 'true' does.
//
// # The data directory
//
// A data directory has one owner at a time. The shell and -f take its lock,
// <data-dir>/LOCK (flock(2), package internal/datadir), before reading or
// writing anything in it, and hold it until they exit; the kernel releases
// it when the process dies in any way, kill -9 included, so the next run
// takes it over. A second streamsql on a directory in use exits with status
// 1, touching nothing, and says who owns it:
//
//	[ERROR] data directory ./streamsql-data is in use by process 4242 on host1,
//	started 2026-12-01 20:53:35 UTC (streamsql -f job.sql); only one process ...
//
// "streamsql test" never uses --data-dir itself: each file runs in a new
// temporary directory under it (or under the system's temporary directory),
// locked by that run alone. "version", "help" and "kafka-dev" use no data
// directory.
//
// # The shell
//
// The prompt is "streamsql> "; a statement may span lines (the prompt is
// then "       -> ") and ends with ';'. Tab completes keywords and table
// and view names; the history is kept in <data-dir>/.streamsql_history
// (~/.streamsql_history when the data directory cannot be created).
// "help" or \h lists the statements, "quit", "exit", \q or Ctrl-D leaves
// (and stops the jobs started from the shell); \d lists the tables and
// views, \d t describes t, \timing [on|off] prints how long each statement
// took. A line starting with any other '\' command is an error at once,
// never the start of a statement. The rows of print sinks go to the
// terminal through readline, which draws the prompt and the line being
// typed again under them. Ctrl-C clears the statement being
// typed, or cancels the running query and returns to the prompt; SIGTERM
// stops the jobs and ends the shell with status 0. Errors
// print as "[ERROR] line L:C: message (hint)", the position being in the
// statement as typed.
//
// Results: statements that only succeed print what they did ("Table 't'
// created."); SHOW CREATE prints the statement; SHOW, DESCRIBE
// and bounded result sets print a boxed table (NULL as <NULL>, numbers
// aligned right) followed by "N rows in set"; EXPLAIN prints the plans.
// A SELECT runs with Session.Query, so an unbounded one streams until
// Ctrl-C ("Query canceled."). Its display follows
// 'sql-client.execution.result-mode':
//
//	table      the default: the result is kept materialized and, on a
//	           terminal, redrawn in place at most every 200ms while it
//	           changes (as many rows as fit the screen); at the end the
//	           whole table is printed with "N rows in set".
//	tableau,   every change is printed as it arrives, with its op (+I, -U,
//	changelog  +U, -D), in columns sized from the types (values wider than
//	           30 cells are cut with "..."); at the end, "Received a total
//	           of N rows".
//
// When standard input is not a terminal the shell reads it without prompts
// or line editing, so a script can be piped in; it keeps going after a
// failed statement, waits at the end for the jobs the script started (as
// -f does) and exits 1 if a statement or a job failed. There SIGINT
// cancels the running statement and, when none runs, stops the jobs and
// ends the shell with status 0, as SIGTERM does.
//
// # Running a file
//
// -f parses the whole file first (a syntax error anywhere runs nothing),
// then runs its statements in order and prints their results as the shell
// does. INSERT statements submit jobs that run in the background, as in
// Flink; after the last statement streamsql waits for every job. Bounded
// jobs end by themselves; unbounded ones run until SIGINT or SIGTERM, which
// stop all jobs. With --savepoint-on-stop each running job stops with a
// savepoint and the exit status is 0; without one (or when a savepoint or
// the statement running was cut short) it is 130 for SIGINT and 143 for
// SIGTERM, as for a process the signal ended. While waiting, a progress
// line (jobs running, records in and out: the counters SHOW JOBS shows) is
// rewritten in place every 2 seconds on a terminal, and printed as a line
// of its own every 10 seconds when standard error is not one (a pipe, a log
// file); --no-progress turns it off. Each failure and restart of a job is
// printed to standard error as it happens ([WARN] with the cause and the
// delay before the restart, [INFO] when it restarted).
//
// The exit status is 1 if a statement fails (the jobs already started are
// stopped) or a job fails for good (the other jobs are stopped). Errors go to
// standard error placed in the file, as a compiler does:
//
//	[ERROR] job.sql:3:15: column 'idd' not found (did you mean 'id'?)
//
// A failed job is reported at the INSERT that started it.
//
// # sqllogictest
//
// "streamsql test" runs sqllogictest files (a directory means its *.slt
// and *.test files) with package slt. Each file runs on a fresh session in
// a fresh temporary data directory (under --data-dir if given), removed
// afterwards, with 'table.dml-sync' on so an INSERT is applied before the
// next record. Result columns are typed 'I' for TINYINT to BIGINT and
// BOOLEAN (booleans are integers in sqllogictest, shown as 1 and 0), 'R'
// for FLOAT, DOUBLE and DECIMAL and 'T' otherwise; values are the engine's
// text (types.Format), NULL being NULL. It prints a line per file, each
// failure with -v, then "N passed, N failed" and, when records failed, why:
// the failures counted by cause (the runner's message and the engine's
// error without positions, hints and quoted names), most frequent first:
//
//	616 passed, 415 failed
//	415 failed:
//	    415  query failed: correlated subqueries are not supported
//
// The exit status is 1 if any record failed.
//
// # A server
//
// "streamsql server" runs jobs behind a REST API that outlives any shell
// (package server, docs/API.md). --server URL makes streamsql its client:
// with -f it sends the file and returns once its jobs are submitted (--wait:
// once they ended); without -f it is a shell reading statements from
// standard input and running each on the server. Its SELECTs stream back
// through POST /api/v1/queries (runRemoteQuery) and print through the same
// result printers as a local query, in the server session's result mode;
// Ctrl-C closes the request, which cancels the query on the server.
//
// # Benchmarks
//
// "streamsql bench nexmark" runs the Nexmark queries of bench/nexmark,
// each in a child process of its own (this binary with -f, in a new
// temporary data directory), and prints per query events/s, events per CPU
// second (the child's rusage), peak RSS (its VmHWM) and state size; with
// --flink it runs each query on Flink 2.2.1 too (NexmarkSql of bench/peers) and
// writes bench/NEXMARK.md. bench/nexmark/README.md describes it.
// "streamsql bench groupby" runs a group-by over a datagen table of many
// keys the same way, per key count and state backend (and on Flink with
// --flink), and writes bench/GROUPBY.md. "streamsql bench soak" runs one
// workload (a Nexmark query or that group-by) in a child "streamsql
// server" for a long run, sampling its RSS, its CPU time and the job's
// records in every --interval, and compares the first and last thirds of
// the run. bench/README.md describes both.
// "streamsql kafka-dev" is the local Kafka-compatible broker.
package main
