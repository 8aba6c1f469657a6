package session

import (
	"bytes"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// The tests here inject storage faults through the filesystem seams
// (internal/fsutil for checkpoint storage and the filesystem sink, Pebble's
// vfs for the state stores) instead of mounting filesystems: they run
// without root, and each fails exactly the operations it says.

// injectedCheckpoints are the checkpoints (by id) of the job's first
// attempt whose writes a test fails: 2 and 3. Checkpoint 1 completes
// first, so that the job, which tolerates one failed checkpoint, goes on
// after the first failure and restarts from checkpoint 1 after the second.
// (The restarted attempt numbers its checkpoints from 2 again: the failed
// ones left no directory.)
var injectedCheckpoints = map[int64]bool{2: true, 3: true}

// checkpointOf returns the id of the checkpoint directory (chk-<n>) that
// path is in, or 0.
func checkpointOf(path string) int64 {
	for _, elem := range strings.Split(filepath.ToSlash(path), "/") {
		if n, ok := strings.CutPrefix(elem, "chk-"); ok {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil {
				return id
			}
		}
	}
	return 0
}

// faultCounter decides which operations fail, and counts them by
// checkpoint.
type faultCounter struct {
	mu   sync.Mutex
	hits map[int64]int
	// maxID is the highest checkpoint seen; an operation on a lower one is
	// of the restarted attempt, which runs without faults (done).
	maxID int64
	done  bool
}

// fail reports whether an operation of the first attempt in one of the
// injectedCheckpoints (the one holding path) is to fail, and counts it.
func (c *faultCounter) fail(path string) bool {
	id := checkpointOf(path)
	if id == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id < c.maxID {
		c.done = true
	}
	c.maxID = max(c.maxID, id)
	if c.done || !injectedCheckpoints[id] {
		return false
	}
	if c.hits == nil {
		c.hits = map[int64]int{}
	}
	c.hits[id]++
	return true
}

func (c *faultCounter) failed() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int64]int{}
	for k, v := range c.hits {
		out[k] = v
	}
	return out
}

// logCapture collects the standard logger's output (where the runtime
// reports every failed checkpoint) for the duration of a test.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	os.Stderr.Write(p)
	return l.buf.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func captureLog(t *testing.T) *logCapture {
	l := &logCapture{}
	prev := log.Writer()
	log.SetOutput(l)
	t.Cleanup(func() { log.SetOutput(prev) })
	return l
}

// faultJobDDL is a bounded source (4 s at its rate, time for many
// checkpoints every 50 ms) into a GROUP BY on Pebble, whose result is
// exact only if no row was lost or counted twice across the failed
// checkpoints and the restart.
const faultJobDDL = `CREATE TABLE gen (id BIGINT, k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',
	'rows-per-second' = '5000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
	'fields.k.min' = '1', 'fields.k.max' = '7');
CREATE TABLE counts (k INT, c BIGINT, s BIGINT);
SET 'execution.checkpointing.interval' = '50ms';
SET 'execution.checkpointing.tolerable-failed-checkpoints' = '1';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1';
SET 'restart-strategy.fixed-delay.delay' = '10ms'`

// runCheckpointFault runs faultJobDDL's aggregation in a session over dir
// (set up by the caller to fail the writes of checkpoints 2 and 3) and
// checks the outcome: checkpoint 2 fails and the job goes on, checkpoint 3
// fails and the job (past its one tolerated failure) fails with cause in
// its error, restarts from checkpoint 1, and finishes with the exact
// result; both failures are logged with their cause and counted.
func runCheckpointFault(t *testing.T, s *Session, faults *faultCounter, cause error, causeText string) {
	t.Helper()
	logs := captureLog(t)
	t.Cleanup(func() { s.Close() })
	execAll(t, s, faultJobDDL)
	execAll(t, s, "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k")
	t.Cleanup(s.StopJobs)
	j := waitJob(t, s, "the job to finish", 5*time.Minute, func(j JobInfo) bool {
		return j.Status == "FINISHED" || j.Status == "FAILED" || j.Status == "CANCELED"
	})
	t.Logf("job %s after %d restart(s), restored from %d; checkpoints %+v; injected failures by checkpoint %v; last error: %v",
		j.Status, j.Restarts, j.RestoredFrom, j.Checkpoints, faults.failed(), j.LastErr)
	if j.Status != "FINISHED" {
		t.Fatalf("job %s: %v (last error %v)", j.Status, j.Err, j.LastErr)
	}
	if hits := faults.failed(); hits[2] == 0 || hits[3] == 0 {
		t.Fatalf("the injected faults did not all hit: %v", hits)
	}
	// From checkpoint 1, the last one complete when the job failed (or,
	// should one more complete before the failure stopped the job, from
	// that one: never from a failed one).
	if j.Restarts != 1 || j.RestoredFrom < 1 || injectedCheckpoints[j.RestoredFrom] {
		t.Fatalf("restarts %d, restored from checkpoint %d: want one restart, from a complete checkpoint", j.Restarts, j.RestoredFrom)
	}
	if !errors.Is(j.LastErr, checkpoint.ErrTooManyFailures) || !errors.Is(j.LastErr, cause) || !strings.Contains(j.LastErr.Error(), causeText) {
		t.Fatalf("last failure %v: want ErrTooManyFailures wrapping %v (%q)", j.LastErr, cause, causeText)
	}
	if j.Checkpoints.Failed < 2 {
		t.Fatalf("%d failed checkpoints counted, want at least 2", j.Checkpoints.Failed)
	}
	out := logs.String()
	for _, id := range []string{"2", "3"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "checkpoint "+id+" of job ") {
				line = l
			}
		}
		if !strings.Contains(line, "failed") || !strings.Contains(line, causeText) {
			t.Fatalf("checkpoint %s's failure is not logged with its cause %q:\n%s", id, causeText, out)
		}
	}
	got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
	if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
		t.Fatalf("groups, rows, sum = %v, want 7, 20000, %d: rows lost or counted twice", got, 20000*20001/2)
	}
}

