package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
)

// laterJob copies the clicks of topic 'later', which does not exist when
// the job starts, into an exactly-once kafka table on topic out; the
// source reads on (unbounded) and looks for new partitions every 200ms.
func laterJob(b *broker) string {
	return fmt.Sprintf("CREATE TABLE clicks (\n  %s\n) WITH (\n  'connector' = 'kafka',\n  'topic' = 'later',\n"+
		"  'properties.bootstrap.servers' = '%s',\n  'scan.startup.mode' = 'latest-offset',\n"+
		"  'scan.topic-partition-discovery.interval' = '200ms',\n  'format' = 'json'\n);\n", clickColumns, b.addr) +
		fmt.Sprintf("CREATE TABLE out (\n  %s\n) WITH (\n  %s\n);\n", clickColumns,
			jobSpec{name: "later", guarantee: "exactly-once", out: "out"}.sinkOpts(b, "kafka", "'format' = 'json'")) +
		"SET 'execution.checkpointing.interval' = '200ms';\n" +
		"SET 'pipeline.name' = 'later';\n" +
		"INSERT INTO out SELECT * FROM clicks;\n"
}

// TestTopicCreatedLater starts a job whose input topic does not exist yet:
// it runs and says it waits for the topic. The topic is created with one
// partition, then given two more while the job runs, and the engine is
// killed (SIGKILL) at a random moment after the new partitions got
// records, before or after a checkpoint that has them. The run that
// restores the last checkpoint reads a partition that checkpoint does not
// know from its earliest offset: every click reaches the output exactly
// once.
func TestTopicCreatedLater(t *testing.T) {
	forEachProtocol(t, 1, []string{"out"}, func(t *testing.T, b *broker) {
		rng := testenv.NewRand(t, seed, seedEnv)
		dir := t.TempDir()
		dataDir := filepath.Join(dir, "data")
		file := writeFile(t, dir, "job.sql", laterJob(b))
		const perStep = 3000
		p := startEngine(t, dataDir, file, nil)
		waitOutput(t, p, "waits: kafka clicks waits for topic 'later' to be created")

		if err := kafkatest.CreateTopics(b.addr, 1, "later"); err != nil {
			t.Fatal(err)
		}
		produceClicks(t, b, "later", 0, 1, perStep)
		waitOutput(t, p, "no longer waits")
		waitCheckpointAfter(t, p, dataDir, "later", latestCheckpoint(t, dataDir, "later"))

		addPartitions(t, b, "later", 2)
		produceClicks(t, b, "later", 1, perStep+1, 2*perStep)
		produceClicks(t, b, "later", 2, 2*perStep+1, 3*perStep)
		kill := time.Since(p.Start) + time.Duration(rng.Int64N(int64(time.Second)))
		if !p.KillAfter(kill) {
			t.Fatalf("the job ended before it was killed: %v; output:\n%s", p.Wait(), p.Output())
		}
		t.Logf("killed %v after the start, at checkpoint %d", kill.Round(time.Millisecond), latestCheckpoint(t, dataDir, "later"))

		p = startEngine(t, dataDir, file, nil)
		produceClicks(t, b, "later", 0, 3*perStep+1, 4*perStep)
		const n = 4 * perStep
		waitCommitted(t, b, p, "out", n)
		p.Signal(syscall.SIGKILL)
		p.Wait()
		if restoredFrom(p.Output(), "later") == 0 {
			t.Errorf("the second run did not restore a checkpoint; output:\n%s", p.Output())
		}
		if err := idProblems(idCounts(t, b, "out", n), false); err != nil {
			t.Errorf("committed records of out: %v", err)
		}
	})
}

