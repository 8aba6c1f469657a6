package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// execErr runs q and returns its error, failing the test when it succeeds.
func execErr(t *testing.T, s *Session, q string) error {
	t.Helper()
	_, err := s.Execute(context.Background(), q)
	if err == nil {
		t.Fatalf("%s: want an error, it succeeded", q)
	}
	return err
}

// mustContainAll fails the test unless text holds every one of wants.
func mustContainAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, text)
		}
	}
}

const slowDDL = `CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20',
	'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000');
CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');`

// TestJobNamesAreUniqueAmongRunningJobs: the same INSERT submitted again
// while it runs is refused with the running job's name and id (its default
// name is derived from the statement, so it would share the job folder);
// another INSERT into the same sink is another job with its own folder;
// 'pipeline.name' stays set for later statements, as in Flink, so a second
// job under it is refused too while the first runs.
func TestJobNamesAreUniqueAmongRunningJobs(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, slowDDL)
	insert := "INSERT INTO out SELECT id FROM ticks"
	first := execAll(t, s, insert)[0].JobID
	name := s.Jobs()[0].Name
	if !strings.HasPrefix(name, "insert-into_out-") {
		t.Fatalf("default job name %q, want insert-into_out-<hash>", name)
	}
	// The same statement, even written differently, is refused.
	for _, q := range []string{insert, "insert  into out\n  -- again\n  SELECT id FROM ticks"} {
		err := execErr(t, s, q)
		mustContainAll(t, "the error", err.Error(), "cannot submit job '"+name+"'", "id "+first, "STOP JOB")
		if !errors.Is(err, ErrJobRunning) && !strings.Contains(err.Error(), ErrJobRunning.Error()) {
			t.Errorf("not ErrJobRunning: %v", err)
		}
	}
	// Another statement into the same sink is another job, in its own folder.
	execAll(t, s, "INSERT INTO out SELECT id + 1 FROM ticks")
	jobs := s.Jobs()
	if len(jobs) != 2 || jobs[1].Name == name || jobs[1].Status != "RUNNING" {
		t.Fatalf("want a second running job of another name: %+v", jobs)
	}

	execAll(t, s, "SET 'pipeline.name' = 'mine'", "INSERT INTO out SELECT id * 2 FROM ticks")
	err = execErr(t, s, "INSERT INTO out SELECT id * 3 FROM ticks")
	mustContainAll(t, "the error", err.Error(), "cannot submit job 'mine'", "SET 'pipeline.name' to another name")

	// Once the first job ended, its statement can run again.
	execAll(t, s, "RESET 'pipeline.name'", "STOP JOB '"+first+"'", insert)
	if j := s.Jobs()[3]; j.Name != name || j.Status != "RUNNING" {
		t.Fatalf("resubmitted after STOP JOB: %+v", j)
	}
}

// TestAutoResumeOnlyIntoTheSamePlan: a job resumes its folder's latest
// checkpoint only when its plan has the checkpoint's operators. A
// different statement under a 'pipeline.name' left set is refused with
// what differs and how to start over; the same statement resumes and the
// note says how to start over.
func TestAutoResumeOnlyIntoTheSamePlan(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, ckptDDL, "SET 'pipeline.name' = 'counting'")
	insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 2 })
	execAll(t, s, "STOP JOB '"+id+"'")

	other := "INSERT INTO counts SELECT k, MAX(id), MIN(id) FROM gen GROUP BY k"
	err = execErr(t, s, other)
	mustContainAll(t, "the error", err.Error(), "cannot resume job counting from checkpoint",
		"in the checkpoint, not in the plan:", "in the plan, not in the checkpoint:", "GroupAggregate",
		"the checkpoint is of: "+insert, "--fresh", "'pipeline.name'", "'execution.state-recovery.ignore-unclaimed-state' = 'true'")

	rs := execAll(t, s, insert)
	mustContainAll(t, "the note", rs[0].Message, "restored job counting from checkpoint",
		"(run with --fresh or SET a new 'pipeline.name' to start over)")
}

