package session

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/types"
)

// rowsOf runs a bounded query and returns its rows printed, sorted.
func rowsOf(t *testing.T, s *Session, q string) []string {
	t.Helper()
	rs := execAll(t, s, q)
	r := rs[len(rs)-1]
	var out []string
	for _, row := range r.Rows {
		var parts []string
		for i, v := range row {
			parts = append(parts, types.Format(r.Columns[i].Type, v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}

// A job that follows a table resumes from its checkpoint at its position
// in the table's changes: every change is counted once across a stop and a
// resubmit in the same session, across a session restart with no change
// in between, and a change made by a new session before the job resumed
// fails the job with ErrChangesGone rather than being skipped.
func TestFollowAcrossCheckpointAndRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	execAll(t, s,
		"CREATE TABLE src (k INT, v VARCHAR)",
		"CREATE TABLE per_k (k INT, n BIGINT, nv BIGINT)",
		"SET 'table.dml-sync' = 'true'",
		"INSERT INTO src VALUES (1, 'a'), (1, 'a'), (2, NULL), (NULL, 'n')",
		"SET 'execution.checkpointing.interval' = '50 ms'",
	)
	job := "INSERT INTO per_k SELECT k, COUNT(*), COUNT(v) FROM src /*+ OPTIONS('scan.mode'='follow') */ GROUP BY k"
	want := "SELECT k, COUNT(*), COUNT(v) FROM src GROUP BY k"
	submit := func(s *Session) *Result {
		execAll(t, s, "SET 'table.dml-sync' = 'false'")
		defer execAll(t, s, "SET 'table.dml-sync' = 'true'")
		rs := execAll(t, s, job)
		return rs[len(rs)-1]
	}
	// caughtUp waits until per_k is the aggregate of src now, and a
	// checkpoint later still is (what a checkpoint commits is the result).
	caughtUp := func(s *Session, what string) {
		t.Helper()
		w := rowsOf(t, s, want)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if slices.Equal(rowsOf(t, s, "SELECT * FROM per_k"), w) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: per_k is %q, want %q; jobs %+v", what, rowsOf(t, s, "SELECT * FROM per_k"), w, s.Jobs())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop := func(s *Session) {
		t.Helper()
		for _, j := range s.Jobs() {
			if j.Status == "RUNNING" {
				execAll(t, s, "STOP JOB '"+j.ID+"'")
			}
		}
	}

	submit(s)
	caughtUp(s, "the rows at the start")
	execAll(t, s,
		"UPDATE src SET v = NULL WHERE k = 1",
		"DELETE FROM src WHERE k IS NULL",
		"INSERT INTO src VALUES (3, 'c'), (3, 'c'), (NULL, NULL)")
	caughtUp(s, "changes while it runs")

	// Stopped between two checkpoints, resubmitted: it resumes at the
	// position of its last checkpoint and reads the changes made while it
	// was stopped.
	stop(s)
	execAll(t, s, "DELETE FROM src WHERE k = 3", "INSERT INTO src VALUES (4, 'd')")
	if r := submit(s); !strings.Contains(r.Message, "restored job") {
		t.Fatalf("resubmitted job did not resume: %q", r.Message)
	}
	caughtUp(s, "changes while stopped")

	// A new session on the data dir, nothing changed in between: the job
	// resumes and follows.
	stop(s)
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, "SET 'execution.checkpointing.interval' = '50 ms'", "SET 'table.dml-sync' = 'true'")
	if r := submit(s); !strings.Contains(r.Message, "restored job") {
		t.Fatalf("job did not resume in the new session: %q", r.Message)
	}
	execAll(t, s, "UPDATE src SET k = 5 WHERE k = 4")
	caughtUp(s, "after a session restart")

	// A new session that changes the table before the job resumes: the
	// change is not kept for it, and the job says so.
	stop(s)
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, "SET 'execution.checkpointing.interval' = '50 ms'", "SET 'table.dml-sync' = 'true'",
		"INSERT INTO src VALUES (6, 'f')")
	execAll(t, s, "SET 'table.dml-sync' = 'false'", "SET 'restart-strategy.type' = 'none'")
	rs, err := s.Execute(context.Background(), job)
	if err == nil {
		info := func() JobInfo {
			for _, j := range s.Jobs() {
				if j.ID == rs[len(rs)-1].JobID {
					return j
				}
			}
			t.Fatalf("no job %s", rs[len(rs)-1].JobID)
			return JobInfo{}
		}
		deadline := time.Now().Add(30 * time.Second)
		for info().Status == "RUNNING" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		j := info()
		if j.Status != "FAILED" {
			t.Fatalf("job restored past a lost change: %+v", j)
		}
		err = j.Err
	}
	if !strings.Contains(err.Error(), "the changes since the restored position are gone") {
		t.Fatalf("restore past a lost change: %v", err)
	}
	// Started anew, it reads the table as it is.
	execAll(t, s, "SET 'pipeline.name' = 'per_k again'", "DELETE FROM per_k")
	submit(s)
	caughtUp(s, "started anew")
}