// waitOutput waits until the run's output has want; the run ending first
// fails the test.
func waitOutput(t *testing.T, p *proc, want string) {
	t.Helper()
	for !strings.Contains(p.Output(), want) {
		select {
		case <-p.Done():
			t.Fatalf("the run ended without saying %q: %v; output:\n%s", want, p.Wait(), p.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitCheckpointAfter waits until the job completes a checkpoint newer
// than after.
func waitCheckpointAfter(t *testing.T, p *proc, dataDir, job string, after int64) {
	t.Helper()
	for latestCheckpoint(t, dataDir, job) <= after {
		select {
		case <-p.Done():
			t.Fatalf("the run ended before checkpoint %d: %v; output:\n%s", after+1, p.Wait(), p.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitCommitted waits until topic holds at least n committed records.
func waitCommitted(t *testing.T, b *broker, p *proc, topic string, n int) {
	t.Helper()
	for consumeCommitted(t, b, topic, func(record) error { return nil }) < n {
		select {
		case <-p.Done():
			t.Fatalf("the run ended before %d records were committed to %s: %v; output:\n%s", n, topic, p.Wait(), p.Output())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// produceClicks writes the clicks from..to (inclusive) to a partition of
// topic.
func produceClicks(t *testing.T, b *broker, topic string, partition int32, from, to int) {
	t.Helper()
	cl := kafkatest.Client(t, b.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for id := from; id <= to; id++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: clickJSON(nil, id, apps)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing clicks %d..%d to %s partition %d: %v", from, to, topic, partition, err)
	}
}

// addPartitions gives topic n more partitions and waits until the broker's
// metadata lists them.
func addPartitions(t *testing.T, b *broker, topic string, n int) {
	t.Helper()
	adm := kadm.NewClient(kafkatest.Client(t, b.addr))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := adm.CreatePartitions(ctx, n, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("adding %d partitions to %s: %v", n, topic, err)
	}
	if err := kafkatest.WaitTopics(b.addr, true, topic); err != nil {
		t.Fatal(err)
	}
}

// TestServerWaitsForTopic submits the job of TestTopicCreatedLater to
// `streamsql server`: while its topic does not exist, GET /api/v1/jobs
// says the job is RUNNING and what it waits for, SHOW JOBS says so in its
// status, and the log says when the wait starts and ends.
func TestServerWaitsForTopic(t *testing.T) {
	forKafkaDev(t, 1, []string{"out"}, func(t *testing.T, b *broker) {
		dir := t.TempDir()
		r := &jobRun{t: t, b: b, spec: jobSpec{name: "later"}, dataDir: filepath.Join(dir, "data")}
		r.file = writeFile(t, dir, "job.sql", laterJob(b))
		s := &serverRun{jobRun: r}
		p := s.startServer(nil)
		defer func() {
			p.Signal(syscall.SIGKILL)
			<-p.Done()
		}()
		if !s.healthy(p) {
			t.Fatalf("the server exited: %v; output:\n%s", p.Wait(), p.Output())
		}
		s.submit(p)
		const want = "kafka clicks waits for topic 'later' to be created"
		waiting := func() (string, []string) {
			resp, err := http.Get(s.api(p, "/jobs"))
			if err != nil {
				t.Fatalf("GET /api/v1/jobs: %v; output:\n%s", err, p.Output())
			}
			defer resp.Body.Close()
			var out struct {
				Jobs []struct {
					Name, Status string
					Waiting      []string
				} `json:"jobs"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatalf("GET /api/v1/jobs: %v", err)
			}
			for _, j := range out.Jobs {
				if j.Name == "later" {
					return j.Status, j.Waiting
				}
			}
			return "", nil
		}
		for {
			status, w := waiting()
			if len(w) > 0 {
				if status != "RUNNING" || len(w) != 1 || w[0] != want {
					t.Fatalf("GET /api/v1/jobs: status %s, waiting %q; want RUNNING, [%q]", status, w, want)
				}
				break
			}
			if status != "" && status != "RUNNING" {
				t.Fatalf("the job is %s, not RUNNING and waiting; output:\n%s", status, p.Output())
			}
			time.Sleep(20 * time.Millisecond)
		}
		resp, err := http.Post(s.api(p, "/statements"), "text/plain", strings.NewReader("SHOW JOBS;"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "RUNNING ("+want+")") {
			t.Errorf("SHOW JOBS does not say RUNNING (%s): %s", want, body)
		}
		waitOutput(t, p.proc, `msg="job waits"`)

		if err := kafkatest.CreateTopics(b.addr, 1, "later"); err != nil {
			t.Fatal(err)
		}
		for {
			if _, w := waiting(); len(w) == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitOutput(t, p.proc, `msg="job no longer waits"`)
	})
}