// TestRepeatedFailureFailsForGood: a row that cannot be cast fails every
// attempt of a checkpointed job the same way; with exponential-delay (the
// default) it would restart for ever. The tenth failure in a row with the
// same cause fails it for good, and every failure and restart is visible:
// in events as they happen and in SHOW JOBS.
func TestRepeatedFailureFailsForGood(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var events []JobEvent
	s.OnJobEvent(func(ev JobEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	execAll(t, s, "CREATE TABLE src (x STRING)", "CREATE TABLE dst (v INT)",
		"SET 'table.dml-sync' = 'true'", "INSERT INTO src VALUES ('1'), ('abc'), ('3')", "RESET 'table.dml-sync'",
		"SET 'execution.checkpointing.interval' = '1 h'",
		"SET 'restart-strategy.exponential-delay.initial-backoff' = '10 ms'",
		"SET 'restart-strategy.exponential-delay.max-backoff' = '20 ms'",
		"INSERT INTO dst SELECT CAST(x AS INT) FROM src")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err = s.WaitJobs(ctx)
	if err == nil || !strings.Contains(err.Error(), "abc") {
		t.Fatalf("WaitJobs: %v, want the cast failure", err)
	}
	j := s.Jobs()[1] // [0] filled src
	if j.Status != "FAILED" || j.Restarts != MaxRepeatedFailures-1 {
		t.Fatalf("want FAILED after %d restarts: %+v", MaxRepeatedFailures-1, j)
	}
	mustContainAll(t, "the job's error", j.Err.Error(), "abc", "the same failure 10 times in a row: not restarted again")

	row := describeJob(t, s, j.ID)
	if row["status"] != "FAILED" || row["restarts"] != "9" || row["last failure"] == nil {
		t.Errorf("DESCRIBE JOB: %v", row)
	}
	if e, _ := row["error"].(string); !strings.Contains(e, "abc") {
		t.Errorf("DESCRIBE JOB error: %v", row["error"])
	}

	mu.Lock()
	defer mu.Unlock()
	var failed, restarted, final int
	for _, ev := range events {
		switch {
		case ev.Kind == JobFailed && ev.Final:
			final++
		case ev.Kind == JobFailed:
			failed++
			if !strings.Contains(ev.Err.Error(), "abc") || ev.Repeated != failed {
				t.Errorf("failure event %d: %+v", failed, ev)
			}
		case ev.Kind == JobRestarted:
			restarted++
		}
	}
	if failed != 9 || restarted != 9 || final != 1 || !events[len(events)-1].Final {
		t.Errorf("events: %d failures, %d restarts, %d final, want 9, 9, 1 (last): %+v", failed, restarted, final, events)
	}
}

// TestRestartingJobShowsItsCause: while a job waits to restart, SHOW JOBS
// says RESTARTING with the failure's cause and time; a savepoint is refused
// with the truth (not "checkpointing is not set"), and STOP JOB ends the
// wait at once.
func TestRestartingJobShowsItsCause(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, "CREATE TABLE src (x STRING)", "CREATE TABLE dst (v INT)",
		"SET 'table.dml-sync' = 'true'", "INSERT INTO src VALUES ('abc')", "RESET 'table.dml-sync'",
		"SET 'execution.checkpointing.interval' = '1 s'",
		"SET 'restart-strategy.exponential-delay.initial-backoff' = '1 h'",
		"SET 'restart-strategy.exponential-delay.max-backoff' = '1 h'")
	id := execAll(t, s, "INSERT INTO dst SELECT CAST(x AS INT) FROM src")[0].JobID
	deadline := time.Now().Add(2 * time.Minute)
	for s.Jobs()[1].LastErr == nil { // [0] filled src
		if time.Now().After(deadline) {
			t.Fatalf("the job did not fail: %+v", s.Jobs()[1])
		}
		time.Sleep(10 * time.Millisecond)
	}
	row := describeJob(t, s, id)
	if e, _ := row["error"].(string); row["status"] != "RESTARTING" || !strings.Contains(e, "abc") || row["last failure"] == nil {
		t.Errorf("DESCRIBE JOB of a job waiting to restart: %v", row)
	}
	err = execErr(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")
	mustContainAll(t, "the error", err.Error(), "is restarting after a failure", "abc")
	if strings.Contains(err.Error(), "not set") {
		t.Errorf("the refusal says checkpointing is not set: %v", err)
	}
	execAll(t, s, "STOP JOB '"+id+"'")
	if st := s.Jobs()[1].Status; st != "CANCELED" {
		t.Errorf("after STOP JOB: %s", st)
	}
	// A job submitted before checkpointing was turned on takes a savepoint
	// all the same.
	execAll(t, s, "RESET 'execution.checkpointing.interval'", slowDDL, "INSERT INTO out SELECT id FROM ticks",
		"SET 'execution.checkpointing.interval' = '1 s'")
	msg := execAll(t, s, "STOP JOB '"+s.Jobs()[2].ID+"' WITH SAVEPOINT")[0].Message
	mustContainAll(t, "the message", msg, "stopped with savepoint")
}

// TestSavepointPathAlias restores a savepoint through Flink's older option
// name 'execution.savepoint.path' (into a fresh job folder: only the
// savepoint can bring the counts back).
func TestSavepointPathAlias(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, ckptDDL)
	insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 2 })
	msg := execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")[0].Message
	i := strings.Index(msg, "savepoint ")
	if i < 0 {
		t.Fatalf("no savepoint path in %q", msg)
	}
	path := strings.TrimSpace(msg[i+len("savepoint "):])
	s.Fresh = true
	execAll(t, s, "SET 'execution.savepoint.path' = '"+path+"'", "SET 'table.dml-sync' = 'true'")
	rs := execAll(t, s, insert)
	if !strings.Contains(rs[0].Message, "from "+path) {
		t.Fatalf("not restored from the savepoint: %q", rs[0].Message)
	}
	got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
	if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
		t.Fatalf("groups, rows, sum = %v, want 7, 20000, %d", got, 20000*20001/2)
	}
}
