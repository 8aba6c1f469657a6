package kafka

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// lostTxnRE matches the job's error for the transaction of a completed
// checkpoint that the broker aborted (ErrTransactionLost): "the rows of
// checkpoint 1 are lost: they were not committed: transaction ID
// (producer id P, epoch E) is no longer open ...", or "... the broker has
// moved transactional id ID past the transaction's epoch E ...".
var lostTxnRE = regexp.MustCompile(`the rows of checkpoint (\d+) are lost: they were not committed[^:]*: (?:transaction (\S+) \(producer id (\d+), epoch \d+\) is no longer open|the broker has moved transactional id (\S+) past)`)

// faultOutcome is how a job ended after a broker fault.
type faultOutcome struct {
	// restarts are the reasons of the job's restarts, in order.
	restarts []string
	// lostTxn is the transactional id whose rows the job reported lost
	// ("" when it finished); the job then failed by its strategy.
	lostTxn string
}

// runBrokerFault runs the job, applies fault after its first completed
// checkpoint and waits for the job to end. It checks what a
// read_committed reader of out sees: when the job finished, every id
// exactly once; when allowLost and the job failed reporting a checkpoint's
// transaction lost (the broker aborted it by its timeout before the
// commit reached it), every id before those of the lost transaction
// exactly once and none after: nothing committed is lost or duplicated,
// and the job says where its output stops.
func runBrokerFault(t *testing.T, b *broker, name string, txnTimeout time.Duration, sets []string, allowLost bool, fault func(p *proc)) faultOutcome {
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
	waitErr := p.Wait()
	out := p.Output()
	var o faultOutcome
	for _, m := range restartRE.FindAllStringSubmatch(out, -1) {
		o.restarts = append(o.restarts, m[1])
	}
	if waitErr != nil {
		m := lostTxnRE.FindStringSubmatch(out)
		if !allowLost || m == nil {
			t.Fatalf("want the job to finish after the fault, got %v; output:\n%s", waitErr, out)
		}
		o.lostTxn = m[2] + m[4]
		t.Logf("the job failed after %v and %d restarts: the broker aborted transaction %s of checkpoint %s before its commit", p.Took(), len(o.restarts), o.lostTxn, m[1])
	} else {
		t.Logf("the job finished after %v and %d restarts", p.Took(), len(o.restarts))
	}
	for i, r := range o.restarts {
		if i < 5 || i == len(o.restarts)-1 {
			t.Logf("restart %d: %s", i+1, r)
		}
	}
	t.Logf("the broker: %s", brokerState(b, "out"))
	counts := idCounts(t, b, "out", brokerFaultRows)
	if o.lostTxn == "" {
		if err := idProblems(counts, false); err != nil {
			t.Errorf("committed records of out: %v; the broker: %s; output:\n%s", err, brokerState(b, "out"), lastLines(out, 40))
		} else {
			t.Logf("every one of the %d ids committed exactly once", brokerFaultRows)
		}
		return o
	}
	// The job failed at the commit of the lost transaction and never
	// committed a later one (commits go in checkpoint order), so what
	// is committed is every id before the lost transaction's first one,
	// each once, and nothing from there on.
	lost := txnIDs(t, b, "out", o.lostTxn)
	if len(lost) == 0 {
		t.Fatalf("transaction %s wrote no record of out, but the job reported its rows lost", o.lostTxn)
	}
	first := int64(brokerFaultRows + 1)
	for id := range lost {
		first = min(first, id)
	}
	var wrong []int
	nWrong := 0
	for id := 1; id <= brokerFaultRows; id++ {
		want := uint8(0)
		if int64(id) < first {
			want = 1
		}
		if counts[id] != want {
			if nWrong++; len(wrong) < 10 {
				wrong = append(wrong, id)
			}
		}
	}
	if nWrong > 0 {
		t.Errorf("want ids 1..%d committed once and none after (the lost transaction %s wrote %d ids from %d on); %d ids differ, first: %v; output:\n%s",
			first-1, o.lostTxn, len(lost), first, nWrong, wrong, lastLines(out, 40))
	} else {
		t.Logf("ids 1..%d are committed exactly once, the lost transaction's %d ids from %d on and the rest are not", first-1, len(lost), first)
	}
	return o
}

