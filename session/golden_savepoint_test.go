package session

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
)

// The golden savepoint: testdata/golden-savepoint holds a data directory
// (its catalog and in-memory tables) and a savepoint taken from a running
// job with every stateful operator kind: group aggregates with MIN, MAX,
// COUNT(DISTINCT), FILTER and BOOL_AND/BOOL_OR over append-only and over
// updating input (value sets in their own key space), the TUMBLE, HOP,
// CUMULATE and SESSION window aggregates and a group window. The savepoint
// was written by an earlier build; TestGoldenSavepoint restores it with
// this one and checks that the job ends with exactly the tables a run from
// scratch produces. It must keep passing: when a state encoding changes,
// its codec reads the old version, the savepoint stays as it is.
//
// Regenerate (only when the job itself must change) with
//
//	go test ./session -run TestGoldenSavepoint -golden-write
var goldenWrite = flag.Bool("golden-write", false, "write testdata/golden-savepoint anew from a running job")

const goldenDir = "testdata/golden-savepoint"

// goldenDDL: 6,000 rows 100 ms apart in event time (600 s), 20 keys and
// values 1..500 pseudo-random but the same on every run.
const goldenDDL = `CREATE TABLE gen (id BIGINT, k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
	'connector' = 'datagen', 'rows-per-second' = '1500', 'number-of-rows' = '6000',
	'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '6000',
	'fields.k.min' = '1', 'fields.k.max' = '20', 'fields.v.min' = '1', 'fields.v.max' = '500',
	'fields.ts.kind' = 'sequence', 'fields.ts.start' = '2026-01-01 00:00:00', 'fields.ts.step' = '100 ms');
CREATE TABLE per_k (k INT, n BIGINT, lo INT, hi INT, dv BIGINT, s BIGINT, big BIGINT, top BOOLEAN);
CREATE TABLE by_count (c BIGINT, n BIGINT, lo INT, hi INT, dk BIGINT, hi_keys BIGINT, all_low BOOLEAN);
CREATE TABLE tumble_out (ws TIMESTAMP(3), we TIMESTAMP(3), k INT, n BIGINT, hi INT);
CREATE TABLE hop_out (ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, lo INT);
CREATE TABLE cumulate_out (ws TIMESTAMP(3), we TIMESTAMP(3), dk BIGINT, n BIGINT);
CREATE TABLE session_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT);
CREATE TABLE groupwin_out (k INT, ws TIMESTAMP(3), s BIGINT, hi INT);`

// goldenTables are the sink tables, each checked after the restore.
var goldenTables = []string{"per_k", "by_count", "tumble_out", "hop_out", "cumulate_out", "session_out", "groupwin_out"}

// goldenJob is one job (a statement set) with a sink per operator kind.
const goldenJob = `EXECUTE STATEMENT SET BEGIN
INSERT INTO per_k SELECT k, COUNT(*), MIN(v), MAX(v), COUNT(DISTINCT v), SUM(v), COUNT(*) FILTER (WHERE v > 250), BOOL_OR(v > 495) FROM gen GROUP BY k;
INSERT INTO by_count SELECT c, COUNT(*), MIN(k), MAX(k), COUNT(DISTINCT k), COUNT(*) FILTER (WHERE k > 10), BOOL_AND(k < 18) FROM (SELECT k, COUNT(*) AS c FROM gen GROUP BY k) GROUP BY c;
INSERT INTO tumble_out SELECT window_start, window_end, k, COUNT(*), MAX(v)
  FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k;
INSERT INTO hop_out SELECT window_start, window_end, COUNT(*), MIN(v)
  FROM TABLE(HOP(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY window_start, window_end;
INSERT INTO cumulate_out SELECT window_start, window_end, COUNT(DISTINCT k), COUNT(*)
  FROM TABLE(CUMULATE(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND)) GROUP BY window_start, window_end;
INSERT INTO session_out SELECT k, window_start, window_end, COUNT(*), SUM(v)
  FROM TABLE(SESSION(TABLE gen PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end;
INSERT INTO groupwin_out SELECT k, TUMBLE_START(ts, INTERVAL '30' SECOND), SUM(v), MAX(v) FROM gen GROUP BY TUMBLE(ts, INTERVAL '30' SECOND), k;
END`

