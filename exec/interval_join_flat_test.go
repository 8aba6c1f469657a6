package exec_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestIntervalJoinStateStaysFlat runs an interval join of two datagen
// streams of 1M rows each (event time 1 ms per row, up to 1 s out of
// order, watermarks 1 s behind, 1000 keys), R.ts - 10 s <= L.ts <= R.ts,
// each source throttled to 50,000 rows/s, on the pebble backend with
// checkpoints every 100 ms, and samples the rows the join holds
// (exec.Metrics.JoinRows) and the size of the latest checkpoint while it
// runs. A left row stays until the watermark is 10 s past it, a right row
// until the watermark reaches it; the join's watermark is the slower
// stream's, so what it holds beyond those 10 s is how far one stream runs
// ahead of the other: the scheduler's doing, which on a busy machine can
// starve one source for seconds while the other's pacing catches up, so
// both sources are in one watermark alignment group that pauses the one
// more than 2 s of event time ahead. Without expiry the rows held would
// grow to 2M. The test requires:
//
//   - rows held: at most 200,000 at any time, and in the last third of the
//     run at most twice the most of the first third plus 20,000;
//   - checkpoint size: the last third of the checkpoints are no larger than
//     4 times the largest of the three after two of warm-up.
func TestIntervalJoinStateStaysFlat(t *testing.T) {
	const (
		rows    = 1_000_000
		keys    = 1000
		maxHeld = 200_000
	)
	ctx := context.Background()
	s, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	table := func(name string) string {
		return fmt.Sprintf(`CREATE TABLE %s (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '50000',
			'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '2 s',
			'fields.k.min' = '1', 'fields.k.max' = '%d', %s)`, name, rows, keys, eventTime)
	}
	for _, q := range []string{
		table("l"), table("r"),
		`CREATE TABLE out (k INT, lv BIGINT, rv BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'state.backend' = 'pebble'",
		"SET 'execution.checkpointing.interval' = '100ms'",
		"SET 'pipeline.name' = 'flat-interval-join'",
		`INSERT INTO out SELECT l.k, l.v, r.v FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts`,
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type sample struct{ in, held int64 }
	var held []sample
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
		if info.JoinRows > maxHeld {
			t.Fatalf("after %d rows: the join holds %d rows, want at most %d", info.RecordsIn, info.JoinRows, maxHeld)
		}
		held = append(held, sample{info.RecordsIn, info.JoinRows})
		if id := info.Checkpoints.LastID; id != 0 && sizes[id] == 0 {
			sizes[id] = info.Checkpoints.LastSize
			ids = append(ids, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info.Status != "FINISHED" || info.RecordsIn != 2*rows || info.Late != 0 {
		t.Fatalf("job %s: %d rows in, %d late, %v", info.Status, info.RecordsIn, info.Late, info.Err)
	}
	// Each right row joins the left rows of its key in the 10 s before it:
	// about 10,000 / 1000 keys = 10.
	if info.RecOut < rows*5 || info.RecOut > rows*20 {
		t.Fatalf("%d rows joined, want about %d", info.RecOut, rows*10)
	}
	if len(held) < 20 || len(ids) < 12 {
		t.Fatalf("%d samples and %d checkpoints: too few to judge", len(held), len(ids))
	}
	maxH, first, last := int64(0), int64(0), int64(0)
	for _, h := range held {
		maxH = max(maxH, h.held)
		switch {
		case h.in < 2*rows/3:
			first = max(first, h.held)
		case h.in >= 2*rows*2/3:
			last = max(last, h.held)
		}
	}
	if last > 2*first+20_000 {
		t.Fatalf("the rows held grew: at most %d in the first third of the input, %d in the last", first, last)
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
	t.Logf("%d samples: at most %d rows held (%d in the first third, %d in the last); %d checkpoints, largest early %d B, late %d B; %d rows joined",
		len(held), maxH, first, last, len(ids), early, late, info.RecOut)
}
