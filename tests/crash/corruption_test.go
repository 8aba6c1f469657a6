package crash

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The corruption runs: corrRows ids at corrRate rows per second take 2
// seconds; the first run is killed once two checkpoints (every 200ms, the
// newest 3 retained) are complete.
const (
	corrRows = 2_000_000
	corrRate = 1_000_000
)

// killedWithRetained prepares a data dir whose agg job was killed with at
// least two completed checkpoints, and returns the two newest.
func killedWithRetained(t *testing.T, backend string) (r *jobRun, newest, older int64) {
	r = newJobRun(t, jobSpec{rows: corrRows, rate: corrRate, backend: backend, noIDs: true,
		extra: []string{"'state.checkpoints.num-retained' = '3'"}})
	r.killWithCheckpoints(2, "agg")
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

// flipBit flips the lowest bit of the byte at offset off of a file (off
// < 0: counted from the end, -1 being the last byte), in place: a file
// hard-linked elsewhere changes there too, as on a real disk.
func flipBit(t *testing.T, path string, off int64) {
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
	if off < 0 {
		off += st.Size()
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped a bit at offset %d of %s (%d bytes)", off, path, st.Size())
}

// sharing returns the completed checkpoints of job agg that hold the file
// path (the same file, by hard link, under the same name), newest first.
func (r *jobRun) sharing(path string) []int64 {
	r.t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []int64
	for _, id := range completedCheckpoints(r.t, r.dataDir, "agg") {
		for _, f := range stateFiles(r.t, r.chkDir(id), func(n string) bool { return n == filepath.Base(path) }) {
			if o, err := os.Stat(f); err == nil && os.SameFile(fi, o) {
				out = append(out, id)
			}
		}
	}
	return out
}

// warningAbout returns the line of out that warns that checkpoint id
// cannot be restored, or "".
func warningAbout(out string, id int64) string {
	re := regexp.MustCompile(`(?i)(warning|skipping).*checkpoint ` + itoa(id) + `\b`)
	for _, l := range strings.Split(out, "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	return ""
}

// expectFallback runs the job after the file damaged of checkpoint newest
// was damaged. Every checkpoint holding that file (a hard link shares it
// with older checkpoints) must be reported with a warning that names the
// file, and must not be restored. The run must then either restore an
// older checkpoint and finish with the right final aggregate values, or,
// when no checkpoint is left, fail with a message naming the file that
// tells to start with --fresh.
//
// The changelog itself is not checked exactly: the sink had already
// committed the rows up to newest, and falling back to an older checkpoint
// makes the job emit the changes after that one again (a reader of the
// changelog sees them twice; the last value of each key is right).
func (r *jobRun) expectFallback(newest int64, damaged string) {
	r.t.Helper()
	name := filepath.Base(damaged)
	bad := r.sharing(damaged)
	r.t.Logf("checkpoints holding %s: %v (of %v)", name, bad, completedCheckpoints(r.t, r.dataDir, "agg"))
	p := r.start(nil)
	err := p.Wait()
	out := p.Output()
	for _, id := range bad {
		if w := warningAbout(out, id); !strings.Contains(w, name) {
			r.t.Errorf("checkpoint %d holds the damaged %s: want a warning about it naming the file, got %q; output:\n%s", id, name, w, out)
		}
	}
	if err != nil {
		if strings.Contains(out, "--fresh") && strings.Contains(out, "checkpoint "+itoa(newest)) && strings.Contains(out, name) {
			r.t.Logf("no usable checkpoint left; the run failed clearly:\n%s", out)
			return
		}
		r.t.Fatalf("after damaging %s of checkpoint %d: %v; want a fallback or a clear failure naming the file; output:\n%s", name, newest, err, out)
	}
	from := restoredFrom(out)["agg"]
	r.t.Logf("after the damage: %s", restoredLines(out))
	for _, id := range bad {
		if from == id {
			r.t.Errorf("restored checkpoint %d, which holds the damaged %s; output:\n%s", from, name, out)
		}
	}
	if from == 0 || from >= newest {
		r.t.Errorf("damaged checkpoint %d: want a restore of an older one, got a restore of %d; output:\n%s", newest, from, out)
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
		// off is where in the file the bit flips (< 0: from the end).
		off func(size int64) int64
	}{
		// Copied into each checkpoint: only the newest is damaged. The
		// last byte is in the MANIFEST's last record, the newest version
		// edit (the flush of the checkpoint); Pebble takes a bad record
		// for the torn end of the log and opens the older version before
		// it without an error, so only the checkpoint's own checksums
		// find this.
		{"pebble-manifest", "pebble", func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }, func(int64) int64 { return -1 }},
		// Hard-linked: older checkpoints holding the same table are
		// damaged as well, and are skipped too (the test damages the table
		// the most checkpoints share).
		{"pebble-sst", "pebble", func(n string) bool { return strings.HasSuffix(n, ".sst") }, func(n int64) int64 { return n / 2 }},
		{"hashmap", "hashmap", func(string) bool { return true }, func(n int64) int64 { return n / 2 }},
	} {
		t.Run("damaged-state/"+c.name, func(t *testing.T) {
			r, newest, _ := killedWithRetained(t, c.backend)
			files := stateFiles(t, r.chkDir(newest), c.match)
			if len(files) == 0 {
				t.Fatalf("no state file to damage in %s", r.chkDir(newest))
			}
			f := files[len(files)-1] // of several sstables, the newest...
			for _, g := range files {
				if len(r.sharing(g)) > len(r.sharing(f)) {
					f = g // ...unless an older one is in more checkpoints
				}
			}
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			flipBit(t, f, c.off(st.Size()))
			r.expectFallback(newest, f)
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
