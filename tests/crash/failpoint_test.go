package crash

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// fpRows and fpRate size the failpoint runs: 2 seconds, about ten
// checkpoints per job, so that a failpoint armed for its n-th hit (n up to
// fpMaxHit) fires well before the end.
const (
	fpRows   = 2_000_000
	fpRate   = 1_000_000
	fpMaxHit = 8
)

// failpointEnv arms a failpoint of the binary (see internal/failpoint).
func failpointEnv(spec string) []string { return []string{"STREAMSQL_FAILPOINT=" + spec} }

// expectFailpointKill runs the job file with a failpoint armed and checks
// that the failpoint killed the process with SIGKILL.
func (r *jobRun) expectFailpointKill(spec string) {
	r.t.Helper()
	want := r.latest()
	p := r.start(failpointEnv(spec))
	err := p.Wait()
	out := p.Output()
	name, _, _ := strings.Cut(spec, "@")
	if !testenv.KilledBySignal(err, syscall.SIGKILL) || !strings.Contains(out, "failpoint "+name+": killing the process") {
		r.t.Fatalf("with STREAMSQL_FAILPOINT=%s: want the failpoint to kill the process, got %v; output:\n%s", spec, err, out)
	}
	r.expectResumed(out, want)
	r.t.Logf("run with failpoint %s: %s; killed after %v by the failpoint; newest checkpoints now %v; uncommitted files left: %v",
		spec, restoredLines(out), time.Since(p.Start).Round(time.Millisecond), r.latest(), r.hiddenFiles())
}

// killWithCheckpoints runs the job file and kills it with SIGKILL as soon
// as each of jobs has at least n completed checkpoints (it waits for the
// checkpoints, however long the machine takes to make them, not for a
// fixed time). The run must not end before.
func (r *jobRun) killWithCheckpoints(n int, jobs ...string) {
	r.t.Helper()
	want := r.latest()
	p := r.start(nil)
	enough := func() bool {
		for _, j := range jobs {
			if len(completedCheckpoints(r.t, r.dataDir, j)) < n {
				return false
			}
		}
		return true
	}
	if !p.killWhen(enough) {
		r.t.Fatalf("run ended by itself (%v) before jobs %v had %d completed checkpoints each; output:\n%s", p.Err, jobs, n, p.Output())
	}
	r.expectResumed(p.Output(), want)
	var have []string
	for _, j := range jobs {
		have = append(have, fmt.Sprintf("%s %v", j, completedCheckpoints(r.t, r.dataDir, j)))
	}
	r.t.Logf("%s; SIGKILL after %v, once every job had %d completed checkpoints: %s", restoredLines(p.Output()), p.Took(), n, strings.Join(have, ", "))
}

// TestFailpoints crashes the process at each place of the checkpoint
// protocol where a crash is the hardest to recover from, on a random hit
// of the place (both jobs of the file count), restarts it without the
// failpoint and checks both outputs exactly.
func TestFailpoints(t *testing.T) {
	rng := testenv.NewRand(t, seed, seedEnv)
	for _, c := range []struct {
		failpoint string
		extra     []string
	}{
		// A sink pre-committed its files; the checkpoint is not complete.
		{"after-sink-precommit", nil},
		// The checkpoint is complete, no sink has committed it: the restart
		// must commit the files of its sink handles.
		{"after-metadata-before-commit", nil},
		// One of two sink subtasks committed, the other not.
		{"between-sink-commits", []string{"'parallelism.default' = '2'"}},
	} {
		hit := 2 + rng.IntN(fpMaxHit-1)
		t.Run(c.failpoint, func(t *testing.T) {
			r := newJobRun(t, jobSpec{rows: fpRows, rate: fpRate, extra: c.extra})
			r.expectFailpointKill(fmt.Sprintf("%s@%d", c.failpoint, hit))
			r.finish(nil)
			r.checkExact()
		})
	}
	// A crash while a job restores (state read, not yet running) must leave
	// the checkpoint it restores from intact for the next attempt. On the
	// first hit the first job (agg) restores; on the second, agg already
	// runs when the second (ids) restores. Both must have a checkpoint, or
	// the second hit never comes.
	hit := 1 + rng.IntN(2)
	t.Run("during-restore", func(t *testing.T) {
		r := newJobRun(t, jobSpec{rows: fpRows, rate: fpRate})
		r.killWithCheckpoints(1, "agg", "ids")
		r.expectFailpointKill(fmt.Sprintf("during-restore@%d", hit))
		r.finish(nil)
		r.checkExact()
	})
}
