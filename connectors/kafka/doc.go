// Package kafka is Flink's 'kafka' connector (source and sink) on franz-go
// (kgo for producing and consuming, kadm and raw kmsg requests where kgo
// has no call), and the code behind upsert-kafka (package upsertkafka
// registers it).
//
// # Source
//
// Partitions are assigned to the source subtasks without a consumer group
// rebalance: partition p of topic t goes to subtask (h(t) + p) mod P, h an
// FNV hash of the topic's name (as Flink's enumerator does), so a
// partition keeps its subtask when partitions or topics are added. Each
// subtask consumes its partitions with one kgo client by direct
// assignment (kgo.ConsumePartitions), at explicit offsets: the startup mode
// is resolved to offsets when the source opens (a snapshot taken before the
// first message names a position).
//
// The position of a partition is the offset of the next message to read;
// the snapshot lists it for every assigned partition (with the end of a
// bounded read, and for upsert-kafka the partition's key state), as JSON
// after the versioned header of every state encoding
// (checkpoint.AppendStateHeader; the sink's handle has it too):
//
//	{"partitions":[{"topic":"in","partition":0,"next":42,"end":100}],"skipped":0}
//
// A snapshot or handle of a version this build does not read, or with a
// field it does not know, fails the restore with
// checkpoint.ErrIncompatibleState naming the table.
//
// Restore (before Open) seeks there. RestoreRescaled (exec.Rescalable: a
// checkpoint taken at another parallelism) takes the snapshots of every old
// subtask and resumes the partitions the subtask owns now, each with its
// position and state, wherever it was read before; a partition no snapshot
// names (new since) starts at its earliest offset. The client keeps control
// records (and skips them) so that the position moves past transaction
// markers: a read bounded at 'latest-offset' ends when the position reaches
// the end offset listed at the start (the last stable offset with
// read_committed), even when the partition ends in aborted data or markers,
// which no data message follows.
//
// Next decodes messages straight into the formats' Arrow builders (up to the
// batch size), returns exec.ErrNoData after about 100ms without a message,
// and io.EOF when a bounded read has reached the end of every partition. A
// message that does not decode fails the job with an error naming its topic,
// partition and offset, unless the format of the part that failed (key or
// value) has ignore-parse-errors set: then it is skipped and counted
// (SkippedRecords, exec.SkipCounter, kept in the snapshot). A message
// without a value (a tombstone) is skipped and counted (TombstonesSkipped,
// exec.TombstoneCounter, kept in the snapshot), except with the raw value
// format, which reads it as NULL; upsert-kafka reads it as a delete. An
// empty value (zero bytes, not null) is no tombstone: raw reads it as an
// empty string (or BYTES), every other format as a bad value (an error, or
// skipped and counted with ignore-parse-errors), as Flink's json and csv
// do; a value the format reads as no row (a comment, with
// 'csv.allow-comments') is skipped and counted.
//
// Lag (exec.LagReporter, the server's streamsql_kafka_source_lag_records)
// is per assigned partition: its end as of the last fetch that returned it
// (the high watermark, or the last stable offset with read_committed, from
// the fetch response's FetchPartition) less the offset of the next message,
// as of the end of the last batch (or the end of a bounded read, if
// nearer). Each poll stores the ends of the partitions it fetched and each
// Next the positions, one atomic store per partition: nothing per message.
//
// The snapshot also records the id of every topic read (Metadata's topic
// id). A restored source whose topic has another id now (deleted and
// created again, or a broker that lost its data) fails at Open with a
// TopicRecreatedError (errors.Is ErrTopicRecreated): its positions belong
// to the old topic. Discovery checks the ids again.
//
// Watermarks are per partition (exec.SplitSource): each partition is a
// split named "topic-partition" while it is assigned and not read to its
// end, and Next records which partition each row of the batch came from,
// so the runtime keeps one watermark per partition and emits their
// minimum. A subtask that owns no partition (more subtasks than
// partitions) is idle from the start; an empty or silent partition holds
// the watermark back unless 'scan.watermark.idle-timeout' is set.
//
// With 'properties.group.id', each completed checkpoint's positions are
// committed to that consumer group (NotifyCheckpointComplete), so lag
// tools (kcat, kadm) show the job's progress; the group is never joined,
// and the source restores from its checkpoint, not from the group. The
// commit runs on a goroutine of its own, one at a time (the newest
// positions waiting meanwhile replace older ones), so the source reads on
// during the round trip, as Flink's does; Close waits for it. A failed
// group commit does not fail the job (GroupCommitError).
//
// An unbounded source looks for new partitions (and topics matching
// 'topic-pattern') every 'scan.topic-partition-discovery.interval' (default
// 5 min as Flink's; '0' or a negative one off; a bounded source does not
// look) with an uncached metadata request, and reads the ones it owns from
// their earliest offset, whatever the startup mode: so does a restore from
// a checkpoint taken before they were found, and no record of theirs is
// lost or read twice.
//
// With discovery on, a topic of the table that does not exist yet is not
// an error: the source runs, says what it waits for (exec.Waiter: "kafka t
// waits for topic 'x' to be created", or for a topic matching the pattern
// when none does) and looks again every second, or every discovery
// interval if shorter; the topic, once created, is read from its earliest
// offset. A topic the source has read before (since Open, or in the
// checkpoint it restored) that is missing now is a TopicRecreatedError, not
// waited for. Without discovery, or bounded, a missing topic fails Open
// saying why the source does not wait.
//
// The positions committed to the group are those of the last snapshot
// taken before the notification: the runtime's Snapshot does not carry the
// checkpoint id, and with at most one checkpoint in flight (the default)
// the last snapshot is the completed checkpoint's.
//
// # Sink
//
// 'sink.delivery-guarantee':
//
//   - none: one kgo client, leader acks, not idempotent; flushed only by
//     Finish.
//   - at-least-once (default): one idempotent kgo client, flushed at every
//     checkpoint barrier (PreCommit), so a completed checkpoint implies its
//     rows are in Kafka. The handle is nil.
//   - exactly-once: one Kafka transaction per checkpoint per subtask. The
//     rows after a barrier go into a transaction on a fresh transactional
//     id, prefix-subtask-seq (prefix from 'sink.transactional-id-prefix',
//     default "<job>-<operator id>"), with a kgo client of its own: the
//     transaction of checkpoint n stays open, pre-committed, while the rows
//     after barrier n flow into the next one.
//
// Exactly-once protocol (DESIGN.md, Checkpoints, steps 4-6):
//
//   - The first Write after a barrier begins the next transaction.
//   - PreCommit(n) flushes the open transaction, reads its producer id and
//     epoch (after the flush: with KIP-890 the epoch changes with every
//     transaction) and returns the handle: every transaction of the
//     subtask pre-committed and not yet committed, oldest first (a
//     checkpoint that was aborted after its pre-commit leaves its
//     transaction to the next handle), and the next sequence number.
//   - Commit(n, handle) commits the handle's transactions: with the
//     instance's own client (EndTransaction) when it pre-committed them,
//     else (a restored job) with a raw EndTxn{TransactionalID, ProducerID,
//     ProducerEpoch, Commit: true} on a plain client, without
//     InitProducerID. NONE means committed, also when it was committed
//     before. An answer that the broker no longer has the transaction open
//     fails Commit with an error (errors.Is ErrTransactionLost) saying the
//     rows of checkpoint n are lost and why: INVALID_PRODUCER_ID_MAPPING,
//     TRANSACTIONAL_ID_NOT_FOUND or UNKNOWN_PRODUCER_ID mean the broker
//     does not know the transaction (it lost its state, as a restarted
//     kafka-dev does, or expired the id), not a timeout; PRODUCER_FENCED
//     and INVALID_PRODUCER_EPOCH mean the epoch moved on (aborted at its
//     timeout, which bumps the epoch, or fenced by another producer);
//     INVALID_TXN_STATE means it was aborted. Such an error also says when
//     the topic is gone (see below).
//   - Before its first transaction (its first Write, PreCommit or Finish;
//     a restored job has committed the restored handles by then) the sink
//     aborts every transaction left open under its ids that no checkpoint
//     recorded: for each restored handle, the ids of that old subtask with
//     a sequence number >= the handle's next one; without a handle of its
//     own subtask (a fresh start) every id of its subtask. It lists the
//     open transactions (ListTransactions, state Ongoing) and sends an
//     InitProducerID for each such id, which fences and aborts it. A broker
//     without ListTransactions (before Kafka 3.0) is probed id by id from
//     the next sequence number up, stopping at the first id never used
//     (InitProducerID answers epoch 0) or after 1000 ids.
//   - A new instance's sequence starts at max(next sequence of its restored
//     handle, the wall clock in milliseconds), so no later run reuses an id
//     a handle could name.
//   - Finish (end of a bounded input) commits the open transaction and any
//     pending one directly.
//   - Close aborts the open transaction (its rows are in no checkpoint) and
//     closes every client without ending the pre-committed transactions: a
//     restored job commits or aborts them.
//
// The handle is JSON (after the header):
//
//	{"prefix":"job-op3","subtask":0,"parallelism":2,"next":1718000000123,
//	 "txns":[{"id":"job-op3-0-1718000000122","seq":1718000000122,"producer_id":4711,"epoch":0}]}
//
// 'properties.transaction.timeout.ms' (default 60000) must exceed the
// checkpoint interval by TimeoutMargin (10 s): a transaction lives from its
// first row through the next barrier until its checkpoint completes, or
// until a restarted job commits it. The sink is built with an error
// naming both values otherwise, and exactly-once without checkpoints is an
// error too.
//
// Every sink looks up its topic's id (Metadata) at Open, after each
// flush (PreCommit, Finish) and, when it restores, against the id its
// handle recorded (every guarantee's handle has it; at-least-once's and
// none's only that). A topic that vanished or has another id was deleted
// (and created again by the producer's auto-creation), or the broker lost
// its data: the sink fails with a TopicRecreatedError (errors.Is
// ErrTopicRecreated), because the rows committed before are gone.
//
// 'sink.partitioner': 'default' (murmur2 of the key as Kafka's producer,
// sticky without a key), 'fixed' (sink subtask i writes to partition i mod
// the number of partitions) or 'round-robin'.
//
// # Formats
//
// 'format' (or 'value.format') is json, csv, raw or debezium-json, with the
// format's options under its name ('json.ignore-parse-errors'), or under
// 'value.<format>.' with 'value.format'. 'key.format' with 'key.fields'
// ('a;b') writes and reads the message key ('key.<format>.' options);
// 'value.fields-include' is ALL (the value holds every column; the key
// columns are read from the value, over the key's, as Flink does) or
// EXCEPT_KEY (the value holds the other columns and the key columns come
// from the key; 'key.fields-prefix' is stripped from the key columns'
// names in the key). The key is decoded with 'key.format' whenever it is
// set, also under ALL: a key the format cannot read fails the message
// (topic, partition, offset) or, with the key format's
// ignore-parse-errors, skips and counts it. Rows are encoded straight from the batch's Arrow
// arrays, into one buffer per batch. With debezium-json the table is a
// changelog: the sink takes -U/+U/-D rows and a scan produces them.
//
// # Upsert
//
// upsert-kafka uses the same source and sink with the PRIMARY KEY as the
// message key: the sink writes +I and +U rows as messages (key, row), -D
// as a tombstone (key, no value) and drops -U. The source reads the topic
// from its start and normalises it into a changelog with the last value of
// every key, kept in the source and in its snapshot (a Go map; fine for
// the topics of tests and quickstarts, not for millions of keys): +I for a
// new key, -U/+U for a changed value (nothing for the same bytes again),
// -D for the tombstone of a known key (the tombstone's key is decoded too:
// a bad one fails). Keys compare as bytes, as Kafka's log compaction
// compares them.
//
// # Options
//
// Common: 'topic' (one, or a ';'-separated list for the source),
// 'topic-pattern' (source), 'properties.bootstrap.servers' (required,
// comma-separated), 'properties.group.id', 'properties.client.id'
// (default 'streamsql'), 'format' or 'value.format', 'key.format',
// 'key.fields', 'key.fields-prefix', 'value.fields-include', and the
// formats' options. Source: 'properties.isolation.level' (read_committed,
// the default, or read_uncommitted), 'properties.auto.offset.reset'
// (earliest, latest or none, the default: where group-offsets starts a
// partition the group has no offset for), 'scan.startup.mode'
// (earliest-offset, the default, latest-offset, group-offsets, timestamp,
// specific-offsets) with 'scan.startup.timestamp-millis' and
// 'scan.startup.specific-offsets' ('partition:0,offset:42;partition:1,
// offset:300'; a partition not listed starts at the group's offset, else
// the earliest), 'scan.bounded.mode' (unbounded, the default,
// latest-offset, timestamp, specific-offsets; a partition not listed ends
// at the latest offset) with 'scan.bounded.timestamp-millis' and
// 'scan.bounded.specific-offsets', 'scan.topic-partition-discovery.interval'.
// Sink: 'sink.delivery-guarantee', 'sink.transactional-id-prefix',
// 'sink.partitioner', 'properties.transaction.timeout.ms',
// 'properties.compression.type' (none, gzip, snappy, lz4, zstd),
// 'properties.linger.ms'. Other 'properties.*' keys are an error (Flink
// passes them to its Kafka client; franz-go has its own options). Message
// headers and metadata columns (offset, partition, timestamp) are not
// supported.
//
// # Goroutines and clients
//
// A source or sink is used by one goroutine, as exec's contracts say; the
// kgo clients run their own goroutines. The source owns two clients (a
// plain one for metadata, offsets and group commits, and the consumer);
// the sink owns its producer ('none', 'at-least-once'), or a plain client
// and one transactional client per open or pre-committed transaction,
// closed when the transaction is committed. Close closes them all.
// Produce errors come back on kgo's goroutines and are returned by the
// next Write, PreCommit or Finish.
//
// Package kafkatest has the tests' broker (kfake, in process, on a
// loopback port) and a datadriven harness shared with upsertkafka. With
// STREAMSQL_TEST_KAFKA=apache the tests run again against Apache Kafka
// 4.4 (scripts/apache-kafka.sh), in subtests named apache.
//
// # Apache Kafka and kafka-dev differ in
//
// What the tests found running against both (kafka-dev is kfake):
//
//   - The markers of an ended transaction. Apache Kafka answers EndTxn
//     once the outcome is in its transaction log and writes the commit
//     markers after (the transaction is PrepareCommit meanwhile), so a
//     read_committed reader right after Commit returned may not see the
//     rows yet: the last stable offset moves a moment later. kafka-dev
//     writes the markers before it answers. Commit means decided, not
//     yet visible; the tests wait until no transaction is PrepareCommit
//     or PrepareAbort before they read.
//   - Topic metadata after CreateTopics and DeleteTopics. Apache Kafka
//     answers before its metadata shows the change: a source looking for
//     partitions right after a topic was deleted and created again may
//     find no topic ("topic 'in' does not exist") where kafka-dev already
//     lists the new one (ErrTopicRecreated). Both are failures of the
//     job; the harness waits for the metadata before it goes on.
//   - The order of partitions in a fetch: Apache Kafka's fetch sessions
//     rotate the partitions they answer first, kafka-dev answers in
//     partition order; a batch of a source with several partitions holds
//     whichever came first (no order across partitions is promised).
//   - The group coordinator of a fresh broker: Apache Kafka creates its
//     offsets topic on the first group request and answers
//     COORDINATOR_NOT_AVAILABLE until it has loaded it (kgo retries for
//     up to 30 s; on a busy machine that can be too short, and a source
//     with 'scan.startup.mode' = 'group-offsets' then fails to start,
//     saying so, and restarts by the job's strategy). kafka-dev answers
//     at once.
//   - Transaction timeouts: Apache Kafka looks for timed-out transactions
//     every 10 s (transaction.abort.timed.out.transaction.cleanup.
//     interval.ms), kafka-dev at the timeout itself. Both abort a
//     transaction pre-committed for a completed checkpoint when the
//     broker (or the job) is away for longer than
//     'properties.transaction.timeout.ms': the restored job's raw EndTxn
//     commit is then answered INVALID_TXN_STATE (Apache Kafka logs "state
//     is COMPLETE_ABORT, but received transaction marker result to send:
//     COMMIT"), and the job fails saying the rows of the checkpoint are
//     lost (ErrTransactionLost), every restart again, until its strategy
//     gives up. Set the timeout above the longest outage to survive (the
//     broker allows up to transaction.max.timeout.ms, 15 min). A broker
//     stopped (SIGSTOP) for 15 s, longer than a 12 s timeout, and resumed
//     answered the requests waiting in its sockets (the flushes and
//     EndTxn of the job's transactions) before it aborted any: the job
//     rode through it without a restart (TestBrokerPaused).
//   - A restart: Apache Kafka keeps its topics, transactions and group
//     offsets in its log dir, so a job whose broker was killed (SIGKILL)
//     and started again restores its checkpoint and commits the
//     transactions its handle names (TestBrokerKilled: the job failed
//     while the broker was away, "beginning transaction ...: unable to
//     initialize a producer ID", then "looking up topic 'out': unable to
//     dial", restarted by its strategy and finished exactly once; a kill
//     shorter than kgo's 30 s of retries may also pass without a
//     failure). A broker restarted so writes the markers of the
//     transactions it had decided only once it has loaded its
//     transaction log, and ListTransactions does not list them before:
//     read_committed readers are held back a while, which the tests wait
//     out (the last stable offsets reaching the end offsets). kafka-dev
//     keeps everything in memory: after a restart the commit is answered
//     INVALID_PRODUCER_ID_MAPPING (the broker lost the transaction) and
//     the topic has a new id.
//   - A node that is broker and controller at once (a combined KRaft
//     node), killed with SIGKILL and started again: its transaction
//     coordinator loads the transaction log from the node's own metadata,
//     in which the node still leads every partition, and sends the
//     markers of the commits it had decided, while the controller, new
//     too, fences the node's new incarnation, leaving its partitions
//     without a leader for seconds until it unfences it. The coordinator
//     skips the markers of leaderless partitions as if they were deleted
//     (its log: "Couldn't find leader endpoint for partitions ... likely
//     deleted already and hence can be skipped") and completes the
//     transaction: it is CompleteCommit, its records have no marker, and
//     the partition's last stable offset stays before them for good, so
//     read_committed readers (and the job's own restored sources) see
//     nothing past it. This is the broker's; nothing a client sends
//     repairs it but an abort through kafka-transactions.sh (which drops
//     those rows). It happened with eligible leader replicas (KIP-966) on
//     and off, about one run in three of TestBrokerKilled on a combined
//     node, and on a broker whose controller runs apart when it came back
//     before the controller had fenced it (within
//     broker.session.timeout.ms of the kill): its metadata still had it
//     lead its partitions, and its new incarnation was fenced and
//     unfenced under the loaded coordinator. A broker that comes back
//     after its controller fenced it (dedicated controllers, as
//     production clusters run, and a restart slower than the session
//     timeout, as a supervisor's is) leads nothing until it is unfenced,
//     and the unfencing gives it the leadership of its partitions in the
//     same metadata batch as that of the transaction log, so no marker is
//     skipped: TestBrokerKilled runs its broker with the controller apart
//     (scripts/apache-kafka.sh --separate-controller, a 2 s session
//     timeout) and starts it again 6 s after the kill. In a replicated
//     cluster another replica leads the partitions of a dead broker, and
//     the markers find it. The script formats log dirs with eligible
//     leader replicas off (eligible.leader.replicas.version=0; 4.4 turns
//     them on for new clusters), so that the single replica of a
//     partition of a broker killed uncleanly leads it again as soon as
//     the broker is unfenced, without waiting for an unclean recovery.
//   - Group offset commits: the source commits a completed checkpoint's
//     positions when it is notified; Apache Kafka's coordinator takes
//     them measurably later than kafka-dev's (it appends them to its
//     offsets topic), so a job killed right after a checkpoint more often
//     leaves the group's offsets behind its checkpoint. The job restores
//     from its checkpoint, not from the group, so this only shows in lag
//     tools. The offsets of a group that has none: kafka-dev answers
//     GROUP_ID_NOT_FOUND, Apache Kafka at times an empty list; the source
//     takes both as no offsets committed.
//   - The classic transaction protocol: kafka-dev serves it on request
//     (--classic-txn, kfake.MaxVersions), Apache Kafka 4.4 serves
//     KIP-890's to franz-go; the tests run both protocols on kafka-dev
//     and Apache Kafka's beside them.
package kafka
