package crash

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// killRows and killRate size the runs that are killed at random moments:
// at killRate rows per second a whole run takes killRows/killRate = 7
// seconds, longer than the sum of the kill delays minus what each restart
// repeats, so the kills land while the jobs run.
const (
	killRows = 5_000_000
	killRate = 700_000
	// kills is how many times a run is killed before one may finish.
	kills = 10
	// The kill moments are uniform in [minKillDelay, maxKillDelay) after
	// the start of a run.
	minKillDelay = 100 * time.Millisecond
	maxKillDelay = 1200 * time.Millisecond
)

// randomDelay is uniform in [lo, hi).
func randomDelay(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// killRepeatedly runs the job file n times, each killed with SIGKILL at a
// random moment, and checks that each run resumed every job it submitted
// from the job's newest completed checkpoint. It stops early when a run
// ends by itself (then with status 0) and reports whether one did.
func (r *jobRun) killRepeatedly(rng *rand.Rand, n int) (finished bool) {
	r.t.Helper()
	landed := 0
	for i := 1; i <= n; i++ {
		want := r.latest()
		p := r.start(nil)
		d := randomDelay(rng, minKillDelay, maxKillDelay)
		killed := p.KillAfter(d)
		out := p.Output()
		r.expectResumed(out, want)
		if !killed {
			if p.Err != nil {
				r.t.Fatalf("run %d ended by itself before the kill at %v: %v; output:\n%s", i, d, p.Err, out)
			}
			r.t.Logf("run %d: %s; finished before the kill at %v", i, restoredLines(out), d)
			return true
		}
		landed++
		r.t.Logf("run %d: %s; SIGKILL at %v", i, restoredLines(out), d)
	}
	r.t.Logf("%d kills landed while the jobs ran", landed)
	return false
}

// finish runs the job file once more to the end (exit status 0) and checks
// that it resumed from the newest completed checkpoints.
func (r *jobRun) finish(env []string, args ...string) {
	r.t.Helper()
	want := r.latest()
	start := time.Now()
	out := r.start(env, args...).mustSucceed()
	r.expectResumed(out, want)
	r.t.Logf("last run: %s; finished in %v", restoredLines(out), time.Since(start).Round(time.Millisecond))
}

// TestKillAnywhere kills a run of both jobs (a grouped aggregate into a
// debezium-json table, a pass-through into a csv table) with SIGKILL at
// random moments, restarting it each time with the same command, lets the
// last run finish and checks that both outputs are exact. The last case
// runs two subtasks per operator, so the aggregate's subtasks align the
// barriers of two source subtasks and the sinks commit in two subtasks.
func TestKillAnywhere(t *testing.T) {
	for _, c := range []struct {
		name, backend string
		extra         []string
	}{
		{"pebble", "pebble", nil},
		{"hashmap", "hashmap", nil},
		{"pebble-parallelism-2", "pebble", []string{"'parallelism.default' = '2'"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := testenv.NewRand(t, seed, seedEnv)
			r := newJobRun(t, jobSpec{rows: killRows, rate: killRate, backend: c.backend, extra: c.extra})
			if !r.killRepeatedly(rng, kills) {
				r.finish(nil)
			}
			r.checkExact()
		})
	}
}
