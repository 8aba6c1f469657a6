package kafka

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// faultJob writes generated rows into an exactly-once kafka table on topic
// out, with 200ms checkpoints and no restarts: the first failure ends the
// run, and the run's output names it.
func faultJob(b *broker, name, out string) string {
	return "CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '2000');\n" +
		fmt.Sprintf("CREATE TABLE out (id BIGINT, name STRING) WITH (\n  'connector' = 'kafka',\n  'topic' = '%s',\n"+
			"  'properties.bootstrap.servers' = '%s',\n  'format' = 'json',\n"+
			"  'sink.delivery-guarantee' = 'exactly-once',\n  'sink.transactional-id-prefix' = '%s-tx'\n);\n", out, b.addr, name) +
		"SET 'execution.checkpointing.interval' = '200ms';\n" +
		"SET 'restart-strategy.type' = 'none';\n" +
		fmt.Sprintf("SET 'pipeline.name' = '%s';\n", name) +
		"INSERT INTO out SELECT * FROM gen;\n"
}

// runUntilFault starts the job, waits for its first completed checkpoint
// (rows committed to the topic), applies fault and returns the output of
// the run, which must fail with exit status 1.
func runUntilFault(t *testing.T, b *broker, name string, fault func()) string {
	t.Helper()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	file := writeFile(t, dir, "job.sql", faultJob(b, name, "out"))
	p := startEngine(t, dataDir, file, nil)
	p.watchCheckpoints(dataDir, name, 0)
	p.waitFirstCheckpoint()
	if p.firstCheckpoint.Load() == 0 {
		t.Fatalf("the job ended before its first checkpoint: %v; output:\n%s", p.Wait(), p.Output())
	}
	fault()
	err := p.Wait()
	out := p.Output()
	if code := exitCode(err); code != 1 {
		t.Fatalf("want the job to fail (exit status 1), got %v; output:\n%s", err, out)
	}
	return out
}

// TestBrokerRestarted restarts kafka-dev (which keeps everything in
// memory) under a running exactly-once job: the job fails with an error
// that says the broker lost the transaction or the topic, not that a
// transaction timed out. kafka-dev only: Apache Kafka keeps its data
// across a restart (TestApacheBrokerKilled restarts it on its log dir
// under a running job).
func TestBrokerRestarted(t *testing.T) {
	forKafkaDev(t, 1, nil, func(t *testing.T, b *broker) {
		out := runUntilFault(t, b, "restarted", func() { b.restart(t) })
		if !strings.Contains(out, "no longer knows transaction") && !strings.Contains(out, "topic 'out' was deleted") {
			t.Fatalf("the error should say the broker lost the transaction or the topic; output:\n%s", out)
		}
		if strings.Contains(out, "by its timeout") || strings.Contains(out, "when it timed out") {
			t.Fatalf("the error blames a timeout; output:\n%s", out)
		}
		t.Logf("failed as expected:\n%s", lastLines(out, 3))
	})
}

// TestSinkTopicRecreated deletes the sink topic under a running job; the
// producer's next write creates it again (the broker auto-creates topics)
// with a new topic id, and the job fails saying so.
func TestSinkTopicRecreated(t *testing.T) {
	forEachProtocol(t, 1, nil, func(t *testing.T, b *broker) {
		out := runUntilFault(t, b, "recreated", func() { deleteTopic(t, b, "out") })
		if !strings.Contains(out, "topic 'out' was deleted") {
			t.Fatalf("the error should say the topic was deleted (and created again); output:\n%s", out)
		}
		t.Logf("failed as expected:\n%s", lastLines(out, 3))
	})
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// deleteTopic deletes topic (kcat cannot).
func deleteTopic(t *testing.T, b *broker, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).DeleteTopics(context.Background(), topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("deleting topic %s: %v", topic, err)
	}
}
