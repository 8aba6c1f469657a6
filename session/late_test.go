package session

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

// TestLateRecordsRoutedOnceAcrossRestore runs a checkpointed window
// aggregation whose input is far out of order (random times up to 2 s in
// the past, 100 ms windows, a watermark at the largest time seen), with
// late records routed to a table. It stops the job midway, resumes it from
// its checkpoint, and checks that every generated row is either counted in
// a window or in the late table, exactly once: no row lost, none twice.
func TestLateRecordsRoutedOnceAcrossRestore(t *testing.T) {
	for _, backend := range []string{"pebble", "hashmap"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const rows = 20000
			execAll(t, s, `CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
				'connector' = 'datagen', 'number-of-rows' = '20000', 'rows-per-second' = '20000',
				'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
				'fields.ts.max-past' = '2 s')`,
				"CREATE TABLE wins (window_start TIMESTAMP(3), n BIGINT, s BIGINT)",
				"CREATE TABLE gen_late (ts TIMESTAMP(3), id BIGINT)",
				"SET 'execution.checkpointing.interval' = '50ms'",
				"SET 'state.backend' = '"+backend+"'",
				"SET 'table.exec.late-records.table' = 'gen_late'")
			insert := `INSERT INTO wins SELECT window_start, COUNT(*), SUM(id)
				FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '100' MILLISECOND))
				GROUP BY window_start, window_end`
			id := execAll(t, s, insert)[0].JobID
			// Stop it after a few checkpoints, with late records routed.
			waitRunning(t, s, "3 checkpoints and late records routed", func(j JobInfo) bool {
				return j.Checkpoints.LastID >= 3 && j.LateRouted > 0
			})
			execAll(t, s, "STOP JOB '"+id+"'")
			md, _, err := checkpoint.NewStorage(jobCheckpoints(t, s, dir, "wins")).Completed()
			if err != nil || len(md) == 0 {
				t.Fatalf("no completed checkpoint on disk: %v", err)
			}
			first := s.Jobs()[0]

			execAll(t, s, "SET 'table.dml-sync' = 'true'")
			rs := execAll(t, s, insert)
			if !strings.Contains(rs[0].Message, "restored job "+s.Jobs()[0].Name+" from checkpoint") {
				t.Fatalf("rerun did not resume: %q", rs[0].Message)
			}
			second := s.Jobs()[1]
			if second.Status != "FINISHED" || second.LateRouted == 0 {
				t.Fatalf("the resumed job routed no late records: %+v", second)
			}
			if first.Late != 0 || second.Late != 0 {
				t.Fatalf("late records dropped although routed: %d and %d", first.Late, second.Late)
			}

			late := execAll(t, s, "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM gen_late")[0].Rows[0]
			wins := execAll(t, s, "SELECT SUM(n), SUM(s) FROM wins")[0].Rows[0]
			lateN, lateDistinct, lateSum := late[0].(int64), late[1].(int64), late[2].(int64)
			winN, winSum := wins[0].(int64), wins[1].(int64)
			if lateN != lateDistinct {
				t.Fatalf("a late record was written twice: %d rows, %d distinct ids", lateN, lateDistinct)
			}
			if lateN == 0 || winN == 0 {
				t.Fatalf("want rows both in windows and late: %d in windows, %d late", winN, lateN)
			}
			if lateN+winN != rows || lateSum+winSum != rows*(rows+1)/2 {
				t.Fatalf("windows + late = %d rows (id sum %d), want %d (%d): lost or duplicated records",
					lateN+winN, lateSum+winSum, rows, rows*(rows+1)/2)
			}
		})
	}
}

// TestNullTimeCounted: without a late-records table, rows whose time is
// NULL are dropped by window aggregation and by window table functions,
// and counted in SHOW JOBS' late dropped.
func TestNullTimeCounted(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, "SET 'table.dml-sync' = 'true'",
		"CREATE TABLE nulls (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)",
		"INSERT INTO nulls VALUES ('a', TIMESTAMP '2024-01-01 00:00:01'), ('b', NULL), ('c', NULL)",
		"CREATE TABLE counted (n BIGINT)",
		"CREATE TABLE windowed (k VARCHAR, window_start TIMESTAMP(3))",
		`INSERT INTO counted SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE nulls, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
			GROUP BY window_start, window_end`,
		`INSERT INTO windowed SELECT k, window_start FROM TABLE(TUMBLE(TABLE nulls, DESCRIPTOR(ts), INTERVAL '1' MINUTE))`)
	jobs := s.Jobs()
	for _, j := range jobs[len(jobs)-2:] {
		if j.Late != 2 {
			t.Errorf("job %s counted %d late records, want the 2 rows without a time", j.Name, j.Late)
		}
	}
	if got := execAll(t, s, "SELECT COUNT(*) FROM windowed")[0].Rows[0][0]; got != int64(1) {
		t.Errorf("the window table function kept %v rows, want 1", got)
	}
}
