// Package objectstore tests checkpoints and savepoints kept on object
// storage end to end, the way a user would run them: it builds the binary
// once (TestMain), starts a real S3-compatible server (versitygw, through
// scripts/s3-server.sh and internal/testenv) once for the test binary,
// and runs job files with `streamsql --data-dir DIR -f job.sql` as
// subprocesses whose checkpoints go to s3://streamsql/<test prefix>, with
// the server's credentials in the standard AWS environment variables and
// 's3.endpoint' and 's3.path.style.access' SET in the file.
//
// The job file is tests/crash's: a throttled datagen table of the ids
// 1..N, one job `INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id)
// FROM gen GROUP BY id % 1000` into a debezium-json filesystem table, and
// one `INSERT INTO ids_out SELECT id FROM gen` into a csv one. The output
// checks are tests/crash's (CheckAgg, CheckIDs): the changelog replays to
// exactly one row per key with the count and sum of every id, and every
// id is written exactly once.
//
// The tests:
//
//   - TestNewMachineEachKill: each run starts on a new, empty data
//     directory (a new machine), is killed with SIGKILL once each job has
//     completed a checkpoint in the bucket newer than the one it restored,
//     and its data directory is deleted. Each run must say it restored
//     each job from the newest checkpoint in the bucket at the kill; a
//     last run on a new data directory runs to the end; the output must be
//     exact.
//   - TestSavepointOnS3: a run with 'state.savepoints.dir' in the bucket
//     is stopped with SIGTERM and --savepoint-on-stop, which writes a
//     canonical savepoint (its _metadata says so, its state files are the
//     stores' entries); a run on a new data directory under the other
//     state backend ('hashmap') with -s s3://... restores the savepoint
//     (its files downloaded and verified) and runs to the end; the output
//     must be exact.
//   - TestDamagedObjectFallback: with two checkpoints retained, a state
//     object that only the newest lists is damaged on the server's disk;
//     a new machine warns that the newest cannot be restored (the client
//     finds the object's checksum wrong), restores the older one and runs
//     to the end; the aggregate's final values are exact (its changes
//     after the older checkpoint are committed again), the pass-through
//     job's output exact.
//   - TestServerFaults: the server paused with SIGSTOP, or killed, for
//     three seconds (three checkpoint timeouts of one second) while both
//     jobs run: their checkpoints fail within the timeout, the jobs fail
//     ('tolerable-failed-checkpoints' 0) and restart by their strategy,
//     trying again while the bucket cannot be listed, resume from it once
//     the server is back and run to the end; the output must be exact.
//   - TestSlowServer: the same with the server reached through a proxy
//     that, for three seconds, forwards 512 bytes every 300 ms: a server
//     that answers, too slowly for the checkpoints' timeout.
//
// The fencing of two owners of one job is tested in tests/kafka
// (TestFencedOwnerTakeover), where the job's sinks are Kafka topics
// written in transactions.
//
// Nothing is skipped: the server is installed by the script if missing.
package objectstore
