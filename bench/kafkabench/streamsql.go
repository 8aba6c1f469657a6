package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// jobSQL is the streamsql job: Kafka -> COUNT(*) by app_id -> upsert-kafka.
func jobSQL(c config, b *broker, name, topic string, exactlyOnce bool) string {
	guarantee := "at-least-once"
	mode := "AT_LEAST_ONCE"
	txn := ""
	if exactlyOnce {
		guarantee, mode = "exactly-once", "EXACTLY_ONCE"
		txn = fmt.Sprintf(",\n  'sink.transactional-id-prefix' = '%s'", name)
	}
	return fmt.Sprintf(`CREATE TABLE clicks (
  click_id BIGINT,
  app_id   STRING,
  user_id  BIGINT,
  ts       TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '%[1]s',
  'properties.group.id' = '%[2]s',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);
CREATE TABLE pv (
  app_id STRING,
  pv     BIGINT,
  PRIMARY KEY (app_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '%[3]s',
  'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json',
  'value.format' = 'json',
  'sink.delivery-guarantee' = '%[4]s'%[5]s
);
SET 'execution.checkpointing.interval' = '%[6]dms';
SET 'execution.checkpointing.mode' = '%[7]s';
SET 'parallelism.default' = '%[8]d';
SET 'pipeline.name' = '%[2]s';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '50000';
INSERT INTO pv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id;
`, b.addr, name, topic, guarantee, txn, c.checkpoint.Milliseconds(), mode, c.parallelism)
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// runStreamsql runs the count job with `streamsql -f` and measures from
// the start of the process until the committed output is complete.
func runStreamsql(ctx context.Context, c config, b *broker, in *input, work string, exactlyOnce bool, round int) result {
	name, topic, label := fmt.Sprintf("bench-alo-%d", round), fmt.Sprintf("pv_alo_%d", round), nameALO
	if exactlyOnce {
		name, topic, label = fmt.Sprintf("bench-eo-%d", round), fmt.Sprintf("pv_eo_%d", round), nameEO
	}
	note := fmt.Sprintf("parallelism %d, %v checkpoints, Pebble state, mini-batches of 1 s / 50,000 rows", c.parallelism, c.checkpoint)
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{name: label, err: err}
	}
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(jobSQL(c, b, name, topic, exactlyOnce)), 0o644); err != nil {
		return result{name: label, err: err}
	}
	out := &lockedBuffer{}
	cmd := exec.Command(c.streamsql, "--data-dir", filepath.Join(dir, "data"), "-f", file)
	cmd.Stdout, cmd.Stderr = out, out
	r := runChild(ctx, b, in, child{label: label, note: note, cmd: cmd, out: out, topic: topic, endsItself: true})
	if s := strings.TrimSpace(out.String()); s != "" && r.err == nil {
		logf("%s output:\n%s", label, s)
	}
	return r
}

// scrapeEvery is how often the eo-server contender reads the server's
// /metrics, as a Prometheus server would (its default is every minute).
const scrapeEvery = time.Second

// runStreamsqlServer runs the exactly-once count job in `streamsql
// server`: the server is started on a data dir of its own, the job file
// is sent to POST /api/v1/statements once the API answers, and /metrics
// is read every scrapeEvery while the job runs. It is measured as
// runStreamsql measures `streamsql -f`, from the start of the process
// until the committed output is complete; the server, which outlives its
// jobs, is killed then.
func runStreamsqlServer(ctx context.Context, c config, b *broker, in *input, work string, round int) result {
	name, topic, label := fmt.Sprintf("bench-eo-server-%d", round), fmt.Sprintf("pv_eo-server_%d", round), nameEOServer
	note := fmt.Sprintf("the job of %s submitted to `streamsql server` through its REST API, /metrics read every %v", nameEO, scrapeEvery)
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{name: label, err: err}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{name: label, err: err}
	}
	addr := l.Addr().String()
	l.Close()
	out := &lockedBuffer{}
	cmd := exec.Command(c.streamsql, "server", "--data-dir", filepath.Join(dir, "data"), "--http", addr)
	cmd.Stdout, cmd.Stderr = out, out
	started := func(ctx context.Context) (func() string, error) {
		return submitToServer(ctx, "http://"+addr, jobSQL(c, b, name, topic, true))
	}
	return runChild(ctx, b, in, child{label: label, note: note, cmd: cmd, out: out, topic: topic, started: started})
}

// submitToServer waits for the server at url to answer /healthz, sends it
// the statements and starts reading its /metrics every scrapeEvery. The
// function it returns stops the reads and says how many there were.
func submitToServer(ctx context.Context, url, statements string) (stop func() string, err error) {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("the server does not answer %s/healthz: %v", url, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Post(url+"/api/v1/statements", "text/plain", strings.NewReader(statements))
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"job_id"`)) {
		return nil, fmt.Errorf("POST /api/v1/statements: %s: %s", resp.Status, body)
	}
	done := make(chan struct{})
	var scrapes, failed int
	var size int64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(scrapeEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			resp, err := http.Get(url + "/metrics")
			if err != nil {
				failed++
				continue
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				failed++
				continue
			}
			scrapes++
			size = n
		}
	}()
	return func() string {
		close(done)
		<-finished
		note := fmt.Sprintf("%d reads of /metrics (%.1f KiB each)", scrapes, float64(size)/1024)
		if failed > 0 {
			note += fmt.Sprintf(", %d FAILED", failed)
		}
		return note
	}, nil
}
