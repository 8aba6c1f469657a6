package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/internal/testenv"
)

// ApacheName is the name of the subtest that runs against Apache Kafka
// (beside kip890 and classic, kafka-dev's protocols), when
// STREAMSQL_TEST_KAFKA=apache.
const ApacheName = "apache"

// apache is the Apache Kafka broker the tests of one test binary share,
// started on first use: a start takes 15-25 s, so the tests do not get
// one each. Reset empties it for each test.
var apache struct {
	once sync.Once
	dir  string
	k    *testenv.ApacheKafka
	err  error
}

// ApacheWanted reports whether the tests also run against Apache Kafka
// (STREAMSQL_TEST_KAFKA=apache); a wrong value of the variable fails the
// test.
func ApacheWanted(t testing.TB) bool {
	t.Helper()
	ok, err := testenv.ApacheKafkaWanted()
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// Apache returns the shared Apache Kafka broker of the test binary,
// starting it on first use (4 partitions per auto-created topic); the test
// fails when it cannot start. Main stops it.
func Apache(t testing.TB) *testenv.ApacheKafka {
	t.Helper()
	apache.once.Do(func() {
		start := time.Now()
		if apache.dir, apache.err = os.MkdirTemp("", "streamsql-apache-kafka-"); apache.err != nil {
			return
		}
		apache.k, apache.err = testenv.StartApacheKafka(apache.dir, 4)
		if apache.err == nil {
			apache.err = warmUp(apache.k.Addr)
		}
		if apache.err == nil {
			fmt.Fprintf(os.Stderr, "Apache Kafka on %s (log dir %s), started in %v\n", apache.k.Addr, apache.dir,
				time.Since(start).Round(time.Millisecond))
		}
	})
	if apache.err != nil {
		t.Fatalf("starting Apache Kafka: %v", apache.err)
	}
	return apache.k
}

// apart holds the addresses of the brokers ApacheApart started.
var apart sync.Map

// ApacheApart starts an Apache Kafka broker of the test's own whose KRaft
// controller runs in a process apart (scripts/apache-kafka.sh
// --separate-controller), for a test that kills the broker and starts it
// again while its controller stays up, as it does in a cluster with
// dedicated controllers: a node that is broker and controller at once,
// killed, starts its transaction coordinator from its own stale metadata
// before the new controller has fenced and unfenced it, and may then skip
// the markers of a decided commit (connectors/kafka/doc.go). The broker
// auto-creates topics of partitions partitions; it is stopped and its
// data removed when the test ends.
func ApacheApart(t testing.TB, partitions int) *testenv.ApacheKafka {
	t.Helper()
	start := time.Now()
	dir, err := os.MkdirTemp("", "streamsql-apache-kafka-apart-")
	if err != nil {
		t.Fatal(err)
	}
	k, err := testenv.StartApacheKafkaApart(dir, partitions)
	if err == nil {
		err = warmUp(k.Addr)
	}
	if err != nil {
		if k != nil {
			k.Stop()
		}
		os.RemoveAll(dir)
		t.Fatalf("starting Apache Kafka with its controller apart: %v", err)
	}
	apart.Store(k.Addr, true)
	t.Cleanup(func() {
		apart.Delete(k.Addr)
		if err := k.Stop(); err != nil {
			t.Error(err)
		}
		os.RemoveAll(dir)
	})
	t.Logf("Apache Kafka on %s with its controller apart (log dir %s), started in %v", k.Addr, dir,
		time.Since(start).Round(time.Millisecond))
	return k
}

// isApache reports whether addr is an Apache Kafka broker's: the shared
// one or one of ApacheApart's.
func isApache(addr string) bool {
	if apache.k != nil && apache.k.Addr == addr {
		return true
	}
	_, ok := apart.Load(addr)
	return ok
}

// Main runs the tests of a package that uses the shared Apache Kafka
// broker, then stops the broker (if a test started it) and removes its
// data: TestMain(m) { os.Exit(kafkatest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if apache.k != nil {
		if err := apache.k.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if apache.dir != "" {
		os.RemoveAll(apache.dir)
	}
	return code
}

// apacheTests are the names of the running subtests that use Apache
// Kafka; Start gives their tests and subtests the shared broker.
var apacheTests sync.Map

// RunApache runs f as subtest ApacheName of t, whose brokers (Start,
// StartBroker) are the shared Apache Kafka broker.
func RunApache(t *testing.T, f func(t *testing.T)) {
	t.Run(ApacheName, func(t *testing.T) {
		apacheTests.Store(t.Name(), true)
		defer apacheTests.Delete(t.Name())
		f(t)
	})
}

// onApache reports whether t is (inside) a subtest run by RunApache.
func onApache(t testing.TB) bool {
	for name := t.Name(); ; {
		if _, ok := apacheTests.Load(name); ok {
			return true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return false
		}
		name = name[:i]
	}
}

