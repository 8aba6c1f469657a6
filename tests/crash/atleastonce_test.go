package crash

import (
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/internal/testenv"
)

// TestAtLeastOnce kills a pass-through job checkpointing in AT_LEAST_ONCE
// mode at random moments and checks that every id reached the csv sink at
// least once (duplicates are allowed in this mode).
func TestAtLeastOnce(t *testing.T) {
	rng := testenv.NewRand(t, seed, seedEnv)
	r := newJobRun(t, jobSpec{rows: killRows, rate: killRate, noAgg: true,
		extra: []string{"'execution.checkpointing.mode' = 'AT_LEAST_ONCE'"}})
	if !r.killRepeatedly(rng, kills) {
		r.finish(nil)
	}
	counts, err := countIDs(filepath.Join(r.dir, "ids"), r.spec.rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := idProblems(counts, true); err != nil {
		t.Error(err)
	}
	dups := 0
	for _, c := range counts[1:] {
		if c > 1 {
			dups++
		}
	}
	t.Logf("%d of %d ids were written more than once", dups, r.spec.rows)
}
