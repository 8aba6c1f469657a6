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
	*testenv.Proc
	t *testing.T
}

// startRun starts `streamsql --data-dir DATA [args] -f FILE` with the extra
// environment variables env ("NAME=value").
func startRun(t *testing.T, dataDir, file string, env []string, args ...string) *proc {
	t.Helper()
	argv := append(append([]string{"--data-dir", dataDir}, args...), "-f", file)
	return &proc{Proc: testenv.StartProc(t, runTimeout, env, binary, argv...), t: t}
}

// mustSucceed waits for the run and fails the test unless it exited with
// status 0. It returns the output.
func (p *proc) mustSucceed() string {
	p.t.Helper()
	if err := p.Wait(); err != nil {
		p.t.Fatalf("streamsql %s: %v; output:\n%s", strings.Join(p.Args()[1:], " "), err, p.Output())
	}
	return p.Output()
}

// killWhen checks cond every few milliseconds and kills the run with
// SIGKILL as soon as it holds. It reports whether the signal killed the
// running process (false: the run ended by itself first); either way the
// process has exited when it returns.
func (p *proc) killWhen(cond func() bool) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-p.Done():
			return false
		case <-tick.C:
		}
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.Done()
	return testenv.KilledBySignal(p.Err, syscall.SIGKILL)
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
	err := p.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("streamsql %s: want exit status 1, got %v; output:\n%s", strings.Join(p.Args()[1:], " "), err, p.Output())
	}
	return p.Output()
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
