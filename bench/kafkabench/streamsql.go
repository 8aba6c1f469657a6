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
	name, topic, label := fmt.Sprintf("bench-alo-%d", round), fmt.Sprintf("pv_alo_%d", round), "streamsql at-least-once"
	if exactlyOnce {
		name, topic, label = fmt.Sprintf("bench-eo-%d", round), fmt.Sprintf("pv_eo_%d", round), "streamsql exactly-once"
	}
	r := result{name: label, note: fmt.Sprintf("parallelism %d, %v checkpoints, Pebble state", c.parallelism, c.checkpoint)}
	dir := filepath.Join(work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	file := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(file, []byte(jobSQL(c, b, name, topic, exactlyOnce)), 0o644); err != nil {
		r.err = err
		return r
	}
	chk, err := startChecker(b.addr, topic, in.counts)
	if err != nil {
		r.err = err
		return r
	}
	defer chk.close()
	var out lockedBuffer
	cmd := exec.Command(c.streamsql, "--data-dir", filepath.Join(dir, "data"), "-f", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.err = err
		return r
	}
	exited := make(chan error, 1)
	var exitedAt time.Time
	go func() {
		err := cmd.Wait()
		exitedAt = time.Now()
		exited <- err
	}()
	var exitErr error
	processDone := false
	err = chk.wait(ctx, func() error {
		if processDone {
			return fmt.Errorf("streamsql exited (%v) before the output was complete (%d output records read); output:\n%s", exitErr, chk.recs.Load(), out.String())
		}
		select {
		case exitErr = <-exited:
			processDone = true
			if exitErr != nil {
				return fmt.Errorf("streamsql failed: %v; output:\n%s", exitErr, out.String())
			}
		default:
		}
		return nil
	})
	if err != nil {
		cmd.Process.Kill()
		if !processDone {
			<-exited
		}
		r.err = err
		return r
	}
	r.elapsed = chk.at.Sub(start)
	r.outRecs = chk.recs.Load()
	if !processDone {
		select {
		case exitErr = <-exited:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			exitErr = fmt.Errorf("still running 60s after its output was complete")
			<-exited
		}
	}
	if exitErr != nil {
		r.err = fmt.Errorf("streamsql: %v; output:\n%s", exitErr, out.String())
		return r
	}
	r.note += fmt.Sprintf("; the process ran %v in all", exitedAt.Sub(start).Round(time.Millisecond))
	if s := strings.TrimSpace(out.String()); s != "" {
		logf("%s output:\n%s", label, s)
	}
	return r
}
