package crash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// diskFullJob is a GROUP BY over ever new keys on Pebble that tolerates
// any number of failed checkpoints, so that it keeps running on a full
// disk until it is stopped.
const diskFullJob = `CREATE TABLE gen (id BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000000',
  'fields.v.min' = '1', 'fields.v.max' = '9');
CREATE TABLE nothing (id BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
SET 'execution.checkpointing.interval' = '200ms';
SET 'execution.checkpointing.timeout' = '5s';
SET 'execution.checkpointing.tolerable-failed-checkpoints' = '1000000';
-- Room for every group in memory, by bytes and by count: the groups fill
-- the disk through the checkpoints' flushes, not through write-backs of
-- groups evicted between checkpoints, nor reads of them through the
-- failed store (which would fail the job at once). The disk fills at
-- about a million groups, past the default bound of the cached keys.
SET 'taskmanager.memory.managed.size' = '2 gb';
SET 'state.backend.cache.max-entries' = '100000000';
INSERT INTO nothing SELECT id, COUNT(*), SUM(v) FROM gen GROUP BY id;
`

// TestDiskFullSIGTERM runs `streamsql -f` with its data directory on a
// 20 MB tmpfs (the test mounts it, as root: without root it fails). Once
// the disk is full, the failure is said once on stderr and each failed
// checkpoint with its cause; SIGTERM then stops the run within seconds
// (before, Pebble's flush was retried for ever, the aggregate waited for
// it, and the run never ended after "Stopping 1 running jobs...").
func TestDiskFullSIGTERM(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test mounts a tmpfs and must run as root (uid %d)", os.Geteuid())
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", data).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		start := time.Now()
		for {
			out, err := exec.Command("umount", data).CombinedOutput()
			if err == nil {
				return
			}
			if !strings.Contains(string(out), "busy") || time.Since(start) > 30*time.Second {
				t.Errorf("umount %s: %v\n%s", data, err, out)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	file := writeFile(t, dir, "job.sql", diskFullJob)
	p := startRun(t, data, file, nil)
	// The run fills the disk (a few seconds on an idle machine; runTimeout
	// bounds it), then its checkpoints fail.
	for !strings.Contains(p.Output(), "failed (1 in a row") {
		select {
		case <-p.Done():
			t.Fatalf("the run ended before a checkpoint failed: %v\n%s", p.Wait(), p.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	asked := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not stop within 30s of SIGTERM:\n%s", p.Output())
	}
	p.Wait()
	out := p.Output()
	t.Logf("stopped %v after SIGTERM", time.Since(asked).Round(time.Millisecond))
	if n := strings.Count(out, "failed: write "); n != 1 || !strings.Contains(out, "no space left on device") {
		t.Errorf("want the store's failure said once, with its cause (%d times):\n%s", n, out)
	}
	if n := strings.Count(out, "\n"); n > 200 {
		t.Errorf("%d lines of output on a full disk: noise", n)
	}
	if !strings.Contains(out, "Stopped without a savepoint (exit code 143") {
		t.Errorf("the run did not say it stopped:\n%s", out)
	}
}
