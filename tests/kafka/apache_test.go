package kafka

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
)

// Broker faults on Apache Kafka, which keeps its data across a restart
// (kafka-dev loses it: TestBrokerRestarted). Both tests run a bounded
// datagen job (ids 1..brokerFaultRows, brokerFaultRate rows/s) into an
// exactly-once kafka table with a restart strategy, apply the fault once
// the job has completed a checkpoint, and
// check with kcat (read_committed) that every id is committed exactly
// once after the job finished.
const (
	brokerFaultRows = 60_000
	brokerFaultRate = 2_000
	// shortTxnTimeout is the sink's 'properties.transaction.timeout.ms'
	// when the broker is paused: the smallest the sink accepts with 200ms
	// checkpoints (TimeoutMargin).
	shortTxnTimeout = 12 * time.Second
	// longTxnTimeout is the sink's transaction timeout when the broker is
	// killed and restarted: longer than the broker is away (a restart
	// takes up to a minute on a busy machine) with the job's restarts.
	// A transaction pre-committed for a checkpoint that outlives its
	// timeout is aborted by the broker, and its rows are lost (the job
	// says so and fails: TestExactlyOnceLostTransactionIsAnError).
	longTxnTimeout = 5 * time.Minute
	// faultRunTimeout bounds the faulted run: the job's 30 s, the fault,
	// the broker's restart (up to a minute on a busy machine) and the
	// restarts of the job.
	faultRunTimeout = 8 * time.Minute
)

// brokerFaultJob is the job file of the broker fault tests.
func brokerFaultJob(b *broker, name string, txnTimeout time.Duration, sets ...string) string {
	var more strings.Builder
	for _, o := range sets {
		fmt.Fprintf(&more, "SET %s;\n", o)
	}
	return fmt.Sprintf(`CREATE TABLE gen (click_id BIGINT, name STRING) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '%d',
  'fields.click_id.kind' = 'sequence',
  'fields.click_id.start' = '1',
  'fields.click_id.end' = '%d',
  'fields.name.length' = '8'
);
CREATE TABLE out (click_id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'out',
  'properties.bootstrap.servers' = '%s',
  'properties.transaction.timeout.ms' = '%d',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '%s-tx'
);
SET 'execution.checkpointing.interval' = '200ms';
SET 'restart-strategy.type' = 'exponential-delay';
SET 'restart-strategy.exponential-delay.initial-backoff' = '1 s';
SET 'restart-strategy.exponential-delay.max-backoff' = '30 s';
SET 'pipeline.name' = '%s';
%sINSERT INTO out SELECT * FROM gen;
`, brokerFaultRate, brokerFaultRows, b.addr, txnTimeout.Milliseconds(), name, name, more.String())
}

// restartRE matches the engine's line for a restart of a failed job
// ("[WARN] job.sql:24:1: job ID (NAME) failed: CAUSE; restarting in 1s
// (restart 1)").
var restartRE = regexp.MustCompile(`(?m)^\[WARN\] (?:\S+: )?job \S+ \(\S+\) failed: (.+); restarting in `)

// runBrokerFault runs the job, applies fault after its first completed
// checkpoint, waits for the job to finish and checks its committed
// output; it returns the reasons of the job's restarts.
func runBrokerFault(t *testing.T, b *broker, name string, txnTimeout time.Duration, sets []string, fault func(p *proc)) []string {
	t.Helper()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	file := writeFile(t, dir, "job.sql", brokerFaultJob(b, name, txnTimeout, sets...))
	p := &proc{Proc: testenv.StartProc(t, faultRunTimeout, nil, binary, "--data-dir", dataDir, "-f", file)}
	p.watchCheckpoints(dataDir, name, 0)
	p.waitFirstCheckpoint()
	if p.firstCheckpoint.Load() == 0 {
		t.Fatalf("the job ended before its first checkpoint: %v; output:\n%s", p.Wait(), p.Output())
	}
	fault(p)
	if err := p.Wait(); err != nil {
		t.Fatalf("want the job to finish after the fault, got %v; output:\n%s", err, p.Output())
	}
	out := p.Output()
	var reasons []string
	for _, m := range restartRE.FindAllStringSubmatch(out, -1) {
		reasons = append(reasons, m[1])
	}
	t.Logf("the job finished after %v and %d restarts", p.Took(), len(reasons))
	for i, r := range reasons {
		if i < 5 || i == len(reasons)-1 {
			t.Logf("restart %d: %s", i+1, r)
		}
	}
	t.Logf("the broker: %s", brokerState(b, "out"))
	counts := idCounts(t, b, "out", brokerFaultRows)
	if err := idProblems(counts, false); err != nil {
		t.Errorf("committed records of out: %v; the broker: %s; output:\n%s", err, brokerState(b, "out"), lastLines(out, 40))
	} else {
		t.Logf("every one of the %d ids committed exactly once", brokerFaultRows)
	}
	return reasons
}

