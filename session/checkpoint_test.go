package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
)

func execAll(t *testing.T, s *Session, qs ...string) []*Result {
	t.Helper()
	var out []*Result
	for _, q := range qs {
		rs, err := s.Execute(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, rs...)
	}
	return out
}

const ckptDDL = `CREATE TABLE gen (id BIGINT, k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',
	'rows-per-second' = '10000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
	'fields.k.min' = '1', 'fields.k.max' = '7');
CREATE TABLE counts (k INT, c BIGINT, s BIGINT);
SET 'execution.checkpointing.interval' = '50ms';`

// waitRunning polls the session's first job until ok holds. It fails the
// test when the job stops running first, or after 20 s.
func waitRunning(t *testing.T, s *Session, what string, ok func(JobInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := s.Jobs()[0]
		if ok(j) {
			return
		}
		if j.Status != "RUNNING" || time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCheckpointStopAndResume runs a checkpointed aggregation into an
// in-memory table, stops it midway, submits it again on the same data
// directory and checks that it resumed from a checkpoint and that the final
// table is exact: nothing lost, nothing counted twice.
func TestCheckpointStopAndResume(t *testing.T) {
	for _, backend := range []string{"pebble", "hashmap"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			execAll(t, s, ckptDDL, "SET 'state.backend' = '"+backend+"'")
			insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
			rs := execAll(t, s, insert)
			id := rs[0].JobID
			// Let it take a few checkpoints, then stop it.
			waitRunning(t, s, "3 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 3 })
			execAll(t, s, "STOP JOB '"+id+"'")
			if st := s.Jobs()[0].Status; st != "CANCELED" {
				t.Fatalf("status after STOP JOB: %s", st)
			}
			md, _, err := checkpoint.NewStorage(jobCheckpoints(t, s, dir, "counts")).Completed()
			if err != nil || len(md) == 0 {
				t.Fatalf("no completed checkpoint on disk: %v", err)
			}

			execAll(t, s, "SET 'table.dml-sync' = 'true'")
			rs = execAll(t, s, insert)
			if !strings.Contains(rs[0].Message, "restored job "+s.Jobs()[0].Name+" from checkpoint") {
				t.Fatalf("rerun did not resume: %q", rs[0].Message)
			}
			got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
			if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
				t.Fatalf("after resume: groups, rows, sum = %v, want 7, 20000, %d", got, 20000*20001/2)
			}
		})
	}
}

// TestCorruptMetadataFallsBack damages the newest checkpoint's metadata and
// checks that the restore takes the one before it, with a warning; with
// every checkpoint damaged, the submit fails with a clear message.
func TestCorruptMetadataFallsBack(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, s, ckptDDL, "SET 'state.checkpoints.num-retained' = '3'", "SET 'restart-strategy.type' = 'none'",
		"CREATE TABLE nothing (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole')")
	insert := "INSERT INTO nothing SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "3 checkpoints", func(j JobInfo) bool { return j.Checkpoints.Completed >= 3 })
	execAll(t, s, "STOP JOB '"+id+"'")
	st := checkpoint.NewStorage(jobCheckpoints(t, s, dir, "nothing"))
	done, _, _ := st.Completed()
	if len(done) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, have %d", len(done))
	}
	if err := os.WriteFile(filepath.Join(done[0].Dir, checkpoint.MetadataFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, "SET 'table.dml-sync' = 'true'")
	msg := execAll(t, s, insert)[0].Message
	want := fmt.Sprintf("restored job %s from checkpoint %d", s.Jobs()[0].Name, done[1].ID)
	if !strings.Contains(msg, want) || !strings.Contains(msg, fmt.Sprintf("skipping checkpoint %d", done[0].ID)) {
		t.Fatalf("want a warning about checkpoint %d and %q, got:\n%s", done[0].ID, want, msg)
	}

	// Damage every checkpoint: no silent fresh start.
	all, _, _ := st.Completed()
	for _, md := range all {
		os.Truncate(filepath.Join(md.Dir, checkpoint.MetadataFile), 10)
	}
	_, err = s.Execute(context.Background(), insert)
	if err == nil || !strings.Contains(err.Error(), "none can be restored") {
		t.Fatalf("want a clear error when no checkpoint can be restored, got %v", err)
	}
}

// TestSavepointRescale stops a checkpointed aggregation running at
// parallelism 2 with a savepoint and resumes it from the savepoint at
// parallelism 4 and then 1: the source's splits and the aggregate's key
// groups move to the new subtasks, and the final table is exact.
func TestSavepointRescale(t *testing.T) {
	for _, backend := range []string{"pebble", "hashmap"} {
		t.Run(backend, func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			execAll(t, s, ckptDDL, "SET 'state.backend' = '"+backend+"'", "SET 'parallelism.default' = '2'")
			insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
			id := execAll(t, s, insert)[0].JobID
			waitRunning(t, s, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 2 })
			msg := execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")[0].Message
			i := strings.Index(msg, "savepoint ")
			if i < 0 {
				t.Fatalf("no savepoint path in %q", msg)
			}
			path := strings.TrimSpace(msg[i+len("savepoint "):])
			execAll(t, s, "SET 'parallelism.default' = '4'", "SET 'execution.state-recovery.path' = '"+path+"'",
				"SET 'table.dml-sync' = 'true'")
			rs := execAll(t, s, insert)
			if !strings.Contains(rs[0].Message, "restored job "+s.Jobs()[0].Name+" from "+path) {
				t.Fatalf("not restored from the savepoint: %q", rs[0].Message)
			}
			got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
			if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
				t.Fatalf("after rescaling: groups, rows, sum = %v, want 7, 20000, %d", got, 20000*20001/2)
			}
		})
	}
}

// jobCheckpoints is the checkpoint directory of the session's job into
// sink table sink (its default name is insert-into_<sink>-<hash>).
func jobCheckpoints(t *testing.T, s *Session, dir, sink string) string {
	t.Helper()
	for _, j := range s.Jobs() {
		if strings.HasPrefix(j.Name, "insert-into_"+sink+"-") {
			return filepath.Join(dir, "jobs", j.Name, "checkpoints")
		}
	}
	t.Fatalf("no job into %s: %+v", sink, s.Jobs())
	return ""
}
