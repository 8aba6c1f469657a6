package kafka

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
)

// broker is a `streamsql kafka-dev` process, which lives for one test and
// is never killed while the test runs (its data is in memory), or the
// Apache Kafka broker the tests share (apache set), emptied for each test.
type broker struct {
	addr       string // host:port
	partitions int
	classic    bool
	cmd        *exec.Cmd
	out        *testenv.SyncBuffer
	done       chan struct{}
	apache     *testenv.ApacheKafka
}

// startApache empties the shared Apache Kafka broker (started on first
// use) for a test and creates topics with the given number of partitions.
func startApache(t *testing.T, partitions int, topics ...string) *broker {
	t.Helper()
	k := kafkatest.Apache(t)
	if err := kafkatest.Reset(k.Addr); err != nil {
		t.Fatalf("emptying Apache Kafka on %s: %v", k.Addr, err)
	}
	if err := kafkatest.CreateTopics(k.Addr, int32(partitions), topics...); err != nil {
		t.Fatal(err)
	}
	t.Logf("Apache Kafka on %s (%d partitions per topic)", k.Addr, partitions)
	return &broker{addr: k.Addr, partitions: partitions, apache: k}
}

// ensureTopic creates topic with the broker's partition count unless it
// exists, as kafka-dev auto-creates topics (Apache Kafka's auto-created
// topics have its own default).
func (b *broker) ensureTopic(t *testing.T, topic string) {
	t.Helper()
	if b.apache == nil {
		return
	}
	if err := kafkatest.CreateTopics(b.addr, int32(b.partitions), topic); err != nil {
		t.Fatal(err)
	}
}

// settle waits, on Apache Kafka, until every ended transaction has its
// markers written and topic's last stable offsets have reached its end
// offsets, so that a read_committed reader sees every committed record:
// Apache Kafka answers EndTxn before it writes the markers, and a broker
// restarted on its log dir writes those of the transactions it had
// decided only once it has loaded its transaction log (ListTransactions
// does not list them before). The tests read after their jobs ended: a
// transaction still open then is a hanging one, and fails the test.
func (b *broker) settle(t *testing.T, topic string) {
	t.Helper()
	if b.apache == nil {
		return
	}
	if err := kafkatest.WaitTxnsSettled(b.addr); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		var stable kadm.ListedOffsets
		if err == nil {
			stable, err = adm.ListCommittedOffsets(ctx, topic)
		}
		if err == nil {
			err = stable.Error()
		}
		behind := 0
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) {
				if s, ok := stable.Lookup(o.Topic, o.Partition); !ok || s.Offset < o.Offset {
					behind++
				}
			})
			if behind == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the last stable offsets of %s did not reach its end offsets (a transaction left open?): %v; the broker: %s", topic, err, brokerState(b, topic))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startBroker starts kafka-dev on a free port with the given number of
// partitions per topic, creating topics at start, and stops it (SIGTERM)
// when the test ends.
func startBroker(t *testing.T, partitions int, classic bool, topics ...string) *broker {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // the free port may be taken in between
		b, err := tryStartBroker(partitions, classic, topics)
		if err == nil {
			t.Cleanup(b.stop)
			mode := "KIP-890"
			if classic {
				mode = "classic"
			}
			t.Logf("kafka-dev on %s (%d partitions, %s transactions)", b.addr, partitions, mode)
			return b
		}
		lastErr = err
	}
	t.Fatalf("starting kafka-dev: %v", lastErr)
	return nil
}

// restart stops the broker and starts an empty one on the same port, as a
// user restarting kafka-dev would: every topic, message and transaction is
// gone.
func (b *broker) restart(t *testing.T) {
	t.Helper()
	b.stop()
	_, p, _ := net.SplitHostPort(b.addr)
	port, _ := strconv.Atoi(p)
	var lastErr error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		nb, err := tryStartBrokerOn(port, b.partitions, b.classic, nil)
		if err == nil {
			*b = *nb
			t.Logf("kafka-dev restarted on %s", b.addr)
			return
		}
		lastErr = err // the port may be held a moment longer
	}
	t.Fatalf("restarting kafka-dev on port %d: %v", port, lastErr)
}

func tryStartBroker(partitions int, classic bool, topics []string) (*broker, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return tryStartBrokerOn(port, partitions, classic, topics)
}

func tryStartBrokerOn(port, partitions int, classic bool, topics []string) (*broker, error) {
	args := []string{"kafka-dev", "--port", strconv.Itoa(port), "--partitions", strconv.Itoa(partitions)}
	if classic {
		args = append(args, "--classic-txn")
	}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	b := &broker{addr: "127.0.0.1:" + strconv.Itoa(port), partitions: partitions, classic: classic,
		cmd: exec.Command(binary, args...), done: make(chan struct{}), out: &testenv.SyncBuffer{}}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	b.cmd.Stderr = b.out
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			b.out.Write(append(sc.Bytes(), '\n'))
			if !seen && strings.HasPrefix(sc.Text(), "kafka-dev: serving Kafka on") {
				seen = true
				ready <- true
			}
		}
		io.Copy(b.out, stdout)
		if !seen {
			ready <- false
		}
		b.cmd.Wait()
		close(b.done)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-b.done
			return nil, fmt.Errorf("kafka-dev %s exited: %s", strings.Join(args, " "), b.out.String())
		}
	case <-time.After(20 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
		return nil, fmt.Errorf("kafka-dev %s: not ready after 20s: %s", strings.Join(args, " "), b.out.String())
	}
	return b, nil
}

// stop ends the broker with SIGTERM (SIGKILL if it does not stop); the
// shared Apache Kafka broker stays.
func (b *broker) stop() {
	if b.apache != nil {
		return
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
	}
}

// alive fails the test if the broker process has exited.
func (b *broker) alive(t *testing.T) {
	t.Helper()
	if b.apache != nil {
		pid, err := b.apache.Pid()
		if err == nil {
			err = syscall.Kill(pid, 0)
		}
		if err != nil {
			t.Fatalf("Apache Kafka on %s does not run: %v (logs in %s)", b.addr, err, b.apache.Dir)
		}
		return
	}
	select {
	case <-b.done:
		t.Fatalf("kafka-dev on %s exited during the test: %s", b.addr, b.out.String())
	default:
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
