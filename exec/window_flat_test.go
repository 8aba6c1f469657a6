package exec_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestWindowStateStaysFlat runs a TUMBLE job over 3M rows of advancing
// event time (1 ms per row, up to 1 s out of order, a watermark 1 s behind)
// on the pebble backend with checkpoints every 100 ms, and samples its
// state while it runs: the open windows and their groups (exec.Metrics),
// and the on-disk size of the latest checkpoint (SHOW JOBS). 600 windows of
// 1000 keys fire; the state must stay as small as the watermark allows:
//
//   - open windows: a row is at most delay + max-past behind the largest
//     event time, and the window operator's watermark trails the rows it
//     holds by at most the delay plus two batches of event time (1,024 ms
//     each), so the windows with state end within (watermark, watermark +
//     3.05 s + size]: at most 2 of 5 s; 3 allows one more.
//   - groups: at most open windows × keys.
//   - checkpoint size: the last third of the checkpoints are no larger than
//     4 times the largest of the three after two of warm-up.
//
// If fired windows were not deleted, the groups would grow by 1000 per
// window and the checkpoints with them.
func TestWindowStateStaysFlat(t *testing.T) {
	const (
		rows    = 3_000_000
		keys    = 1000
		maxOpen = 3
	)
	ctx := context.Background()
	s, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE clicks (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '1000000',
			'fields.k.min' = '1', 'fields.k.max' = '%d', %s)`, rows, keys, eventTime),
		`CREATE TABLE out (window_start TIMESTAMP(3), k INT, n BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'state.backend' = 'pebble'",
		"SET 'execution.checkpointing.interval' = '100ms'",
		"SET 'pipeline.name' = 'flat'",
		`INSERT INTO out SELECT window_start, k, COUNT(*)
			FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
			GROUP BY window_start, window_end, k`,
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type sample struct{ in, windows, groups int64 }
	var samples []sample
	sizes := map[int64]int64{} // checkpoint id -> size
	var ids []int64
	var info session.JobInfo
	deadline := time.Now().Add(5 * time.Minute)
	for {
		info = s.Jobs()[0]
		if info.Status != "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still running after 5 minutes: %+v", info)
		}
		sm := sample{info.RecordsIn, info.OpenWindows, info.WindowGroups}
		if sm.windows > maxOpen || sm.groups > maxOpen*keys {
			t.Fatalf("after %d rows: %d open windows with %d groups, want at most %d windows and %d groups",
				sm.in, sm.windows, sm.groups, maxOpen, maxOpen*keys)
		}
		samples = append(samples, sm)
		if id := info.Checkpoints.LastID; id != 0 && sizes[id] == 0 {
			sizes[id] = info.Checkpoints.LastSize
			ids = append(ids, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.Status != "FINISHED" || info.RecordsIn != rows || info.Late != 0 {
		t.Fatalf("job %s: %d rows in, %d late, %v", info.Status, info.RecordsIn, info.Late, info.Err)
	}
	if info.RecOut < 500*keys*9/10 {
		t.Fatalf("%d groups fired, want about 600 windows of up to %d keys", info.RecOut, keys)
	}
	if len(samples) < 20 || len(ids) < 12 {
		t.Fatalf("%d samples and %d checkpoints: too few to judge", len(samples), len(ids))
	}
	maxW, maxG := int64(0), int64(0)
	for _, sm := range samples {
		maxW, maxG = max(maxW, sm.windows), max(maxG, sm.groups)
	}
	// Checkpoints: past two of warm-up, compare the last third with the
	// next three.
	early, late := int64(0), int64(0)
	for i, id := range ids {
		switch {
		case i >= 2 && i < 5:
			early = max(early, sizes[id])
		case i >= len(ids)-len(ids)/3:
			late = max(late, sizes[id])
		}
	}
	if early == 0 || late > 4*early {
		t.Fatalf("checkpoint sizes grew: largest early %d B, largest late %d B (all: %v)", early, late, sizes)
	}
	t.Logf("%d samples: at most %d open windows, %d groups; %d checkpoints, largest early %d B, late %d B; %d groups fired",
		len(samples), maxW, maxG, len(ids), early, late, info.RecOut)
}
