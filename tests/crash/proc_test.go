package crash

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// binary is the streamsql binary TestMain builds.
var binary string

// runTimeout bounds one run of the binary; a run still going then is
// killed and fails the test (a hang is a bug too).
const runTimeout = 90 * time.Second

// seedEnv names the environment variable that fixes the seed of the
// random kill moments.
const seedEnv = "STREAMSQL_CRASH_SEED"

// seed is the seed of this test binary's random kill moments.
var seed uint64

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "streamsql-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = testenv.BuildStreamsql(dir); err != nil {
		fmt.Fprintln(os.Stderr, "crash tests:", err)
		return 1
	}
	if seed, err = testenv.Seed(seedEnv); err != nil {
		fmt.Fprintln(os.Stderr, "crash tests:", err)
		return 1
	}
	return m.Run()
}

// proc is one run of the binary.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	out   testenv.SyncBuffer // stdout and stderr, interleaved
	start time.Time
	done  chan struct{} // closed when the process has exited
	err   error         // of cmd.Wait, set before done closes
	timer *time.Timer
	// timedOut is set when the run was killed for taking runTimeout.
	timedOut atomic.Bool
}

// startRun starts `streamsql --data-dir DATA -f FILE [args]` with the extra
// environment variables env ("NAME=value").
func startRun(t *testing.T, dataDir, file string, env []string, args ...string) *proc {
	t.Helper()
	argv := append([]string{"--data-dir", dataDir}, args...)
	argv = append(argv, "-f", file)
	p := &proc{t: t, cmd: exec.Command(binary, argv...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting streamsql: %v", err)
	}
	p.timer = time.AfterFunc(runTimeout, func() {
		p.timedOut.Store(true)
		p.cmd.Process.Kill()
	})
	go func() {
		p.err = p.cmd.Wait()
		p.timer.Stop()
		close(p.done)
	}()
	return p
}

// wait waits for the process to exit and returns the error of cmd.Wait
// (nil for exit status 0).
func (p *proc) wait() error {
	<-p.done
	if p.timedOut.Load() {
		p.t.Fatalf("streamsql still running after %v; killed. Output:\n%s", runTimeout, p.output())
	}
	return p.err
}

// output is what the process printed so far.
func (p *proc) output() string { return p.out.String() }

// killAfter sends SIGKILL after d unless the process exits first. It
// reports whether the signal was sent to a running process; either way the
// process has exited when it returns.
func (p *proc) killAfter(d time.Duration) bool {
	select {
	case <-p.done:
		return false
	case <-time.After(d):
	}
	err := p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return err == nil && killedBySignal(p.err, syscall.SIGKILL)
}

// killedBySignal says whether err (of cmd.Wait) means the process died of
// signal sig.
func killedBySignal(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// mustSucceed waits for the run and fails the test unless it exited with
// status 0. It returns the output.
func (p *proc) mustSucceed() string {
	p.t.Helper()
	if err := p.wait(); err != nil {
		p.t.Fatalf("streamsql %s: %v; output:\n%s", strings.Join(p.cmd.Args[1:], " "), err, p.output())
	}
	return p.output()
}

// runToEnd runs the job file to the end and fails the test unless it exits
// with status 0. It returns the output.
func runToEnd(t *testing.T, dataDir, file string, env []string, args ...string) string {
	t.Helper()
	return startRun(t, dataDir, file, env, args...).mustSucceed()
}

// runFails runs the job file, expects a failure (exit status 1) and
// returns the output.
func runFails(t *testing.T, dataDir, file string, env []string, args ...string) string {
	t.Helper()
	p := startRun(t, dataDir, file, env, args...)
	err := p.wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("streamsql %s: want exit status 1, got %v; output:\n%s", strings.Join(p.cmd.Args[1:], " "), err, p.output())
	}
	return p.output()
}

var restoredRE = regexp.MustCompile(`restored job (\S+) from checkpoint (\d+)`)

// restoredFrom returns, per job name, the checkpoint the output says the
// job was restored from.
func restoredFrom(out string) map[string]int64 {
	m := map[string]int64{}
	for _, sm := range restoredRE.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(sm[2], 10, 64)
		m[sm[1]] = n
	}
	return m
}

// restoredLines are the "restored job ..." lines of an output, for the log.
func restoredLines(out string) string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "restored job") {
			ls = append(ls, strings.TrimSpace(l))
		}
	}
	if len(ls) == 0 {
		return "(started fresh)"
	}
	return strings.Join(ls, "; ")
}

// checkpointDir is where the checkpoints of a job live.
func checkpointDir(dataDir, job string) string {
	return filepath.Join(dataDir, "jobs", job, "checkpoints")
}

// completedCheckpoints returns the ids of the completed checkpoints of a
// job (those with a _metadata file), newest first.
func completedCheckpoints(t *testing.T, dataDir, job string) []int64 {
	t.Helper()
	ents, err := os.ReadDir(checkpointDir(dataDir, job))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), "chk-")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(checkpointDir(dataDir, job), e.Name(), "_metadata")); err == nil {
			ids = append(ids, id)
		}
	}
	for i := 1; i < len(ids); i++ { // few: insertion sort, descending
		for j := i; j > 0 && ids[j] > ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// latestCheckpoint is the newest completed checkpoint of a job, 0 if none.
func latestCheckpoint(t *testing.T, dataDir, job string) int64 {
	t.Helper()
	if ids := completedCheckpoints(t, dataDir, job); len(ids) > 0 {
		return ids[0]
	}
	return 0
}

// expectRestored checks that a run's output says each job was restored
// from the checkpoint in want (0: started without restoring).
func expectRestored(t *testing.T, out string, want map[string]int64) {
	t.Helper()
	got := restoredFrom(out)
	for job, id := range want {
		if got[job] != id {
			if id == 0 {
				t.Errorf("job %s: restored from checkpoint %d, but it had no completed checkpoint; output:\n%s", job, got[job], out)
			} else {
				t.Errorf("job %s: want \"restored job %s from checkpoint %d\" (its newest completed checkpoint), got %d; output:\n%s", job, job, id, got[job], out)
			}
		}
	}
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
