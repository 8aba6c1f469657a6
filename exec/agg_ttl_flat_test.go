package exec_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestGroupAggTTLStateStaysFlat runs a GROUP BY over rows whose keys
// never repeat (a sequence), throttled to 100,000 rows/s, with a state TTL
// of 1 s and checkpoints every 100 ms, and samples the size of the latest
// checkpoint (SHOW JOBS) while it runs, until at least 2M rows went in and
// 45 checkpoints completed (however long a busy machine takes for them),
// then stops the job. Without the TTL every key would
// stay: the state would grow to 2M groups, twenty times the second's
// worth of keys the TTL keeps (about 100,000, more when the source
// catches up after a stall). So:
//
//   - checkpoint size: the last third of the checkpoints are no larger
//     than 3 times the largest of three early ones, taken once the TTL has
//     passed (checkpoints 15 to 17, 1.5 s in);
//   - expired groups (SHOW JOBS 'state expired'): every group but the
//     last few seconds' worth expired, at most 500,000 are left.
func TestGroupAggTTLStateStaysFlat(t *testing.T) {
	const (
		rows        = 2_000_000
		checkpoints = 45
		maxLeft     = 500_000
	)
	ctx := context.Background()
	s, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE clicks (k BIGINT) WITH (
			'connector' = 'datagen', 'rows-per-second' = '100000',
			'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d')`, 1<<60),
		`CREATE TABLE out (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'execution.checkpointing.interval' = '100ms'",
		"SET 'table.exec.state.ttl' = '1 s'",
		"SET 'pipeline.name' = 'ttl-flat'",
		`INSERT INTO out SELECT k, COUNT(*) FROM clicks GROUP BY k`,
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sizes := map[int64]int64{} // checkpoint id -> size
	var ids []int64
	var info session.JobInfo
	deadline := time.Now().Add(5 * time.Minute)
	for len(ids) < checkpoints || info.RecordsIn < rows {
		info = s.Jobs()[0]
		if info.Status != "RUNNING" {
			t.Fatalf("job %s after %d rows: %v", info.Status, info.RecordsIn, info.Err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 minutes, %d rows in and %d checkpoints: %+v", info.RecordsIn, len(ids), info)
		}
		if id := info.Checkpoints.LastID; id != 0 && sizes[id] == 0 {
			sizes[id] = info.Checkpoints.LastSize
			ids = append(ids, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.StopJobs()
	info = s.Jobs()[0]
	early, late := int64(0), int64(0)
	for i, id := range ids {
		switch {
		case i >= 15 && i < 18:
			early = max(early, sizes[id])
		case i >= len(ids)-len(ids)/3:
			late = max(late, sizes[id])
		}
	}
	if early == 0 || late > 3*early {
		t.Fatalf("checkpoint sizes grew: largest early %d B, largest late %d B (all: %v)", early, late, sizes)
	}
	if info.StateExpired < info.RecordsIn-maxLeft {
		t.Fatalf("%d groups expired of %d, want at least %d", info.StateExpired, info.RecordsIn, info.RecordsIn-maxLeft)
	}
	t.Logf("%d checkpoints, largest early %d B, late %d B; %d groups expired", len(ids), early, late, info.StateExpired)
}