// txnIDs returns the click ids of the records of topic written by the
// producer of transactional id txn (read uncommitted, with the
// transactions' markers, so that the end offsets are reached).
func txnIDs(t *testing.T, b *broker, topic, txn string) map[int64]bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	described, err := adm.DescribeTransactions(ctx, txn)
	if err != nil {
		t.Fatalf("describing transaction %s: %v", txn, err)
	}
	d, ok := described[txn]
	if !ok || d.Err != nil {
		t.Fatalf("describing transaction %s: %v", txn, d.Err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			parts[o.Partition] = kgo.NewOffset().AtStart()
			left[o.Partition] = o.Offset
		}
	})
	rd, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics(), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ids := map[int64]bool{}
	for len(left) > 0 {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s uncommitted: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
			if r.ProducerID != d.ProducerID || r.Attrs.IsControl() {
				return
			}
			if id, ok, err := clickID(r.Value); err == nil && ok {
				ids[id] = true
			}
		})
	}
	return ids
}

// TestBrokerPaused stops the Apache Kafka broker with SIGSTOP for longer
// than the transaction timeout under a running exactly-once job and
// resumes it. The broker then answers the requests waiting in its sockets
// and aborts the transactions it finds timed out, in an order of its own:
// when the commit of a completed checkpoint's transaction comes first,
// the job rides through; when the abort comes first, the rows of that
// checkpoint are lost (Kafka's two-phase commit cannot get them back), and
// the job says so at every restart until its strategy gives up. Either
// way nothing else is lost and nothing is duplicated (runBrokerFault).
// Apache Kafka only (kafka-dev's transactions do not time out while its
// process is stopped).
func TestBrokerPaused(t *testing.T) {
	skipUnlessApache(t)
	onApache(t, 2, []string{"out"}, func(t *testing.T, b *broker) {
		// Restarts that fail the same way follow each other quickly.
		sets := []string{"'restart-strategy.exponential-delay.max-backoff' = '1 s'"}
		o := runBrokerFault(t, b, "paused", shortTxnTimeout, sets, true, func(*proc) {
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
		for _, r := range o.restarts {
			if strings.TrimSpace(r) == "" {
				t.Errorf("a restart without a reason")
			}
		}
		if o.lostTxn != "" && len(o.restarts) == 0 {
			t.Errorf("the job failed without restarting by its strategy")
		}
	})
}

// TestBrokerKilled kills the Apache Kafka broker (SIGKILL) under a running
// exactly-once job and starts it again on the same log dir: the job fails
// while the broker is away, restarts by its strategy saying why, and
// finishes with every record committed exactly once. The broker's KRaft
// controller runs apart and stays up, as in a cluster with dedicated
// controllers: a combined node killed and restarted can hang a committed
// transaction by itself (connectors/kafka/doc.go). Apache Kafka only
// (kafka-dev keeps its data in memory: TestBrokerRestarted).
func TestBrokerKilled(t *testing.T) {
	skipUnlessApache(t)
	onApacheApart(t, 2, []string{"out"}, func(t *testing.T, b *broker) {
		// A checkpoint that cannot flush expires after 5 s and fails the
		// job; the broker starts again once the job has failed (and its
		// restarts fail too while the broker is away).
		sets := []string{"'execution.checkpointing.timeout' = '5 s'"}
		o := runBrokerFault(t, b, "killed", longTxnTimeout, sets, false, func(p *proc) {
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
			// The broker comes back once its controller has fenced the
			// killed one, as a broker that is restarted by hand or by a
			// supervisor does: a broker that registers again before that
			// finds itself leading its partitions in the metadata it
			// loads, starts its transaction coordinator at once, and is
			// fenced and unfenced under it, which can hang a decided
			// commit (connectors/kafka/doc.go).
			time.Sleep(time.Until(killed.Add(3 * testenv.ApacheBrokerSessionTimeout)))
			start := time.Now()
			if err := b.apache.Start(); err != nil {
				t.Fatal(err)
			}
			t.Logf("the broker started again on its log dir in %v", time.Since(start).Round(time.Millisecond))
		})
		if len(o.restarts) == 0 {
			t.Errorf("want the job to restart saying why after the broker was killed; it did not restart")
		}
	})
}

// brokerState describes a topic's end offsets and last stable offsets,
// and, where the last stable offset lags, the producers holding it back
// (records without a marker), their transactions' states and the broker's
// log lines about them, for a failure's message.
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
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Sprintf("end offsets: %v", err)
	}
	lsos, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return fmt.Sprintf("last stable offsets: %v", err)
	}
	hanging := map[int64]bool{}
	ends.Each(func(o kadm.ListedOffset) {
		l, _ := lsos.Lookup(o.Topic, o.Partition)
		fmt.Fprintf(&s, "%s/%d end %d, last stable %d; ", o.Topic, o.Partition, o.Offset, l.Offset)
		if l.Offset < o.Offset {
			desc, pids := heldBack(ctx, b, o.Topic, o.Partition, l.Offset, o.Offset)
			s.WriteString(desc)
			for _, pid := range pids {
				hanging[pid] = true
			}
		}
	})
	txns, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		fmt.Fprintf(&s, "transactions: %v", err)
		return s.String()
	}
	states := map[string]int{}
	var ids []string
	for _, x := range txns.Sorted() {
		states[x.State]++
		if hanging[x.ProducerID] {
			ids = append(ids, x.TxnID)
			fmt.Fprintf(&s, "transaction %s of producer %d is %s; ", x.TxnID, x.ProducerID, x.State)
		}
	}
	fmt.Fprintf(&s, "transactions by state: %v", states)
	if len(ids) > 0 && b.apache != nil {
		s.WriteString("; the broker's log about them:\n" + brokerLogLines(b.apache.Dir, ids, 40))
	}
	return s.String()
}

