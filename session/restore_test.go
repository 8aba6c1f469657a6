package session

import (
	"strings"
	"testing"
	"time"
)

// pollJob polls job i of the session until ok holds; it fails the test
// when the job stops running first, or after 20 s.
func pollJob(t *testing.T, s *Session, i int, what string, ok func(JobInfo) bool) JobInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := s.Jobs()[i]
		if ok(j) {
			return j
		}
		if j.Status != "RUNNING" || time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stopWithSavepoint stops job id with a savepoint and returns its path.
func stopWithSavepoint(t *testing.T, s *Session, id string) string {
	t.Helper()
	msg := execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")[0].Message
	i := strings.Index(msg, "savepoint ")
	if i < 0 {
		t.Fatalf("no savepoint path in %q", msg)
	}
	return strings.TrimSpace(msg[i+len("savepoint "):])
}

// TestRestoreOlderThanFolderRefused: a job restored from a savepoint took
// newer checkpoints into its folder, then ended (as after a crash); the
// same restore again would write again what the sinks committed between
// the savepoint and those checkpoints, so it is refused, naming both and
// the ways on: without the path (resume the newer checkpoint), --fresh
// (discard the folder's checkpoints) or --allow-older-restore.
func TestRestoreOlderThanFolderRefused(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, slowDDL, "SET 'execution.checkpointing.interval' = '50ms'")
	insert := "INSERT INTO out SELECT id FROM ticks"
	id := execAll(t, s, insert)[0].JobID
	pollJob(t, s, 0, "a checkpoint", func(j JobInfo) bool { return j.Checkpoints.LastID >= 1 })
	sp := stopWithSavepoint(t, s, id)

	execAll(t, s, "SET 'execution.state-recovery.path' = '"+sp+"'")
	id = execAll(t, s, insert)[0].JobID
	from := s.Jobs()[1].RestoredFrom
	pollJob(t, s, 1, "a checkpoint after the savepoint", func(j JobInfo) bool { return j.Checkpoints.LastID > from })
	execAll(t, s, "STOP JOB '"+id+"'")

	err = execErr(t, s, insert)
	mustContainAll(t, "the error", err.Error(), "cannot restore job", "savepoint '"+sp+"'", "holds checkpoint",
		"newer", "--fresh", "--allow-older-restore", "without -s")
	if len(s.Jobs()) != 2 {
		t.Fatalf("a job was submitted: %+v", s.Jobs())
	}

	s.AllowOlderRestore = true
	rs := execAll(t, s, insert)
	if !strings.Contains(rs[0].Message, "from "+sp) {
		t.Fatalf("--allow-older-restore: not restored from the savepoint: %q", rs[0].Message)
	}
	execAll(t, s, "STOP JOB '"+rs[0].JobID+"'")

	s.AllowOlderRestore, s.Fresh = false, true
	rs = execAll(t, s, insert)
	if !strings.Contains(rs[0].Message, "from "+sp) {
		t.Fatalf("--fresh: not restored from the savepoint: %q", rs[0].Message)
	}
}

// TestRestoreNextIsOneShot: the -s path (Session.RestoreNext) is restored
// by the first job submitted only; a later job starts on its own. A job
// that restores what another job took is warned of it.
func TestRestoreNextIsOneShot(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, slowDDL, "SET 'execution.checkpointing.interval' = '50ms'")
	a := "INSERT INTO out SELECT id FROM ticks"
	id := execAll(t, s, a)[0].JobID
	nameA := s.Jobs()[0].Name
	pollJob(t, s, 0, "a checkpoint", func(j JobInfo) bool { return j.Checkpoints.LastID >= 1 })
	sp := stopWithSavepoint(t, s, id)

	s.RestoreNext = sp
	rs := execAll(t, s, a)
	if !strings.Contains(rs[0].Message, "restored job "+nameA+" from "+sp) || strings.Contains(rs[0].Message, "WARNING") {
		t.Fatalf("the first job after -s: %q", rs[0].Message)
	}
	if s.RestoreNext != "" {
		t.Errorf("RestoreNext left set after a job restored it: %q", s.RestoreNext)
	}
	b := "INSERT INTO out SELECT id + 1 FROM ticks"
	rs = execAll(t, s, b)
	if strings.Contains(rs[0].Message, "restored") || s.Jobs()[2].RestoredFrom != 0 {
		t.Fatalf("a second job restored the -s path too: %q %+v", rs[0].Message, s.Jobs()[2])
	}
	execAll(t, s, "STOP JOB '"+s.Jobs()[1].ID+"'", "STOP JOB '"+s.Jobs()[2].ID+"'")

	// Another job restoring A's savepoint is told whose it is.
	s.RestoreNext = sp
	s.Fresh = true
	rs = execAll(t, s, "SET 'pipeline.name' = 'other'", b)
	mustContainAll(t, "the message", rs[len(rs)-1].Message, "WARNING: job other restores '"+sp+"', which job "+nameA+" took")
}