// TestBrokerPaused stops the Apache Kafka broker with SIGSTOP for longer
// than the transaction timeout under a running exactly-once job and
// resumes it: the broker then aborts the transactions that timed out, the
// job restarts from its newest checkpoint where it must, and no committed
// record is lost or duplicated. Apache Kafka only (kafka-dev runs in the
// test's process tree too, but its transactions do not time out).
func TestBrokerPaused(t *testing.T) {
	if !apacheLogged(t) {
		return
	}
	onApache(t, 2, []string{"out"}, func(t *testing.T, b *broker) {
		reasons := runBrokerFault(t, b, "paused", shortTxnTimeout, nil, func(*proc) {
			if err := b.apache.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					if err := b.apache.Signal(syscall.SIGCONT); err != nil {
						t.Error(err)
					}
				}
			}
			defer resume()
			// The fault itself lasts this long: past the transaction
			// timeout, so that the broker finds the open transactions
			// timed out when it runs again.
			held := shortTxnTimeout + 3*time.Second
			time.Sleep(held)
			resume()
			t.Logf("the broker was stopped (SIGSTOP) for %v, then resumed", held)
		})
		for _, r := range reasons {
			if strings.TrimSpace(r) == "" {
				t.Errorf("a restart without a reason")
			}
		}
	})
}

// TestBrokerKilled kills the Apache Kafka broker (SIGKILL) under a running
// exactly-once job and starts it again on the same log dir: the job fails
// while the broker is away, restarts by its strategy saying why, and
// finishes with every record committed exactly once. Apache Kafka only
// (kafka-dev keeps its data in memory: TestBrokerRestarted).
func TestBrokerKilled(t *testing.T) {
	if !apacheLogged(t) {
		return
	}
	onApache(t, 2, []string{"out"}, func(t *testing.T, b *broker) {
		// A checkpoint that cannot flush expires after 5 s and fails the
		// job; the broker starts again once the job has failed (and its
		// restarts fail too while the broker is away).
		sets := []string{"'execution.checkpointing.timeout' = '5 s'"}
		reasons := runBrokerFault(t, b, "killed", longTxnTimeout, sets, func(p *proc) {
			if err := b.apache.Kill(); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			for !restartRE.MatchString(p.Output()) {
				select {
				case <-p.Done():
					t.Fatalf("the job ended while the broker was away: %v; output:\n%s", p.Wait(), p.Output())
				case <-time.After(50 * time.Millisecond):
				}
			}
			t.Logf("the job failed %v after the broker was killed (SIGKILL)", time.Since(killed).Round(time.Millisecond))
			start := time.Now()
			if err := b.apache.Start(); err != nil {
				t.Fatal(err)
			}
			t.Logf("the broker started again on its log dir in %v", time.Since(start).Round(time.Millisecond))
		})
		if len(reasons) == 0 {
			t.Errorf("want the job to restart saying why after the broker was killed; it did not restart")
		}
	})
}

// brokerState describes a topic's end offsets and last stable offsets
// and the broker's transactions, for a failure's message.
func brokerState(b *broker, topic string) string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics())
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s strings.Builder
	if ends, err := adm.ListEndOffsets(ctx, topic); err == nil {
		ends.Each(func(o kadm.ListedOffset) { fmt.Fprintf(&s, "%s/%d end %d; ", o.Topic, o.Partition, o.Offset) })
	} else {
		fmt.Fprintf(&s, "end offsets: %v; ", err)
	}
	if lsos, err := adm.ListCommittedOffsets(ctx, topic); err == nil {
		lsos.Each(func(o kadm.ListedOffset) { fmt.Fprintf(&s, "%s/%d last stable %d; ", o.Topic, o.Partition, o.Offset) })
	} else {
		fmt.Fprintf(&s, "last stable offsets: %v; ", err)
	}
	if txns, err := adm.ListTransactions(ctx, nil, nil); err == nil {
		for _, x := range txns.Sorted() {
			fmt.Fprintf(&s, "transaction %s %s (producer %d); ", x.TxnID, x.State, x.ProducerID)
		}
	} else {
		fmt.Fprintf(&s, "transactions: %v", err)
	}
	return s.String()
}

// apacheLogged reports whether the Apache Kafka tests run, and logs why
// not when they do not.
func apacheLogged(t *testing.T) bool {
	if !kafkatest.ApacheWanted(t) {
		t.Logf("Apache Kafka only: runs with %s=apache", testenv.KafkaEnv)
		return false
	}
	return true
}
