package crash

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// The window jobs' input: two CSV tables of rows (id, k, ts); clicks is
// split over winFiles files by id (one per source subtask), clicks_late is
// one file read by the late job at parallelism 1.
//
//   - clicks: the ids 1..winRows, event time advancing evenly over winSpan,
//     each row up to winJitter earlier than its place (out of order, but by
//     less than the watermark delay winDelay, so no row is late). Each key
//     is silent for one second in every winSilence seconds (its rows there
//     are left out), so that its sessions close: the rows of a key on
//     either side of a silence are more than winGap apart, those within an
//     active stretch a few milliseconds.
//   - clicks_late: the ids 1..winLateRows the same way, except that every
//     winLateEvery-th row is winLateMin to winLateMax behind its place:
//     late when the watermark has passed its window by the time it comes
//     (with one reader, the same rows at every run).
const (
	winRows      = 2_400_000
	winLateRows  = 600_000
	winKeys      = 16
	winSpan      = 60 * time.Second
	winJitter    = 400 * time.Millisecond
	winDelay     = 1 * time.Second
	winSilence   = 6 // seconds
	winGap       = 250 * time.Millisecond
	winLateEvery = 40
	winLateMin   = 1 * time.Second
	winLateMax   = 3 * time.Second
	winFiles     = 2
)

// winBase is the event time of the first row.
var winBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// splitmix is splitmix64: a well-spread hash of i.
func splitmix(i uint64) uint64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9
	i = (i ^ (i >> 27)) * 0x94d049bb133111eb
	return i ^ (i >> 31)
}

// winRow is row id of a table of n rows: its key and event time
// (milliseconds since the epoch), and whether the row is in the table
// (false: its key is silent then). With late, some rows are far behind.
func winRow(id, n int64, late bool) (k, ts int64, ok bool) {
	k = int64(splitmix(uint64(id)) % winKeys)
	place := id * winSpan.Milliseconds() / n
	behind := int64(splitmix(uint64(id)<<1) % uint64(winJitter.Milliseconds()))
	if late && id%winLateEvery == 0 {
		lo, hi := winLateMin.Milliseconds(), winLateMax.Milliseconds()
		behind = lo + int64(splitmix(uint64(id)<<2)%uint64(hi-lo))
	}
	if !late && (place/1000+k)%winSilence == 0 {
		return k, 0, false
	}
	return k, winBase + max(place-behind, 0), true
}

// fmtTS formats milliseconds since the epoch as the engine prints a
// TIMESTAMP(3).
func fmtTS(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }

