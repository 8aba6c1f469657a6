// Package kafka tests streamsql's Kafka connectors end to end, as a user
// would run them: each test starts `streamsql kafka-dev` as its own process
// (in both transaction protocol modes, KIP-890 and --classic-txn), runs the
// engine as another process (`streamsql --data-dir D -f job.sql`) and uses
// kcat (librdkafka) as the independent client that produces the input and
// reads the output with isolation.level=read_committed.
//
// The engine is killed with SIGKILL at random moments and at the
// failpoints of the checkpoint protocol (STREAMSQL_FAILPOINT), and
// restarted each time with the same command; the broker is never killed (it
// keeps its data in memory). After the last run ends, the committed output
// must be exact:
//
//   - TestUpsertCounts: clicks over 1000 app ids, COUNT(*) by app id into
//     an exactly-once upsert-kafka table: the last committed value of each
//     key is the true count. 4M clicks rather than the 1M first planned:
//     the engine reads 1M in about three 200ms checkpoint intervals, too
//     short a job for ten random kills to land in.
//   - TestUpsertCountsNewMachines: the same count with its checkpoints in
//     the bucket of a real S3-compatible server (versitygw, started with
//     scripts/s3-server.sh by internal/testenv) and every run on a new,
//     empty data directory, as on a new machine: each run restores the
//     newest checkpoint in the bucket, and the counts are exact. 2M clicks,
//     kafka-dev's two protocols.
//   - TestFencedOwnerTakeover: one process runs the count and a
//     pass-through, both exactly-once, checkpointing to the S3 server; it
//     is stopped with SIGSTOP, a second process on a new data directory
//     takes the job over from the bucket, and the first, continued with
//     SIGCONT, must fail with the fenced error naming the second's pid and
//     not restart; read_committed, every click once in the pass-through
//     and the true count per app. 600K clicks, both protocols.
//   - TestPostgresUpsertCounts: the same count (1M clicks, kafka-dev with
//     KIP-890 only: Kafka is only its input) into an exactly-once jdbc
//     table of a PostgreSQL server (scripts/postgres.sh, started by
//     internal/testenv), killed at each failpoint of the two-phase commit,
//     after a restored sink's commits (after-restore-commit) and at five
//     random moments: read with psql, the table holds the true counts,
//     pg_prepared_xacts is empty, and no run failed and restarted (a
//     transaction waiting for rows a prepared one holds).
//   - TestPassThrough: SELECT * into an exactly-once kafka json table: every
//     click id exactly once.
//   - TestAtLeastOnce: the same with 'sink.delivery-guarantee' =
//     'at-least-once' and AT_LEAST_ONCE checkpoints: every click id at least
//     once.
//   - TestBadRecords: invalid JSON and wrongly typed values fail the job
//     with an error naming topic, partition and offset, as do missing
//     fields with 'json.fail-on-missing-field' (without it a missing field
//     is NULL, as in Flink); with 'json.ignore-parse-errors' the bad records
//     are skipped, counted (DESCRIBE JOB), and every other record is copied.
//   - TestAvroConfluent: avro-confluent records of two writer schemas in a
//     real schema registry (scripts/schema-registry.sh) copied by a job into
//     an avro-confluent table; read back with the registry's REST API and
//     another Avro decoder (hamba/avro), every row is there once.
//   - TestWindowRescale: a statement set of HOP windows (COUNT and SUM by
//     app) and SESSION windows (by user_id % 150, a 30ms gap: thousands of
//     sessions closing through the run) at parallelism 2, killed shortly
//     after checkpoints, resumed from the newest checkpoint at parallelism
//     3, killed again, stopped with a savepoint and resumed from it at
//     parallelism 1 to the end: every (window, key) committed once with
//     its true count and sum. One protocol (KIP-890); 1.5M clicks.
//   - TestServerKilled: the count of TestUpsertCounts submitted to
//     `streamsql server` through POST /api/v1/statements; the server is
//     killed (failpoints, a restore, random moments from its start) and
//     started again on the same data dir, resuming the job from its newest
//     checkpoint by itself each time (as its log says), until a last
//     server runs it to the end (FINISHED, as GET /api/v1/jobs says): the
//     same exact counts. 2M clicks; seven random kills.
//   - TestTopicCreatedLater: an unbounded job whose input topic does not
//     exist yet runs and says it waits for it; the topic is created, given
//     two more partitions while the job runs, and the engine is killed at
//     a random moment after they got records; the restored run reads the
//     partitions its checkpoint does not know from their earliest offset:
//     every click committed once. TestServerWaitsForTopic: the same wait
//     as GET /api/v1/jobs, SHOW JOBS and the server's log say it
//     (kafka-dev only).
//
// Each job runs with parallelism 2 over 4 partitions and 200ms
// checkpoints. The failpoints (after-sink-precommit, after-metadata-before-
// commit, between-sink-commits, during-restore) come first; then ten kills
// at random moments of a run, through start-up, restore, transactions and
// checkpoints, their range narrowed once most of the input is committed
// (read from the consumer group's offsets, which the source commits at
// each completed checkpoint) so that every kill lands while the job runs.
//
// With STREAMSQL_TEST_KAFKA=apache every test runs again as subtest
// "apache" against Apache Kafka 4.4 (scripts/apache-kafka.sh: Java 17 and
// Maven), one broker for the test binary, started on first use and
// emptied (transactions aborted, groups and topics deleted) for each test;
// TestBrokerRestarted, which empties kafka-dev, runs on kafka-dev only.
// Two tests run on Apache Kafka only: TestBrokerPaused stops the broker
// with SIGSTOP for longer than the sink's transaction timeout and resumes
// it, TestBrokerKilled kills it with SIGKILL and starts it again on its
// log dir once the job has failed; the job must finish with every record
// committed exactly once (read back with kcat, read_committed, once the
// last stable offsets have reached the end offsets).
//
// kcat must be on PATH (test.sh installs it from Debian). The random kill
// moments are logged with their seed; STREAMSQL_KAFKA_SEED=<seed> replays
// them.
package kafka
