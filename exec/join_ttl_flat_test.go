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
// rows that came in recently, not against a rate. It bounds a stored
// row's size from the checkpoints triggered before anything can expire
// (the first 900 ms: each stores at least every row in before its
// trigger), and requires that each checkpoint triggered after 2 s stores
// no more rows than came in during the 2.5 s before its trigger and until
// it was seen (the TTL, the sweep's lag and the sampling's) plus 20,000,
// that those of the last third of the run store at most half the input,
// and that the rows expired are most of the input.
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
	type in struct {
		at   time.Time
		rows int64
	}
	type ckpt struct {
		triggered, seen time.Time
		rows, size      int64 // rows: in when seen
	}
	var ins []in     // the rows in, every 20 ms
	var ckpts []ckpt // each checkpoint, as it is first seen
	var info session.JobInfo
	start := time.Now()
	deadline := start.Add(5 * time.Minute)
	var last int64
	for {
		info = s.Jobs()[0]
		if info.Status != "RUNNING" {
			break
		}
		now := time.Now()
		if now.After(deadline) {
			t.Fatalf("job still running after 5 minutes: %+v", info)
		}
		ins = append(ins, in{now, info.RecordsIn})
		if c := info.Checkpoints; c.LastID != 0 && c.LastID != last {
			last = c.LastID
			ckpts = append(ckpts, ckpt{c.LastCompleted.Add(-c.LastDuration), now, info.RecordsIn, c.LastSize})
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.Status != "FINISHED" || info.RecordsIn != 2*rows {
		t.Fatalf("job %s: %d rows in, %v", info.Status, info.RecordsIn, info.Err)
	}
	if len(ckpts) < 20 {
		t.Fatalf("%d checkpoints: too few to judge", len(ckpts))
	}
	// inAt is the rows in at the last sample at or before at.
	inAt := func(at time.Time) int64 {
		n := int64(0)
		for _, x := range ins {
			if x.at.After(at) {
				break
			}
			n = x.rows
		}
		return n
	}
	// A stored row's size, at most: a checkpoint triggered in the first
	// 900 ms (nothing has expired yet) stores every row in before its
	// trigger, and more.
	var perRow float64
	for _, c := range ckpts {
		if n := inAt(c.triggered); c.triggered.Before(start.Add(900*time.Millisecond)) && n >= 200 {
			perRow = max(perRow, float64(c.size)/float64(n))
		}
	}
	if perRow == 0 {
		t.Fatalf("no checkpoint triggered in the first 900 ms after 200 rows or more, to measure a row by")
	}
	end := ckpts[len(ckpts)-1].seen
	var worst, worstRecent int64
	var worstAt time.Duration
	for _, c := range ckpts {
		if c.triggered.Before(start.Add(2 * time.Second)) {
			continue
		}
		stored := int64(float64(c.size) / perRow)
		recent := c.rows - inAt(c.triggered.Add(-2500*time.Millisecond))
		at := c.triggered.Sub(start).Round(time.Millisecond)
		if stored > recent+20_000 {
			t.Errorf("checkpoint triggered at %v stores about %d rows (%d B), but only %d came in during the 2.5 s before it",
				at, stored, c.size, recent)
		}
		if c.seen.Sub(start) >= end.Sub(start)*2/3 && stored > worst {
			worst, worstRecent, worstAt = stored, recent, at
		}
	}
	if worst > rows {
		t.Errorf("checkpoint triggered at %v: about %d rows stored, more than half the input", worstAt, worst)
	}
	if info.StateExpired < rows {
		t.Fatalf("%d rows expired, want most of the %d", info.StateExpired, 2*rows)
	}
	t.Logf("%d checkpoints over %v, at most %.0f B a stored row: at most about %d rows stored in the last third (%d came in during the 2.5 s before); %d rows expired, %d joined",
		len(ckpts), end.Sub(start).Round(time.Millisecond), perRow, worst, worstRecent, info.StateExpired, info.RecOut)
}
