package crash

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The corruption runs: corrRows ids at corrRate rows per second take 2
// seconds; the first run is killed after corrKillAfter, when several
// checkpoints (every 200ms, the newest 3 retained) are complete.
const (
	corrRows      = 2_000_000
	corrRate      = 1_000_000
	corrKillAfter = time.Second
)

// killedWithRetained prepares a data dir whose agg job was killed with at
// least two completed checkpoints, and returns the two newest.
func killedWithRetained(t *testing.T, backend string) (r *jobRun, newest, older int64) {
	r = newJobRun(t, jobSpec{rows: corrRows, rate: corrRate, backend: backend, noIDs: true,
		extra: []string{"'state.checkpoints.num-retained' = '3'"}})
	r.killWithCheckpoints("agg", 2, corrKillAfter)
	ids := completedCheckpoints(t, r.dataDir, "agg")
	return r, ids[0], ids[1]
}

// chkDir is the directory of checkpoint id of job agg.
func (r *jobRun) chkDir(id int64) string {
	return filepath.Join(checkpointDir(r.dataDir, "agg"), "chk-"+itoa(id))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// stateFiles lists the regular files under the state directories
// (<operator>-<subtask>) of a checkpoint whose names satisfy match.
func stateFiles(t *testing.T, chk string, match func(name string) bool) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir(chk)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(chk, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Type().IsRegular() && match(f.Name()) {
				out = append(out, filepath.Join(chk, e.Name(), f.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// flipBit flips the lowest bit of the middle byte of a file, in place (a
// file hard-linked elsewhere changes there too, as on a real disk).
func flipBit(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() == 0 {
		t.Fatalf("%s is empty", path)
	}
	b := make([]byte, 1)
	off := st.Size() / 2
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped a bit at offset %d of %s (%d bytes)", off, path, st.Size())
}

// expectFallback runs the job after checkpoint newest was damaged. The
// run must either warn about newest, restore an older checkpoint and
// finish with the right final aggregate values, or fail with a message
// about newest that tells to start with --fresh (when the damaged file
// is shared by every retained checkpoint).
//
// The changelog itself is not checked exactly: the sink had already
// committed the rows up to newest, and falling back to an older checkpoint
// makes the job emit the changes after that one again (a reader of the
// changelog sees them twice; the last value of each key is right).
func (r *jobRun) expectFallback(newest int64) {
	r.t.Helper()
	p := r.start(nil)
	err := p.Wait()
	out := p.Output()
	warned := regexp.MustCompile(`(?i)(warning|skipping).*checkpoint ` + itoa(newest) + `\b`).MatchString(out)
	if err != nil {
		if strings.Contains(out, "--fresh") && strings.Contains(out, "checkpoint "+itoa(newest)) {
			r.t.Logf("no usable checkpoint left; the run failed clearly:\n%s", out)
			return
		}
		r.t.Fatalf("after damaging checkpoint %d: %v; want a fallback or a clear failure; output:\n%s", newest, err, out)
	}
	from := restoredFrom(out)["agg"]
	r.t.Logf("after the damage: %s", restoredLines(out))
	if from >= newest || !warned {
		r.t.Errorf("damaged checkpoint %d: want a warning about it and a restore of an older one, got a restore of %d; output:\n%s", newest, from, out)
	}
	if err := checkAggFinal(filepath.Join(r.dir, "agg"), r.spec.rows); err != nil {
		r.t.Error(err)
	}
}

// TestCorruption damages the checkpoints of a killed job in the ways a
// disk or an operator might, and checks what the next run does: it falls
// back to an older checkpoint with a warning, or, when none is usable,
// fails and says to start with --fresh.
func TestCorruption(t *testing.T) {
	t.Run("truncated-metadata", func(t *testing.T) {
		r, newest, older := killedWithRetained(t, "pebble")
		md := filepath.Join(r.chkDir(newest), "_metadata")
		st, err := os.Stat(md)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(md, st.Size()/2); err != nil {
			t.Fatal(err)
		}
		out := r.start(nil).mustSucceed()
		t.Logf("after truncating chk-%d/_metadata: %s", newest, restoredLines(out))
		if !strings.Contains(out, "skipping checkpoint "+itoa(newest)) {
			t.Errorf("no \"skipping checkpoint %d\" warning; output:\n%s", newest, out)
		}
		if got := restoredFrom(out)["agg"]; got != older {
			t.Errorf("restored from checkpoint %d, want %d (the newest undamaged one); output:\n%s", got, older, out)
		}
		// See expectFallback for why only the final values are checked.
		if err := checkAggFinal(filepath.Join(r.dir, "agg"), r.spec.rows); err != nil {
			t.Error(err)
		}
	})
	for _, c := range []struct {
		name    string
		backend string
		match   func(string) bool
	}{
		// Copied into each checkpoint: only the newest is damaged.
		{"pebble-manifest", "pebble", func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }},
		// Hard-linked: older checkpoints holding the same table are
		// damaged as well, and are skipped too.
		{"pebble-sst", "pebble", func(n string) bool { return strings.HasSuffix(n, ".sst") }},
		{"hashmap", "hashmap", func(string) bool { return true }},
	} {
		t.Run("damaged-state/"+c.name, func(t *testing.T) {
			r, newest, _ := killedWithRetained(t, c.backend)
			files := stateFiles(t, r.chkDir(newest), c.match)
			if len(files) == 0 {
				t.Fatalf("no state file to damage in %s", r.chkDir(newest))
			}
			flipBit(t, files[len(files)-1]) // of several sstables, the newest
			r.expectFallback(newest)
		})
	}
	t.Run("all-damaged", func(t *testing.T) {
		r, _, _ := killedWithRetained(t, "pebble")
		ids := completedCheckpoints(t, r.dataDir, "agg")
		for _, id := range ids {
			if err := os.WriteFile(filepath.Join(r.chkDir(id), "_metadata"), []byte("{garbage"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := runFails(t, r.dataDir, r.file, nil)
		t.Logf("with checkpoints %v all damaged:\n%s", ids, out)
		if !strings.Contains(out, "--fresh") {
			t.Errorf("the failure does not tell to start with --fresh; output:\n%s", out)
		}
		out = r.start(nil, "--fresh").mustSucceed()
		if strings.Contains(out, "restored job") {
			t.Errorf("--fresh restored a checkpoint; output:\n%s", out)
		}
	})
}
