package exec_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestJoinTTLStateStaysFlat runs a regular join of two datagen streams of
// 300,000 rows each whose keys never repeat (a sequence: each left row
// meets one right row), throttled to 50,000 rows/s, with
// 'table.exec.state.ttl' = '1 s', checkpoints every 100 ms on the hashmap
// backend (a checkpoint's size is the rows stored), and a state cache of
// only 1,000 keys, so most rows leave memory long before they expire and
// only the store's sweep can drop them. Without the TTL the state would
// grow to all 600,000 rows; with it, the state holds the rows of about the
// last TTL. The pacing of a throttled source catches up after the machine
// held it back, so on a busy machine a second's worth of rows may come in
// much less than a second: the test judges the rows stored against the
// rows that came in recently, not against a rate. It measures a stored
// row's size from the checkpoints before anything can expire (the first
// 800 ms: every row is stored), and requires that each checkpoint after
// 2 s stores no more rows than came in during the 2.5 s before it (the
// TTL, the sweep's lag and the sampling's) plus 20,000, that the last
// third of the run stores at most half the input, and that the rows
// expired are most of the input.
func TestJoinTTLStateStaysFlat(t *testing.T) {
	const rows = 300_000
	ctx := context.Background()
	s, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	table := func(name string) string {
		return fmt.Sprintf(`CREATE TABLE %s (k BIGINT, v BIGINT) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '50000',
			'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d')`, name, rows, rows)
	}
	for _, q := range []string{
		table("l"), table("r"),
		`CREATE TABLE out (k BIGINT, lv BIGINT, rv BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'state.backend' = 'hashmap'",
		"SET 'state.backend.cache.max-entries' = '1000'",
		"SET 'execution.checkpointing.interval' = '100ms'",
		"SET 'table.exec.state.ttl' = '1 s'",
		"SET 'pipeline.name' = 'flat-join-ttl'",
		`INSERT INTO out SELECT l.k, l.v, r.v FROM l JOIN r ON l.k = r.k`,
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type sample struct {
		at       time.Duration
		in, size int64
	}
	var samples []sample // one per checkpoint, as it is first seen
	var ins []sample     // the rows in, every 20 ms
	var info session.JobInfo
	start := time.Now()
	deadline := start.Add(5 * time.Minute)
	var last int64
	for {
		info = s.Jobs()[0]
		if info.Status != "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still running after 5 minutes: %+v", info)
		}
		now := time.Since(start)
		ins = append(ins, sample{at: now, in: info.RecordsIn})
		if id := info.Checkpoints.LastID; id != 0 && id != last {
			last = id
			samples = append(samples, sample{now, info.RecordsIn, info.Checkpoints.LastSize})
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.Status != "FINISHED" || info.RecordsIn != 2*rows {
		t.Fatalf("job %s: %d rows in, %v", info.Status, info.RecordsIn, info.Err)
	}
	if len(samples) < 20 {
		t.Fatalf("%d checkpoints: too few to judge", len(samples))
	}
	// A stored row's size: before 800 ms nothing has expired, and the rows
	// in when a checkpoint is seen are at least those it stored.
	var perRow float64
	for _, c := range samples {
		if c.at < 800*time.Millisecond && c.in >= 1000 {
			perRow = max(perRow, float64(c.size)/float64(c.in))
		}
	}
	if perRow == 0 {
		t.Fatalf("no checkpoint of at least 1,000 rows in the first 800 ms to measure a row by: %v", samples[:min(len(samples), 10)])
	}
	// inAt is the rows in at the last sample at or before at.
	inAt := func(at time.Duration) int64 {
		in := int64(0)
		for _, x := range ins {
			if x.at > at {
				break
			}
			in = x.in
		}
		return in
	}
	end := samples[len(samples)-1].at
	var worst sample
	var worstRecent int64
	for _, c := range samples {
		if c.at < 2*time.Second {
			continue
		}
		stored := int64(float64(c.size) / perRow)
		recent := c.in - inAt(c.at-2500*time.Millisecond)
		if stored > recent+20_000 {
			t.Errorf("at %v: the checkpoint stores about %d rows (%d B), but only %d came in during the 2.5 s before it",
				c.at.Round(time.Millisecond), stored, c.size, recent)
		}
		if c.at >= end*2/3 && stored > worst.size {
			worst, worstRecent = sample{c.at, c.in, stored}, recent
		}
	}
	if worst.size > rows {
		t.Errorf("at %v: about %d rows stored, more than half the input", worst.at.Round(time.Millisecond), worst.size)
	}
	if info.StateExpired < rows {
		t.Fatalf("%d rows expired, want most of the %d", info.StateExpired, 2*rows)
	}
	t.Logf("%d checkpoints over %v, %.0f B a stored row: at most about %d rows stored in the last third (%d came in during the 2.5 s before); %d rows expired, %d joined",
		len(samples), end.Round(time.Millisecond), perRow, worst.size, worstRecent, info.StateExpired, info.RecOut)
}