// goldenSettings are the session's options for both the run that wrote the
// savepoint and the restore.
var goldenSettings = []string{
	"SET 'parallelism.default' = '2'",
	"SET 'state.backend' = 'pebble'",
	"SET 'execution.checkpointing.interval' = '200ms'",
	"SET 'pipeline.name' = 'golden'",
}

func TestGoldenSavepoint(t *testing.T) {
	if *goldenWrite {
		writeGoldenSavepoint(t, goldenDir, "NATIVE")
	}
	want := goldenFromScratch(t)
	checkGoldenRestore(t, filepath.Join(goldenDir, "data"), want)
}

// The golden canonical savepoint: testdata/golden-canonical-savepoint is
// the same job stopped with a savepoint in the canonical format (STOP JOB
// ... WITH SAVEPOINT, its default) under 'pebble'. It must restore under
// both backends, into the parallelism it was taken with and into others,
// to exactly the tables a run from scratch produces.
//
// Regenerate (only when the job itself must change) with
//
//	go test ./session -run TestGoldenCanonicalSavepoint -golden-write
const goldenCanonicalDir = "testdata/golden-canonical-savepoint"

func TestGoldenCanonicalSavepoint(t *testing.T) {
	if *goldenWrite {
		writeGoldenSavepoint(t, goldenCanonicalDir, "CANONICAL")
	}
	dir := filepath.Join(goldenCanonicalDir, "data")
	md, err := checkpoint.Load(filepath.Join(dir, "savepoints", goldenSavepointName(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	if md.StateFormat() != checkpoint.FormatCanonical || md.Backend != "pebble" {
		t.Fatalf("the golden canonical savepoint says format %s, backend %q", md.StateFormat(), md.Backend)
	}
	want := goldenFromScratch(t)
	for _, c := range []struct{ backend, parallelism string }{
		{"pebble", "2"}, {"hashmap", "2"}, {"hashmap", "3"}, {"pebble", "1"},
	} {
		t.Run(c.backend+"-"+c.parallelism, func(t *testing.T) {
			checkGoldenRestore(t, dir, want,
				"SET 'state.backend' = '"+c.backend+"'", "SET 'parallelism.default' = '"+c.parallelism+"'")
		})
	}
}

// checkGoldenRestore restores the one savepoint of a copy of the golden
// job's data dir src (with the settings after goldenSettings) and checks
// that the job ends with the tables of want.
func checkGoldenRestore(t *testing.T, src string, want map[string][]string, settings ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatalf("copying the golden data dir: %v", err)
	}
	sp := filepath.Join(dir, "savepoints", goldenSavepointName(t, dir))
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, goldenSettings...)
	execAll(t, s, settings...)
	execAll(t, s, "SET 'execution.state-recovery.path' = '"+sp+"'", "SET 'table.dml-sync' = 'true'")
	rs := execAll(t, s, goldenJob)
	if !strings.Contains(rs[0].Message, "restored job golden from "+sp) {
		t.Fatalf("not restored from the golden savepoint: %q", rs[0].Message)
	}
	for _, tbl := range goldenTables {
		got := goldenRows(t, s, tbl)
		if strings.Join(got, "\n") != strings.Join(want[tbl], "\n") {
			t.Errorf("%s after restoring the golden savepoint differs from a run from scratch:\n got %d rows: %s\nwant %d rows: %s",
				tbl, len(got), head(got), len(want[tbl]), head(want[tbl]))
		}
	}
}

// goldenFromScratch runs the golden job on a fresh data dir to its end and
// returns each sink table's rows, sorted. A few totals are checked against
// what the generator's definition implies, so that the reference itself is
// known to be right.
func goldenFromScratch(t *testing.T) map[string][]string {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, goldenDDL)
	execAll(t, s, goldenSettings...)
	execAll(t, s, "SET 'table.dml-sync' = 'true'", goldenJob)
	out := map[string][]string{}
	for _, tbl := range goldenTables {
		out[tbl] = goldenRows(t, s, tbl)
	}
	checks := []struct{ q, want string }{
		{"SELECT COUNT(*), SUM(n) FROM per_k", "20 6000"},
		{"SELECT SUM(n) FROM by_count", "20"},
		{"SELECT COUNT(*), SUM(n) FROM (SELECT ws, SUM(n) AS n FROM tumble_out GROUP BY ws)", "60 6000"},
		{"SELECT SUM(n) FROM session_out", "6000"},
	}
	for _, c := range checks {
		if got := fmt.Sprint(execAll(t, s, c.q)[0].Rows[0]...); got != c.want {
			t.Fatalf("%s = %s, want %s", c.q, got, c.want)
		}
	}
	if a, b := fmt.Sprint(execAll(t, s, "SELECT SUM(s) FROM per_k")[0].Rows[0]...), fmt.Sprint(execAll(t, s, "SELECT SUM(s) FROM groupwin_out")[0].Rows[0]...); a != b {
		t.Fatalf("SUM(v) by key (%s) and by key and 30 s window (%s) differ", a, b)
	}
	return out
}

