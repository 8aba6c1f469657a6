// Package crash tests that streamsql's jobs survive being killed, the way a
// user would find out: it builds the binary once (TestMain), runs job files
// with `streamsql --data-dir DIR -f job.sql` as subprocesses, kills them
// with SIGKILL, restarts them with the same command and reads what the
// filesystem sinks committed. Everything is real: files, Pebble, signals.
//
// The main job file reads a datagen table of the ids 1..N and runs two
// jobs, checkpointing every 200ms:
//
//	agg: INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id) FROM gen GROUP BY id % 1000
//	     (a debezium-json table: a changelog of creates and deletes)
//	ids: INSERT INTO ids_out SELECT id FROM gen
//	     (a csv table)
//
// The checks (check.go) read only committed part files (names not starting
// with '.'), by subtask and part number:
//
//   - agg_out is replayed as a multiset of rows, a create adding its after
//     row, a delete removing its before row; removing a row that is not
//     there fails at its file:line. The result must be exactly one row
//     (k, count, sum) per k over the ids 1..N.
//   - ids_out must hold every id in 1..N exactly once (at least once in
//     AT_LEAST_ONCE mode).
//
// The tests:
//
//   - TestKillAnywhere, on the pebble and the hashmap backend, and on pebble
//     with two subtasks per operator: ten kills at random moments (the source is throttled so that they land mid-run),
//     each restart resuming every job from its newest completed checkpoint
//     ("restored job agg from checkpoint N"); then a last run to the end and
//     the exact checks.
//   - TestFailpoints: STREAMSQL_FAILPOINT crashes the process, on a random
//     hit of the place, after a sink pre-commit, after _metadata is written
//     but before the sinks commit, between the commits of two sink
//     subtasks, and while a job restores; a restart without it must finish
//     with exact output.
//   - TestAtLeastOnce: the pass-through job in AT_LEAST_ONCE mode under
//     kills: every id at least once.
//   - TestSavepointChangeQuery: a streaming aggregate stopped with SIGTERM
//     and --savepoint-on-stop, restored (-s) into a query that adds a
//     column after the aggregate: the counts continue from the savepoint.
//     Restored into a changed aggregate, the run fails naming the state no
//     operator claims, and runs with
//     'execution.state-recovery.ignore-unclaimed-state'.
//   - TestCorruption: a truncated _metadata, a flipped bit in a state file
//     of the newest checkpoint (the last byte of the Pebble MANIFEST, which
//     Pebble itself would take for a torn tail and ignore; the middle of the
//     Pebble sstable most checkpoints share by hard links; hashmap
//     entries), every checkpoint damaged. Every checkpoint holding the
//     damaged file must be skipped with a warning naming the file; the run
//     must fall back to an older checkpoint, or fail saying to use --fresh. After
//     a fallback only the final value of each key is checked, not the
//     changelog: the sink had committed the changes up to the damaged
//     checkpoint, and the job emits the changes after the older one again.
//   - TestWindowKill: window aggregations of every kind (HOP, CUMULATE,
//     SESSION PARTITION BY a key, the GROUP BY TUMBLE(...) form) over a CSV
//     table of out-of-order rows (each up to 400ms behind, the watermark
//     delay being 1s, so none is late; each key silent one second in six,
//     so its 250ms sessions close), and a TUMBLE over a table where some
//     rows are 1-3s behind, with 'table.exec.late-records.table' set: five
//     jobs of two subtasks in one file, crashed at the three sink
//     failpoints and killed at ten random moments. The committed CSV rows
//     must hold exactly one row per (window, key) with the COUNT(*) and
//     SUM(id) or MAX(id) the test computes from the same rows; the late
//     table must hold rows of the input, each at most once, and the window
//     counts must be the true counts less the rows routed late: every row
//     is in exactly one of the two places.
//
// The kill moments and failpoint hits come from a PRNG whose seed each test
// logs; set STREAMSQL_CRASH_SEED to that value to replay them (the moments,
// not the scheduling of the processes).
package crash