// brokerLogLines returns the last max lines of the broker's log that name
// one of ids, or the lines about its restarts and transaction markers.
func brokerLogLines(dir string, ids []string, max int) string {
	data, err := os.ReadFile(filepath.Join(dir, "server.log"))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		keep := strings.Contains(line, "marker") || strings.Contains(line, "Kafka Server started") ||
			strings.Contains(line, "Loaded transaction metadata") || strings.Contains(line, "unclean")
		for _, id := range ids {
			keep = keep || strings.Contains(line, id)
		}
		if keep {
			out = append(out, line)
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return strings.Join(out, "\n")
}

// heldBack reads a partition from its last stable offset from to its end
// and describes the producers there: how many have their markers, and
// each without one (its epochs, records), which it returns too.
func heldBack(ctx context.Context, b *broker, topic string, partition int32, from, end int64) (string, []int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics(), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}}))
	if err != nil {
		return err.Error(), nil
	}
	defer cl.Close()
	type producer struct {
		epochs      map[int16]bool
		n           int
		first, last int64
		markers     int
	}
	byID := map[int64]*producer{}
	var order []int64
	next := from
	for next < end && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			p := byID[r.ProducerID]
			if p == nil {
				p = &producer{epochs: map[int16]bool{}, first: -1}
				byID[r.ProducerID] = p
				order = append(order, r.ProducerID)
			}
			p.epochs[r.ProducerEpoch] = true
			if r.Attrs.IsControl() {
				p.markers++
				return
			}
			if p.first < 0 {
				p.first = r.Offset
			}
			p.last = r.Offset
			p.n++
		})
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s/%d held back from %d to %d (read up to %d): ", topic, partition, from, end, next)
	var hanging []int64
	ended := 0
	for _, id := range order {
		p := byID[id]
		if p.markers > 0 {
			ended++
			continue
		}
		hanging = append(hanging, id)
		var epochs []int16
		for e := range p.epochs {
			epochs = append(epochs, e)
		}
		slices.Sort(epochs)
		fmt.Fprintf(&s, "producer %d (epochs %v) %d records %d..%d and no marker; ", id, epochs, p.n, p.first, p.last)
	}
	fmt.Fprintf(&s, "%d producers with their markers; ", ended)
	return s.String(), hanging
}

// skipUnlessApache skips a test of Apache Kafka alone, saying why, unless
// the tests run against Apache Kafka (./test.sh runs them so).
func skipUnlessApache(t *testing.T) {
	if !kafkatest.ApacheWanted(t) {
		t.Skipf("Apache Kafka only: runs with %s=apache", testenv.KafkaEnv)
	}
}
