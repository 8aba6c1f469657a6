package session

import (
	"strings"
	"testing"
)

// wjDDL is a datagen stream of ids 1..20000 with event time advancing 1 ms
// an id (up to 500 ms out of order, a watermark 1 s behind, so no row is
// late) and a window self-join on the id: each row joins itself once.
const wjDDL = `CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
	'connector' = 'datagen', 'number-of-rows' = '20000', 'rows-per-second' = '10000',
	'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
	'fields.ts.kind' = 'sequence', 'fields.ts.start' = '2024-01-01 00:00:00', 'fields.ts.step' = '1 ms', 'fields.ts.max-past' = '500 ms');
CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND));
CREATE TABLE joined (id BIGINT, rid BIGINT);
SET 'execution.checkpointing.interval' = '50ms';`

const wjInsert = `INSERT INTO joined SELECT L.id, R.id FROM w L JOIN w R
	ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.id = R.id`

// checkJoined checks that every id was joined with itself exactly once.
func checkJoined(t *testing.T, s *Session, what string) {
	t.Helper()
	got := execAll(t, s, "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id), SUM(rid) FROM joined")[0].Rows[0]
	want := int64(20000 * 20001 / 2)
	if got[0] != int64(20000) || got[1] != int64(20000) || got[2] != want || got[3] != want {
		t.Fatalf("%s: rows, distinct ids, sums = %v, want 20000, 20000, %d, %d", what, got, want, want)
	}
}

// TestWindowJoinStopAndResume stops a checkpointed window join midway and
// submits it again: it resumes from a checkpoint (the rows of open windows
// and its watermark restored) and every row is joined exactly once.
func TestWindowJoinStopAndResume(t *testing.T) {
	for _, backend := range []string{"pebble", "hashmap"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			execAll(t, s, wjDDL, "SET 'state.backend' = '"+backend+"'")
			id := execAll(t, s, wjInsert)[0].JobID
			waitRunning(t, s, "3 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 3 })
			execAll(t, s, "STOP JOB '"+id+"'")
			execAll(t, s, "SET 'table.dml-sync' = 'true'")
			rs := execAll(t, s, wjInsert)
			if !strings.Contains(rs[0].Message, "restored job "+s.Jobs()[0].Name+" from checkpoint") {
				t.Fatalf("rerun did not resume: %q", rs[0].Message)
			}
			if j := s.Jobs()[0]; j.Late != 0 {
				t.Fatalf("%d late rows, want none", j.Late)
			}
			checkJoined(t, s, "after resume")
		})
	}
}

// TestWindowJoinSavepointRescale stops a window join at parallelism 2 with
// a savepoint and resumes it at parallelism 4: the key groups of the rows
// held move to other subtasks, and every row is joined exactly once.
func TestWindowJoinSavepointRescale(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, wjDDL, "SET 'state.backend' = 'pebble'", "SET 'parallelism.default' = '2'")
	id := execAll(t, s, wjInsert)[0].JobID
	waitRunning(t, s, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 2 })
	msg := execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")[0].Message
	i := strings.Index(msg, "savepoint ")
	if i < 0 {
		t.Fatalf("no savepoint path in %q", msg)
	}
	path := strings.TrimSpace(msg[i+len("savepoint "):])
	execAll(t, s, "SET 'parallelism.default' = '4'", "SET 'execution.state-recovery.path' = '"+path+"'",
		"SET 'table.dml-sync' = 'true'")
	rs := execAll(t, s, wjInsert)
	if !strings.Contains(rs[0].Message, "restored job "+s.Jobs()[0].Name+" from "+path) {
		t.Fatalf("not restored from the savepoint: %q", rs[0].Message)
	}
	checkJoined(t, s, "after rescaling")
}
