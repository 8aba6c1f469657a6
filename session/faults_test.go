package session

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
)

// The storage fault tests mount filesystems (a small tmpfs, a read-only
// bind mount), which takes root. They do not skip without it: they fail,
// saying so.

// faultBound bounds the waits of the fault tests. Failing and stopping end
// by construction (a failed write fails the store, a stop aborts it); the
// bound only turns a hang, the failure mode before, into a test failure,
// and is generous for a busy machine.
const faultBound = 30 * time.Second

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test mounts filesystems and must run as root (uid %d)", os.Geteuid())
	}
}

// mount runs mount(8) with args and unmounts target when the test ends.
// The unmount waits while the target is busy: the Pebble instance of a
// failed store closes in the background.
func mount(t *testing.T, target string, args ...string) {
	t.Helper()
	if out, err := exec.Command("mount", append(args, target)...).CombinedOutput(); err != nil {
		t.Fatalf("mount %s %s: %v\n%s", strings.Join(args, " "), target, err, out)
	}
	t.Cleanup(func() {
		start := time.Now()
		for {
			out, err := exec.Command("umount", target).CombinedOutput()
			if err == nil {
				t.Logf("unmounted %s after %v", target, time.Since(start).Round(time.Millisecond))
				return
			}
			if !strings.Contains(string(out), "busy") || time.Since(start) > faultBound {
				t.Errorf("umount %s: %v\n%s", target, err, out)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// fillBound bounds how long the GROUP BY takes to fill the 20 MB disk (a
// few seconds on an idle machine); it is not the bound under test.
const fillBound = 3 * time.Minute

// waitJob polls the session's first job until ok holds, failing the test
// after bound.
func waitJob(t *testing.T, s *Session, what string, bound time.Duration, ok func(JobInfo) bool) JobInfo {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		j := s.Jobs()[0]
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s: %+v", bound, what, j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const faultDDL = `CREATE TABLE gen (id BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
	'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000',
	'fields.v.min' = '1', 'fields.v.max' = '9');
CREATE TABLE nothing (id BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');`

const faultInsert = "INSERT INTO nothing SELECT id, COUNT(*), SUM(v) FROM gen GROUP BY id"

// TestUnwritableCheckpointDir: once the job's checkpoints directory is
// read-only, every checkpoint fails (its directory cannot be made), each
// counts, and past the tolerable failures the job fails with the cause; it
// restarts by its strategy (once here), fails again and stays failed with
// the cause in its error.
func TestUnwritableCheckpointDir(t *testing.T) {
	s, ckpts := readOnlyCheckpoints(t, "10ms")
	start := time.Now()
	j := waitJob(t, s, "the job to fail", faultBound, func(j JobInfo) bool { return j.Status == "FAILED" })
	t.Logf("failed %v after the checkpoints directory became read-only: %v (restarts %d, %d checkpoints failed)",
		time.Since(start).Round(time.Millisecond), j.Err, j.Restarts, j.Checkpoints.Failed)
	if !errors.Is(j.Err, checkpoint.ErrTooManyFailures) || !errors.Is(j.Err, syscall.EROFS) {
		t.Fatalf("job error %v: want ErrTooManyFailures wrapping EROFS", j.Err)
	}
	if !strings.Contains(j.Err.Error(), "read-only file system") || !strings.Contains(j.Err.Error(), ckpts) {
		t.Fatalf("job error %q does not name the cause and the directory", j.Err)
	}
	// Two attempts, each failing after 3 failed checkpoints (2 tolerated).
	if j.Restarts != 1 || j.Checkpoints.Failed < 6 {
		t.Fatalf("restarts %d, failed checkpoints %d: want 1 restart and at least 6 failed checkpoints", j.Restarts, j.Checkpoints.Failed)
	}
}

// TestStopDuringRestartDelay: a job stopped while it waits to restart (an
// hour here) stops at once.
func TestStopDuringRestartDelay(t *testing.T) {
	s, _ := readOnlyCheckpoints(t, "1h")
	e := s.jobs.all()[0]
	deadline := time.Now().Add(faultBound)
	for e.attempt() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the job did not fail within %v: %+v", faultBound, e.info())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() {
		s.StopJobs()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(faultBound):
		t.Fatalf("the job waiting to restart did not stop within %v", faultBound)
	}
	t.Logf("stopped %v after it was asked, during the restart delay", time.Since(start).Round(time.Millisecond))
	if j := s.Jobs()[0]; j.Status != "CANCELED" || j.Restarts != 0 {
		t.Fatalf("after the stop: %+v", j)
	}
}

// readOnlyCheckpoints starts a checkpointed GROUP BY that tolerates 2
// failed checkpoints and restarts once after delay, waits for a completed
// checkpoint, then makes the job's checkpoints directory read-only (a
// read-only bind mount: root writes through a chmod). It returns the
// session and that directory.
func readOnlyCheckpoints(t *testing.T, delay string) (*Session, string) {
	t.Helper()
	needRoot(t)
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	execAll(t, s, faultDDL,
		"SET 'execution.checkpointing.interval' = '50ms'",
		"SET 'execution.checkpointing.tolerable-failed-checkpoints' = '2'",
		"SET 'restart-strategy.type' = 'fixed-delay'",
		"SET 'restart-strategy.fixed-delay.attempts' = '1'",
		"SET 'restart-strategy.fixed-delay.delay' = '"+delay+"'",
		"CREATE TABLE slow (id BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000', 'fields.v.min' = '1', 'fields.v.max' = '9')")
	execAll(t, s, "INSERT INTO nothing SELECT id % 100, COUNT(*), SUM(v) FROM slow GROUP BY id % 100")
	waitJob(t, s, "a completed checkpoint", faultBound, func(j JobInfo) bool { return j.Checkpoints.LastID > 0 })
	ckpts := filepath.Join(dir, "jobs", s.Jobs()[0].Name, "checkpoints")
	mount(t, ckpts, "--bind", ckpts)
	t.Cleanup(s.StopJobs) // before the unmount
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", ckpts).CombinedOutput(); err != nil {
		t.Fatalf("mount -o remount,bind,ro %s: %v\n%s", ckpts, err, out)
	}
	return s, ckpts
}

// TestDiskFullFailsJob runs a GROUP BY over ever new keys on Pebble in a
// data directory on a 20 MB tmpfs. Once the disk is full, the aggregate's
// store fails (Pebble would retry its flush for ever), or the checkpoint's
// own files cannot be written; the checkpoint fails and the job fails with
// ENOSPC in its error, within the checkpoint timeout. A second job, which tolerates the failed checkpoints and keeps
// running on its failed store, stops at once when asked.
func TestDiskFullFailsJob(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name      string
		tolerable string
	}{{"fails", "0"}, {"stops", "1000000"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mount(t, dir, "-t", "tmpfs", "-o", "size=20m", "tmpfs")
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			execAll(t, s, faultDDL,
				"SET 'execution.checkpointing.interval' = '200ms'",
				"SET 'execution.checkpointing.timeout' = '5s'",
				"SET 'execution.checkpointing.tolerable-failed-checkpoints' = '"+tc.tolerable+"'",
				"SET 'restart-strategy.type' = 'none'",
				// Room for every group in memory, by bytes and by count: a
				// group evicted between checkpoints would have to be read
				// back (or written back) through the failed store and fail
				// the job, which "stops" must keep running. The disk fills
				// at a few million groups, later the smaller each group's
				// state is.
				"SET 'taskmanager.memory.managed.size' = '2 gb'",
				"SET 'state.backend.cache.max-entries' = '100000000'")
			defer s.StopJobs()
			start := time.Now()
			execAll(t, s, faultInsert)
			if tc.name == "fails" {
				j := waitJob(t, s, "the job to fail", fillBound, func(j JobInfo) bool { return j.Status != "RUNNING" })
				t.Logf("failed after %v (%d checkpoints completed, %d failed): %v", time.Since(start).Round(time.Millisecond),
					j.Checkpoints.Completed, j.Checkpoints.Failed, j.Err)
				// Whichever write meets the full disk first fails the job: the
				// store's flush (state.ErrFailed) or the checkpoint's own files
				// (its _metadata); either way the cause is ENOSPC.
				if j.Status != "FAILED" || !errors.Is(j.Err, syscall.ENOSPC) {
					t.Fatalf("job %s with error %v: want FAILED with ENOSPC", j.Status, j.Err)
				}
				if !strings.Contains(j.Err.Error(), "no space left on device") {
					t.Fatalf("job error %q does not say the disk is full", j.Err)
				}
				return
			}
			waitJob(t, s, "a failed checkpoint", fillBound, func(j JobInfo) bool {
				if j.Status != "RUNNING" {
					t.Fatalf("the job ended: %+v", j)
				}
				return j.Checkpoints.Failed > 0
			})
			failedAt := time.Now()
			stopped := make(chan struct{})
			go func() {
				s.StopJobs()
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-time.After(faultBound):
				t.Fatalf("the job did not stop within %v; %+v", faultBound, s.Jobs()[0])
			}
			t.Logf("the store failed after %v; the job stopped %v after it was asked", failedAt.Sub(start).Round(time.Millisecond),
				time.Since(failedAt).Round(time.Millisecond))
			if j := s.Jobs()[0]; j.Status != "CANCELED" {
				t.Fatalf("after the stop: %+v", j)
			}
		})
	}
}