// goldenRows returns the rows of table tbl, each printed, sorted.
func goldenRows(t *testing.T, s *Session, tbl string) []string {
	t.Helper()
	var out []string
	for _, r := range execAll(t, s, "SELECT * FROM "+tbl)[0].Rows {
		out = append(out, strings.TrimSuffix(fmt.Sprintln(r...), "\n"))
	}
	sort.Strings(out)
	return out
}

func head(rows []string) string {
	if len(rows) > 5 {
		rows = rows[:5]
	}
	return strings.Join(rows, " | ")
}

// goldenSavepointName is the one savepoint under dir/savepoints.
func goldenSavepointName(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "savepoints"))
	if err != nil || len(es) != 1 {
		t.Fatalf("the golden data dir must hold one savepoint: %v %v", es, err)
	}
	return es[0].Name()
}

// writeGoldenSavepoint runs the golden job on a fresh data dir, stops it
// with a savepoint in format once two checkpoints completed and some
// windows fired (so that state and sink tables are both non-empty), and
// replaces golden with that data dir, without its lock, job folders and
// checkpoints.
func writeGoldenSavepoint(t *testing.T, golden, format string) {
	dir := filepath.Join(t.TempDir(), "data")
	msg := runGoldenToSavepoint(t, dir, func(s *Session, id string) string {
		return execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT FORMAT "+format)[0].Message
	})
	dst := filepath.Join(golden, "data")
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "LOCK" || rel == "jobs" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s from %s (%s)", dst, dir, msg)
}

// runGoldenToSavepoint runs the golden job on a fresh data dir (with the
// settings after goldenSettings) until two checkpoints completed and some
// windows fired, then calls stop, which stops it with a savepoint under
// dir/savepoints, and closes the session. It returns what stop returned.
func runGoldenToSavepoint(t *testing.T, dir string, stop func(s *Session, id string) string, settings ...string) string {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, s, goldenDDL)
	execAll(t, s, goldenSettings...)
	execAll(t, s, settings...)
	execAll(t, s, "SET 'state.savepoints.dir' = '"+filepath.Join(dir, "savepoints")+"'")
	id := execAll(t, s, goldenJob)[0].JobID
	deadline := time.Now().Add(time.Minute)
	for {
		j := s.Jobs()[0]
		if j.Status != "RUNNING" || time.Now().After(deadline) {
			t.Fatalf("the golden job ended or took too long before its savepoint: %+v", j)
		}
		if j.Checkpoints.LastID >= 2 && len(execAll(t, s, "SELECT * FROM tumble_out")[0].Rows) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	msg := stop(s, id)
	if !strings.Contains(msg, "savepoint ") {
		t.Fatalf("no savepoint: %q", msg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return msg
}
