package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
