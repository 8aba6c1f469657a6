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
// grow to all 600,000 rows. The test requires that the checkpoints of the
// last third of the run are no larger than twice the largest of those
// between 2 and 3 s in (after a full TTL of rows), and that the rows
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
		at   time.Duration
		size int64
	}
	var samples []sample
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
		if id := info.Checkpoints.LastID; id != 0 && id != last {
			last = id
			samples = append(samples, sample{time.Since(start), info.Checkpoints.LastSize})
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.Status != "FINISHED" || info.RecordsIn != 2*rows {
		t.Fatalf("job %s: %d rows in, %v", info.Status, info.RecordsIn, info.Err)
	}
	if len(samples) < 20 {
		t.Fatalf("%d checkpoints: too few to judge", len(samples))
	}
	end := samples[len(samples)-1].at
	early, late := int64(0), int64(0)
	for _, c := range samples {
		switch {
		case c.at >= 2*time.Second && c.at < 3*time.Second:
			early = max(early, c.size)
		case c.at >= end*2/3:
			late = max(late, c.size)
		}
	}
	if early == 0 || late > 2*early {
		t.Fatalf("checkpoint sizes grew: largest between 2 and 3 s %d B, largest in the last third %d B (%d checkpoints over %v)", early, late, len(samples), end)
	}
	if info.StateExpired < rows {
		t.Fatalf("%d rows expired, want most of the %d", info.StateExpired, 2*rows)
	}
	t.Logf("%d checkpoints over %v: largest between 2 and 3 s %d B, in the last third %d B; %d rows expired, %d joined",
		len(samples), end.Round(time.Millisecond), early, late, info.StateExpired, info.RecOut)
}