// writeWindowInput writes the n rows of a table into files CSV files
// under dir (row id into file id % files).
func writeWindowInput(t *testing.T, dir string, n int64, late bool, files int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := make([]*bufio.Writer, files)
	fs := make([]*os.File, files)
	for i := range fs {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%d.csv", i)))
		if err != nil {
			t.Fatal(err)
		}
		fs[i], ws[i] = f, bufio.NewWriterSize(f, 1<<20)
	}
	var line []byte
	for id := int64(1); id <= n; id++ {
		k, ts, ok := winRow(id, n, late)
		if !ok {
			continue
		}
		line = strconv.AppendInt(line[:0], id, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, k, 10)
		line = append(line, ',')
		line = time.UnixMilli(ts).UTC().AppendFormat(line, "2006-01-02 15:04:05.000")
		line = append(line, '\n')
		ws[id%int64(files)].Write(line)
	}
	for i := range fs {
		if err := ws[i].Flush(); err != nil {
			t.Fatal(err)
		}
		if err := fs[i].Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// window is one window of one key: [start, end) in milliseconds since the
// epoch.
type window struct{ start, end, k int64 }

// winAgg is a window's result: COUNT(*) and SUM(id) or MAX(id).
type winAgg struct{ cnt, agg int64 }

// floorDiv is a / b rounded down.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// windowsOf lists the windows of the kinds that assign a row by its time
// alone, as Flink defines them.
type windowsOf func(ts int64, dst []window) []window

func tumbleOf(size time.Duration) windowsOf {
	s := size.Milliseconds()
	return func(ts int64, dst []window) []window {
		st := floorDiv(ts, s) * s
		return append(dst, window{st, st + s, 0})
	}
}

func hopOf(slide, size time.Duration) windowsOf {
	sl, sz := slide.Milliseconds(), size.Milliseconds()
	return func(ts int64, dst []window) []window {
		for st := floorDiv(ts, sl) * sl; st > ts-sz; st -= sl {
			dst = append(dst, window{st, st + sz, 0})
		}
		return dst
	}
}

func cumulateOf(step, size time.Duration) windowsOf {
	sp, sz := step.Milliseconds(), size.Milliseconds()
	return func(ts int64, dst []window) []window {
		st := floorDiv(ts, sz) * sz
		for e := st + sp; e <= st+sz; e += sp {
			if ts < e {
				dst = append(dst, window{st, e, 0})
			}
		}
		return dst
	}
}

// expectWindows computes each (window, key)'s COUNT(*) and SUM(id) (or
// MAX(id) with useMax) over the n rows of a table.
func expectWindows(n int64, late bool, of windowsOf, useMax bool) map[window]winAgg {
	want := map[window]winAgg{}
	var ws []window
	for id := int64(1); id <= n; id++ {
		k, ts, ok := winRow(id, n, late)
		if !ok {
			continue
		}
		ws = of(ts, ws[:0])
		for _, w := range ws {
			w.k = k
			a := want[w]
			a.cnt++
			if useMax {
				a.agg = max(a.agg, id)
			} else {
				a.agg += id
			}
			want[w] = a
		}
	}
	return want
}

// expectSessions computes the SESSION windows of each key with gap gap
// and their COUNT(*) and SUM(id): a key's rows sorted by time, a new
// session starting where a row is more than gap after the previous one
// (the engine's and Flink's rule: [t1, t1+gap) and [t2, t2+gap) merge when
// they overlap or touch). A session is [first row, last row + gap).
func expectSessions(n int64, gap time.Duration) map[window]winAgg {
	type tr struct{ ts, id int64 }
	byKey := make([][]tr, winKeys)
	for id := int64(1); id <= n; id++ {
		k, ts, ok := winRow(id, n, false)
		if ok {
			byKey[k] = append(byKey[k], tr{ts, id})
		}
	}
	g := gap.Milliseconds()
	want := map[window]winAgg{}
	for k, rs := range byKey {
		sort.Slice(rs, func(i, j int) bool { return rs[i].ts < rs[j].ts })
		for i := 0; i < len(rs); {
			a := winAgg{}
			j := i
			for ; j < len(rs) && (j == i || rs[j].ts <= rs[j-1].ts+g); j++ {
				a.cnt++
				a.agg += rs[j].id
			}
			want[window{rs[i].ts, rs[j-1].ts + g, int64(k)}] = a
			i = j
		}
	}
	return want
}

// readWindowRows reads the committed CSV part files of a window sink,
// rows (window_start, window_end, k, cnt, agg), as a multiset of windows
// with their results.
func readWindowRows(dir string) (map[window][]winAgg, int, error) {
	parts, err := committedParts(dir, ".csv")
	if err != nil {
		return nil, 0, err
	}
	got := map[window][]winAgg{}
	n := 0
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(dir, p.name))
		if err != nil {
			return nil, 0, err
		}
		for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			f := strings.Split(string(l), ",")
			var v [3]int64
			var err1, err2 error
			var ws, we time.Time
			if len(f) == 5 {
				ws, err1 = time.Parse("2006-01-02 15:04:05", f[0])
				we, err2 = time.Parse("2006-01-02 15:04:05", f[1])
				for j := range v {
					if v[j], err = strconv.ParseInt(f[2+j], 10, 64); err != nil {
						break
					}
				}
			}
			if len(f) != 5 || err1 != nil || err2 != nil || err != nil {
				return nil, 0, fmt.Errorf("%s:%d: not a row (window_start, window_end, k, cnt, agg): %q", p.name, i+1, l)
			}
			w := window{ws.UnixMilli(), we.UnixMilli(), v[0]}
			got[w] = append(got[w], winAgg{v[1], v[2]})
			n++
		}
	}
	return got, n, nil
}

