package exec_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestWindowJoinStateStaysFlat runs a TUMBLE window self-join over 1M rows
// of advancing event time (1 ms per row, up to 1 s out of order, a
// watermark 1 s behind) on the pebble backend with checkpoints every
// 100 ms, and samples its state while it runs: the open windows and the
// rows they hold (exec.Metrics) and the on-disk size of the latest
// checkpoint (SHOW JOBS). 200 windows of 5 s fire; the state must stay as
// small as the watermark allows (the bounds of TestWindowStateStaysFlat):
//
//   - open windows: at most 3;
//   - rows held: at most 3 windows of 5,000 rows, on both sides;
//   - checkpoint size: the last third of the checkpoints are no larger than
//     4 times the largest of the three after two of warm-up.
//
// Every row joins at least itself, so at least 1M rows come out. If fired
// windows were not dropped, the rows held would grow by 10,000 a window,
// and the checkpoints with them.
func TestWindowJoinStateStaysFlat(t *testing.T) {
	const (
		rows       = 1_000_000
		keys       = 5000
		maxOpen    = 3
		perWindow  = 5000
		maxHeldRow = maxOpen * perWindow * 2
	)
	ctx := context.Background()
	s, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE clicks (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '250000',
			'fields.k.min' = '1', 'fields.k.max' = '%d', %s)`, rows, keys, eventTime),
		`CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))`,
		`CREATE TABLE out (window_start TIMESTAMP(3), k INT, k2 INT) WITH ('connector' = 'blackhole')`,
		"SET 'state.backend' = 'pebble'",
		"SET 'execution.checkpointing.interval' = '100ms'",
		"SET 'pipeline.name' = 'flat-join'",
		`INSERT INTO out SELECT L.window_start, L.k, R.k FROM w L JOIN w R
			ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k`,
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type sample struct{ in, windows, rows int64 }
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
		if sm.windows > maxOpen || sm.rows > maxHeldRow {
			t.Fatalf("after %d rows: %d open windows holding %d rows, want at most %d windows and %d rows",
				sm.in, sm.windows, sm.rows, maxOpen, maxHeldRow)
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
	if info.RecOut < rows {
		t.Fatalf("%d joined rows, want at least %d (every row joins itself)", info.RecOut, rows)
	}
	if len(samples) < 20 || len(ids) < 12 {
		t.Fatalf("%d samples and %d checkpoints: too few to judge", len(samples), len(ids))
	}
	maxW, maxR := int64(0), int64(0)
	for _, sm := range samples {
		maxW, maxR = max(maxW, sm.windows), max(maxR, sm.rows)
	}
	if maxR == 0 {
		t.Fatalf("no sample saw a row held: the metrics do not report the window join's state")
	}
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
	t.Logf("%d samples: at most %d open windows, %d rows held; %d checkpoints, largest early %d B, late %d B; %d rows joined",
		len(samples), maxW, maxR, len(ids), early, late, info.RecOut)
}