// openFaultSession opens a session on a new data directory whose
// checkpoint writes go through fsutil.Inject(fn).
func openFaultSession(t *testing.T, fn func(fsutil.Op) error) *Session {
	t.Helper()
	dir := t.TempDir()
	if fn != nil {
		t.Cleanup(fsutil.Install(dir, fsutil.Inject(fsutil.OS, fn)))
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMetadataSyncFails: the fsync of checkpoints 2 and 3's _metadata
// fails (EIO). Neither checkpoint completes (no _metadata is left), the
// job goes on after the first and restarts from checkpoint 1 after the
// second, and its result is exact.
func TestMetadataSyncFails(t *testing.T) {
	faults := &faultCounter{}
	s := openFaultSession(t, func(op fsutil.Op) error {
		if op.Kind == fsutil.OpSync && filepath.Base(op.Path) == checkpoint.MetadataFile+".inprogress" && faults.fail(op.Path) {
			return syscall.EIO
		}
		return nil
	})
	runCheckpointFault(t, s, faults, syscall.EIO, "input/output error")
}

// TestMetadataRenameFails: the rename of checkpoints 2 and 3's _metadata
// into place fails; as above.
func TestMetadataRenameFails(t *testing.T) {
	faults := &faultCounter{}
	s := openFaultSession(t, func(op fsutil.Op) error {
		if op.Kind == fsutil.OpRename && filepath.Base(op.Path) == checkpoint.MetadataFile && faults.fail(op.Path) {
			return syscall.EIO
		}
		return nil
	})
	runCheckpointFault(t, s, faults, syscall.EIO, "rename")
}

// TestCheckpointStateDiskFull: every write of the aggregate's state files
// into checkpoints 2 and 3 fails with ENOSPC (Pebble's errorfs under the
// stores). The checkpoints fail but the stores stay sound (their own
// working directories are fine); as above.
func TestCheckpointStateDiskFull(t *testing.T) {
	faults := &faultCounter{}
	s := openFaultSession(t, nil)
	s.stateFS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && faults.fail(op.Path) {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	runCheckpointFault(t, s, faults, syscall.ENOSPC, "no space left on device")
}

// TestFilesystemSinkFaults: a filesystem sink whose part file cannot be
// written (at the checkpoint's pre-commit: the checkpoint fails, and the
// job, tolerating none, fails) or cannot be renamed to its final name (the
// commit of a complete checkpoint fails, and so does the job) restarts by
// its strategy, from the last complete checkpoint, and the directory ends
// with every row exactly once. So does one whose part file cannot be
// synced while the job tolerates failed checkpoints: the rows of that file
// cannot be made durable, so the sink fails the job rather than go on
// without them.
func TestFilesystemSinkFaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kind      fsutil.OpKind
		cause     string
		tolerable string
	}{
		{"write", fsutil.OpWrite, "input/output error", "0"},
		{"rename", fsutil.OpRename, "input/output error", "0"},
		{"sync", fsutil.OpSync, "input/output error", "100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			// The third part file's operation of that kind fails, once.
			third := failThird(func(op fsutil.Op) bool {
				return op.Kind == tc.kind && strings.Contains(filepath.Base(op.Path), "part-")
			})
			t.Cleanup(fsutil.Install(out, fsutil.Inject(fsutil.OS, third.inject)))
			s := openFaultSession(t, nil)
			t.Cleanup(func() { s.Close() })
			execAll(t, s, `CREATE TABLE gen (id BIGINT, k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',
	'rows-per-second' = '5000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000',
	'fields.k.min' = '1', 'fields.k.max' = '7')`,
				"CREATE TABLE out (id BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = '"+out+"', 'format' = 'csv')",
				"SET 'execution.checkpointing.interval' = '50ms'",
				"SET 'execution.checkpointing.tolerable-failed-checkpoints' = '"+tc.tolerable+"'",
				"SET 'restart-strategy.type' = 'fixed-delay'",
				"SET 'restart-strategy.fixed-delay.attempts' = '1'",
				"SET 'restart-strategy.fixed-delay.delay' = '10ms'",
				"INSERT INTO out SELECT id, k FROM gen")
			t.Cleanup(s.StopJobs)
			j := waitJob(t, s, "the job to finish", 5*time.Minute, func(j JobInfo) bool {
				return j.Status == "FINISHED" || j.Status == "FAILED" || j.Status == "CANCELED"
			})
			at := third.path()
			t.Logf("job %s after %d restart(s), restored from %d; the %s of %s failed: %v", j.Status, j.Restarts, j.RestoredFrom, tc.name, at, j.LastErr)
			if j.Status != "FINISHED" || at == "" {
				t.Fatalf("job %s (%v), injected failure at %q", j.Status, j.Err, at)
			}
			checkExactlyOnce(t, out, 20000)
			if j.Restarts != 1 || j.LastErr == nil || !errors.Is(j.LastErr, syscall.EIO) || !strings.Contains(j.LastErr.Error(), tc.cause) {
				t.Fatalf("restarts %d, last failure %v: want one restart after an EIO", j.Restarts, j.LastErr)
			}
		})
	}
}