// Reset empties a broker shared by tests that run one after the other:
// it aborts every open transaction (an InitProducerID for its
// transactional id fences and aborts it), deletes every consumer group
// and every topic but the broker's own, and waits until the metadata no
// longer lists them. The transactional ids stay known to the broker (at a
// higher epoch), which no test can tell from new ones.
func Reset(addr string) error {
	return withAdmin(addr, 2*time.Minute, func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
		for {
			txns, err := adm.ListTransactions(ctx, nil, nil)
			if err != nil {
				return fmt.Errorf("listing transactions: %w", err)
			}
			open := 0
			for _, x := range txns.Sorted() {
				switch x.State {
				case "Ongoing":
					open++
					if err := fence(ctx, cl, x.TxnID); err != nil {
						return err
					}
				case "PrepareCommit", "PrepareAbort", "PrepareEpochFence":
					open++ // its markers are being written
				}
			}
			if open == 0 {
				break
			}
			if err := waitABit(ctx, "the open transactions to end"); err != nil {
				return err
			}
		}
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			return fmt.Errorf("listing groups: %w", err)
		}
		if gs := groups.Groups(); len(gs) > 0 {
			resp, err := adm.DeleteGroups(ctx, gs...)
			if err != nil {
				return fmt.Errorf("deleting groups %v: %w", gs, err)
			}
			for _, r := range resp {
				if r.Err != nil && !errors.Is(r.Err, kerr.GroupIDNotFound) {
					return fmt.Errorf("deleting group %s: %w", r.Group, r.Err)
				}
			}
		}
		for {
			topics, err := adm.ListTopics(ctx)
			if err != nil {
				return fmt.Errorf("listing topics: %w", err)
			}
			names := topics.Names()
			if len(names) == 0 {
				return nil
			}
			resp, err := adm.DeleteTopics(ctx, names...)
			if err != nil {
				return fmt.Errorf("deleting topics %v: %w", names, err)
			}
			for _, r := range resp {
				if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
					return fmt.Errorf("deleting topic %s: %w", r.Topic, r.Err)
				}
			}
			if err := waitABit(ctx, "the deleted topics to go"); err != nil {
				return err
			}
		}
	})
}

// fence sends an InitProducerID for a transactional id, which aborts its
// open transaction.
func fence(ctx context.Context, cl *kgo.Client, id string) error {
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("aborting the transaction of %s: %w", id, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil {
			return nil
		}
		if !errors.Is(err, kerr.ConcurrentTransactions) && !errors.Is(err, kerr.CoordinatorLoadInProgress) {
			return fmt.Errorf("aborting the transaction of %s: %w", id, err)
		}
		if err := waitABit(ctx, "the transaction of "+id+" to be abortable"); err != nil {
			return err
		}
	}
}

// WaitTxnsSettled waits until no transaction of the broker is between
// its end and its markers (PrepareCommit, PrepareAbort): Apache Kafka
// answers EndTxn once the outcome is in its transaction log and writes
// the markers after, so a read_committed reader right after a commit may
// not see the rows yet (kfake writes the markers before it answers).
func WaitTxnsSettled(addr string) error {
	return withAdmin(addr, 2*time.Minute, func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
		for {
			txns, err := adm.ListTransactions(ctx, nil, []string{"PrepareCommit", "PrepareAbort"})
			if err != nil {
				return fmt.Errorf("listing transactions: %w", err)
			}
			if len(txns.Sorted()) == 0 {
				return nil
			}
			if err := waitABit(ctx, "the transactions' markers"); err != nil {
				return err
			}
		}
	})
}

// warmUp waits until the broker coordinates consumer groups (its offsets
// topic is created on first use): a fetch of a group's offsets answers
// GROUP_ID_NOT_FOUND, not COORDINATOR_NOT_AVAILABLE.
func warmUp(addr string) error {
	return withAdmin(addr, 2*time.Minute, func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
		for {
			_, err := adm.FetchOffsets(ctx, "_streamsql_warm_up")
			if err == nil || errors.Is(err, kerr.GroupIDNotFound) {
				return nil
			}
			if err := waitABit(ctx, fmt.Sprintf("the group coordinator (%v)", err)); err != nil {
				return err
			}
		}
	})
}

// withAdmin runs f with a client of the broker at addr and its admin
// client, under a context that ends after timeout.
func withAdmin(addr string, timeout time.Duration, f func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
	if err != nil {
		return err
	}
	defer cl.Close()
	return f(ctx, cl, kadm.NewClient(cl))
}

// waitABit waits before the next look at the broker's state.
func waitABit(ctx context.Context, what string) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
	case <-time.After(100 * time.Millisecond):
		return nil
	}
}

// CreateTopics creates topics of partitions partitions each (one
// replica), those that do not exist yet.
func CreateTopics(addr string, partitions int32, topics ...string) error {
	if len(topics) == 0 {
		return nil
	}
	return withAdmin(addr, time.Minute, func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
		resp, err := adm.CreateTopics(ctx, partitions, 1, nil, topics...)
		if err != nil {
			return fmt.Errorf("creating topics %v: %w", topics, err)
		}
		for _, r := range resp.Sorted() {
			if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
				return fmt.Errorf("creating topic %s: %w", r.Topic, r.Err)
			}
		}
		return waitTopics(ctx, adm, true, topics...)
	})
}

// WaitTopics waits until the broker's metadata lists every topic with a
// leader for each partition (exist) or none of them (!exist): Apache
// Kafka's answers to CreateTopics and DeleteTopics come before every
// broker's metadata says so, kfake's after.
func WaitTopics(addr string, exist bool, topics ...string) error {
	return withAdmin(addr, time.Minute, func(ctx context.Context, cl *kgo.Client, adm *kadm.Client) error {
		return waitTopics(ctx, adm, exist, topics...)
	})
}

func waitTopics(ctx context.Context, adm *kadm.Client, exist bool, topics ...string) error {
	for {
		md, err := adm.Metadata(ctx, topics...)
		if err == nil {
			ready := true
			for _, tp := range topics {
				d, ok := md.Topics[tp]
				if !exist {
					if ok && d.Err == nil {
						ready = false
					}
					continue
				}
				if !ok || d.Err != nil || len(d.Partitions) == 0 {
					ready = false
					break
				}
				for _, p := range d.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
			}
			if ready {
				return nil
			}
		}
		if err := waitABit(ctx, fmt.Sprintf("topics %v to exist (%v) in the metadata", topics, exist)); err != nil {
			return err
		}
	}
}
