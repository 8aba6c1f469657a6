package kafka

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// runTimeout bounds one run of the engine; a run still going then is
// killed and fails the test (a hang is a bug too).
const runTimeout = 120 * time.Second

// proc is one run of the engine.
type proc struct {
	*testenv.Proc
	// firstCheckpoint is when (since start) the run completed its first
	// checkpoint, 0 if it has not (see watchCheckpoints).
	firstCheckpoint atomic.Int64
}

// watchCheckpoints notes when the run completes a checkpoint newer than
// after, polling the job's checkpoint directory until the process exits.
func (p *proc) watchCheckpoints(dataDir, job string, after int64) {
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.Done():
				return
			case <-tick.C:
			}
			if ids, err := listCheckpoints(dataDir, job); err == nil && len(ids) > 0 && ids[0] > after {
				p.firstCheckpoint.Store(int64(time.Since(p.Start)))
				return
			}
		}
	}()
}

// startEngine starts `streamsql --data-dir DATA [args] -f FILE` with the
// extra environment variables env ("NAME=value").
func startEngine(t *testing.T, dataDir, file string, env []string, args ...string) *proc {
	t.Helper()
	argv := append(append([]string{"--data-dir", dataDir}, args...), "-f", file)
	return &proc{Proc: testenv.StartProc(t, runTimeout, env, binary, argv...)}
}

// exitCode is the exit status of a run that ended by itself, -1 if it was
// killed by a signal.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

var restoredRE = regexp.MustCompile(`restored job (\S+) from checkpoint (\d+)`)

// restoredFrom returns the checkpoint the output says job was restored
// from (0: none).
func restoredFrom(out, job string) int64 {
	for _, sm := range restoredRE.FindAllStringSubmatch(out, -1) {
		if sm[1] == job {
			n, _ := strconv.ParseInt(sm[2], 10, 64)
			return n
		}
	}
	return 0
}

// restoredLine is the "restored job ..." line of an output, for the log.
func restoredLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "restored job") {
			return strings.TrimSpace(l)
		}
	}
	if !strings.Contains(out, "Job ID:") {
		return "killed before the job was submitted"
	}
	return "started fresh"
}

// completedCheckpoints returns the ids of the completed checkpoints of a
// job (those with a _metadata file), newest first.
func completedCheckpoints(t *testing.T, dataDir, job string) []int64 {
	t.Helper()
	ids, err := listCheckpoints(dataDir, job)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// listCheckpoints is completedCheckpoints returning its error.
func listCheckpoints(dataDir, job string) ([]int64, error) {
	dir := filepath.Join(dataDir, "jobs", job, "checkpoints")
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
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
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata")); err == nil {
			ids = append(ids, id)
		}
	}
	for i := 1; i < len(ids); i++ { // few: insertion sort, descending
		for j := i; j > 0 && ids[j] > ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids, nil
}

// latestCheckpoint is the newest completed checkpoint of a job, 0 if none.
func latestCheckpoint(t *testing.T, dataDir, job string) int64 {
	t.Helper()
	if ids := completedCheckpoints(t, dataDir, job); len(ids) > 0 {
		return ids[0]
	}
	return 0
}