// checkWindows compares the committed rows of a window sink with want:
// exactly one row per (window, key) of want, with its result, and no
// other row.
func checkWindows(t *testing.T, name, dir string, want map[window]winAgg) {
	t.Helper()
	got, n, err := readWindowRows(dir)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	var problems []string
	show := func(w window) string { return fmt.Sprintf("[%s, %s) k=%d", fmtTS(w.start), fmtTS(w.end), w.k) }
	for w, a := range want {
		switch gs := got[w]; {
		case len(gs) == 0:
			problems = append(problems, fmt.Sprintf("%s: no row, want cnt=%d agg=%d", show(w), a.cnt, a.agg))
		case len(gs) > 1:
			problems = append(problems, fmt.Sprintf("%s: %d rows %v, want one with cnt=%d agg=%d", show(w), len(gs), gs, a.cnt, a.agg))
		case gs[0] != a:
			problems = append(problems, fmt.Sprintf("%s: cnt=%d agg=%d, want cnt=%d agg=%d", show(w), gs[0].cnt, gs[0].agg, a.cnt, a.agg))
		}
	}
	for w, gs := range got {
		if _, ok := want[w]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %d rows %v of a window that has no rows", show(w), len(gs), gs))
		}
	}
	if total := len(problems); total > 0 {
		t.Errorf("%s: %d of %d (window, key) results wrong (%d rows committed):\n  %s", name, total, len(want), n, testenv.Problems(problems, 15))
		return
	}
	t.Logf("%s: exactly one committed row for each of the %d (window, key) pairs, with its true aggregate", name, len(want))
}

// checkLateRouting checks the late job: every row of clicks_late is in
// exactly one place, counted in its window's row or written once to
// late_out. It reads late_out's rows (id, k, ts), which must be rows of
// clicks_late, each once, takes them out of the true counts and checks the
// window rows against what is left.
func checkLateRouting(t *testing.T, lateDir, winDir string) {
	t.Helper()
	want := expectWindows(winLateRows, true, tumbleOf(time.Second), false)
	parts, err := committedParts(lateDir, ".csv")
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]uint8, winLateRows+1)
	routed, bad := 0, []string{}
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(lateDir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			f := strings.Split(string(l), ",")
			if len(f) != 3 {
				t.Fatalf("late_out %s:%d: not a row (id, k, ts): %q", p.name, i+1, l)
			}
			id, err1 := strconv.ParseInt(f[0], 10, 64)
			k, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 != nil || err2 != nil || id < 1 || id > winLateRows {
				t.Fatalf("late_out %s:%d: not a row of clicks_late: %q", p.name, i+1, l)
			}
			wk, wts, _ := winRow(id, winLateRows, true)
			if k != wk || f[2] != fmtTS(wts) {
				t.Fatalf("late_out %s:%d: %q, but row %d of clicks_late is (%d, %d, %s)", p.name, i+1, l, id, id, wk, fmtTS(wts))
			}
			if seen[id]++; seen[id] == 2 {
				bad = append(bad, fmt.Sprintf("row %d written to late_out twice", id))
			}
			routed++
			w := tumbleOf(time.Second)(wts, nil)[0]
			w.k = wk
			a := want[w]
			a.cnt--
			a.agg -= id
			if a.cnt == 0 {
				delete(want, w)
			} else {
				want[w] = a
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("late_out: %d rows more than once: %v", len(bad), bad[:min(len(bad), 10)])
	}
	if routed == 0 {
		t.Errorf("late_out: no row of clicks_late was routed as late; the input has %d rows up to %v behind", winLateRows/winLateEvery, winLateMax)
	}
	t.Logf("late_out: %d rows of clicks_late routed as late, each once", routed)
	checkWindows(t, "late_win_out (counts of the rows not in late_out)", winDir, want)
}