// checkExactlyOnce reads the committed part files in dir (rows "id,k")
// and checks that ids 1 to n each appear exactly once.
func checkExactlyOnce(t *testing.T, dir string, n int) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	count := make([]int, n+1)
	files := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		files++
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			idText, _, _ := strings.Cut(line, ",")
			id, err := strconv.Atoi(idText)
			if err != nil || id < 1 || id > n {
				t.Fatalf("%s: bad row %q", e.Name(), line)
			}
			count[id]++
		}
	}
	var lost, twice []int
	for id := 1; id <= n; id++ {
		switch {
		case count[id] == 0:
			lost = append(lost, id)
		case count[id] > 1:
			twice = append(twice, id)
		}
	}
	if len(lost) > 0 || len(twice) > 0 {
		t.Fatalf("%d committed files: %d ids missing (first %v), %d more than once (first %v)",
			files, len(lost), lost[:min(len(lost), 5)], len(twice), twice[:min(len(twice), 5)])
	}
	t.Logf("%d committed files hold ids 1 to %d exactly once", files, n)
}

// TestMemorySinkStagingFails: the in-memory table's sink cannot stage the
// rows of a checkpoint (the fsync of its staged file fails, once). The
// checkpoint fails and the job, which tolerates it, goes on; the rows of
// that checkpoint go with the next one, and the table is exact.
func TestMemorySinkStagingFails(t *testing.T) {
	third := failThird(func(op fsutil.Op) bool {
		return op.Kind == fsutil.OpSync && strings.Contains(filepath.ToSlash(op.Path), "/staged/")
	})
	s := openFaultSession(t, third.inject)
	t.Cleanup(func() { s.Close() })
	execAll(t, s, faultJobDDL, "SET 'execution.checkpointing.tolerable-failed-checkpoints' = '100'")
	execAll(t, s, "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k")
	t.Cleanup(s.StopJobs)
	j := waitJob(t, s, "the job to finish", 5*time.Minute, func(j JobInfo) bool {
		return j.Status == "FINISHED" || j.Status == "FAILED" || j.Status == "CANCELED"
	})
	at := third.path()
	t.Logf("job %s after %d restart(s); checkpoints %+v; the sync of %s failed", j.Status, j.Restarts, j.Checkpoints, at)
	if j.Status != "FINISHED" || at == "" {
		t.Fatalf("job %s (%v), injected failure at %q", j.Status, j.Err, at)
	}
	if j.Restarts != 0 || j.Checkpoints.Failed < 1 {
		t.Fatalf("restarts %d, failed checkpoints %d: want the job to go on past the failed checkpoint", j.Restarts, j.Checkpoints.Failed)
	}
	got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
	if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
		t.Fatalf("groups, rows, sum = %v, want 7, 20000, %d: rows lost or counted twice", got, 20000*20001/2)
	}
}

// thirdFailure fails, with EIO, the third filesystem operation that its
// match accepts, and only that one, and remembers its path.
type thirdFailure struct {
	match    func(fsutil.Op) bool
	mu       sync.Mutex
	seen     int
	failedAt string
}

func failThird(match func(fsutil.Op) bool) *thirdFailure { return &thirdFailure{match: match} }

func (f *thirdFailure) inject(op fsutil.Op) error {
	if !f.match(op) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen++
	if f.seen != 3 {
		return nil
	}
	f.failedAt = op.Path
	return syscall.EIO
}

// path is the path of the operation that failed ("" while none has).
func (f *thirdFailure) path() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failedAt
}