// windowJobSQL is the job file: one job per window kind over clicks, and
// a TUMBLE over clicks_late routing its late rows to late_out, every sink
// a CSV filesystem table under dir.
func windowJobSQL(dir string) string {
	var b strings.Builder
	for _, in := range []string{"clicks", "clicks_late"} {
		fmt.Fprintf(&b, `CREATE TABLE %s (id BIGINT, k BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
`, in, int(winDelay.Seconds()), filepath.Join(dir, in))
	}
	for _, out := range []string{"hop_out", "cumulate_out", "session_out", "tumble_out", "late_win_out"} {
		fmt.Fprintf(&b, "CREATE TABLE %s (window_start TIMESTAMP(3), window_end TIMESTAMP(3), k BIGINT, cnt BIGINT, agg BIGINT)\n  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n",
			out, filepath.Join(dir, out))
	}
	fmt.Fprintf(&b, "CREATE TABLE late_out (id BIGINT, k BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n",
		filepath.Join(dir, "late_out"))
	fmt.Fprintf(&b, `SET 'execution.checkpointing.interval' = '200ms';
SET 'state.backend' = 'pebble';
SET 'parallelism.default' = '%d';

SET 'pipeline.name' = 'hop';
INSERT INTO hop_out SELECT window_start, window_end, k, COUNT(*), SUM(id)
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND))
GROUP BY window_start, window_end, k;

SET 'pipeline.name' = 'cumulate';
INSERT INTO cumulate_out SELECT window_start, window_end, k, COUNT(*), MAX(id)
FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4' SECOND))
GROUP BY window_start, window_end, k;

SET 'pipeline.name' = 'session';
INSERT INTO session_out SELECT window_start, window_end, k, COUNT(*), SUM(id)
FROM TABLE(SESSION(TABLE clicks PARTITION BY k, DESCRIPTOR(ts), INTERVAL '%d' MILLISECOND))
GROUP BY window_start, window_end, k;

SET 'pipeline.name' = 'group-tumble';
INSERT INTO tumble_out SELECT TUMBLE_START(ts, INTERVAL '2' SECOND), TUMBLE_END(ts, INTERVAL '2' SECOND), k, COUNT(*), SUM(id)
FROM clicks
GROUP BY TUMBLE(ts, INTERVAL '2' SECOND), k;

SET 'table.exec.late-records.table' = 'late_out';
SET 'parallelism.default' = '1';
SET 'pipeline.name' = 'late';
INSERT INTO late_win_out SELECT window_start, window_end, k, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE clicks_late, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end, k;
`, winFiles, winGap.Milliseconds())
	return b.String()
}

// windowJobs are the jobs of windowJobSQL, in file order.
var windowJobs = []string{"hop", "cumulate", "session", "group-tumble", "late"}

// TestWindowKill runs a window aggregation of every kind (HOP, CUMULATE,
// SESSION, the GROUP BY TUMBLE(...) form, and a TUMBLE routing late rows
// to a table), two subtasks each, through the failpoints of the checkpoint
// protocol and SIGKILLs at random moments, each run restoring every job
// from its newest checkpoint, in the middle of open windows. Then it
// checks the committed rows: exactly one per (window, key) with the count
// and sum (or max) the test computed from the same input, and every late
// row either counted or written to the late table, once.
func TestWindowKill(t *testing.T) {
	rng := testenv.NewRand(t, seed, seedEnv)
	dir := t.TempDir()
	start := time.Now()
	writeWindowInput(t, filepath.Join(dir, "clicks"), winRows, false, winFiles)
	// One file read by one subtask: which rows are late then depends on
	// the order of that file only. Two sources that run at their own
	// pace hold the window's watermark at the slower one, and a row 3 s
	// behind its own file's time may be ahead of it: none late, at times.
	writeWindowInput(t, filepath.Join(dir, "clicks_late"), winLateRows, true, 1)
	t.Logf("wrote the input in %v", time.Since(start).Round(time.Millisecond))
	r := &jobRun{t: t, dir: dir, dataDir: filepath.Join(dir, "data"), jobs: windowJobs}
	r.file = writeFile(t, dir, "job.sql", windowJobSQL(dir))

	r.expectFailpointKill(fmt.Sprintf("after-sink-precommit@%d", 3+rng.IntN(8)))
	r.expectFailpointKill(fmt.Sprintf("after-metadata-before-commit@%d", 3+rng.IntN(8)))
	r.expectFailpointKill(fmt.Sprintf("between-sink-commits@%d", 3+rng.IntN(8)))
	if !r.killRepeatedly(rng, kills) {
		r.finish(nil)
	}

	start = time.Now()
	checkWindows(t, "hop_out", filepath.Join(dir, "hop_out"), expectWindows(winRows, false, hopOf(time.Second, 3*time.Second), false))
	checkWindows(t, "cumulate_out", filepath.Join(dir, "cumulate_out"), expectWindows(winRows, false, cumulateOf(time.Second, 4*time.Second), true))
	checkWindows(t, "session_out", filepath.Join(dir, "session_out"), expectSessions(winRows, winGap))
	checkWindows(t, "tumble_out", filepath.Join(dir, "tumble_out"), expectWindows(winRows, false, tumbleOf(2*time.Second), false))
	checkLateRouting(t, filepath.Join(dir, "late_out"), filepath.Join(dir, "late_win_out"))
	t.Logf("checked in %v", time.Since(start).Round(time.Millisecond))
}
