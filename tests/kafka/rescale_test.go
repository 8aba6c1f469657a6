package kafka

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// rescaleRows is the size of the rescale test's input: clicks as in
// TestWindowCrash (out of order by less than the watermark delay), over
// the same winSpan.
const rescaleRows = 1_500_000

// The HOP windows of the rescale test: 2 seconds long, every second.
const (
	hopSlide = time.Second
	hopSize  = 2 * time.Second
)

// rescalePhases are the parallelisms the rescale test runs the job at, in
// order, each killed until it completed a checkpoint and the committed
// share of the input reaches until; then the job is stopped with a
// savepoint and runs to the end at parallelism 1.
var rescalePhases = []struct {
	par   int
	until float64
}{{2, 0.15}, {3, 0.4}}

// The SESSION windows of the rescale test: by user_id % sessionUsers,
// with the gap sessionGap. Each of these keys has a click every 6ms on
// average, so its sessions end at the rare gaps longer than sessionGap:
// a few dozen per key over the minute of clicks.
const (
	sessionUsers = 150
	sessionGap   = 30 * time.Millisecond
)

// rescaleJobSQL is the rescale test's job at parallelism par, a statement
// set of two window aggregations of the clicks topic into exactly-once
// kafka json tables: HOP windows, COUNT(*) and SUM(click_id) by app_id,
// into hop_out; SESSION windows by user_id % sessionUsers, COUNT(*) and
// SUM(click_id), into session_out.
func rescaleJobSQL(b *broker, name string, par int) string {
	var s strings.Builder
	s.WriteString(sourceDDL(b, "clicks", name))
	for _, out := range []struct{ table, key string }{{"hop_out", "app_id STRING"}, {"session_out", "u BIGINT"}} {
		fmt.Fprintf(&s, `CREATE TABLE %s (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  %s,
  cnt          BIGINT,
  total        BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '%s',
  'properties.bootstrap.servers' = '%s',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '%s-%s-tx',
  'properties.transaction.timeout.ms' = '900000',
  'format' = 'json'
);
`, out.table, out.key, out.table, b.addr, name, out.table)
	}
	fmt.Fprintf(&s, "CREATE VIEW users AS SELECT click_id, user_id %% %d AS u, ts FROM clicks;\n", sessionUsers)
	s.WriteString("SET 'execution.checkpointing.interval' = '200ms';\n")
	s.WriteString("SET 'state.backend' = 'pebble';\n")
	fmt.Fprintf(&s, "SET 'pipeline.name' = '%s';\n", name)
	fmt.Fprintf(&s, "SET 'parallelism.default' = '%d';\n", par)
	fmt.Fprintf(&s, `EXECUTE STATEMENT SET BEGIN
INSERT INTO hop_out
SELECT window_start, window_end, app_id, COUNT(*), SUM(click_id)
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '%d' SECOND, INTERVAL '%d' SECOND))
GROUP BY window_start, window_end, app_id;
INSERT INTO session_out
SELECT window_start, window_end, u, COUNT(*), SUM(click_id)
FROM TABLE(SESSION(TABLE users PARTITION BY u, DESCRIPTOR(ts), INTERVAL '%d' MILLISECOND))
GROUP BY window_start, window_end, u;
END;
`, int(hopSlide.Seconds()), int(hopSize.Seconds()), sessionGap.Milliseconds())
	return s.String()
}

// hopKey is one window of one key, in milliseconds since the epoch; key
// is the key as JSON text ("app-1" with its quotes, or a number).
type hopKey struct {
	start, end int64
	key        string
}

// hopAgg is a window's COUNT(*) and SUM(click_id).
type hopAgg struct{ cnt, total int64 }

// expectHop computes the result of every (HOP window, app) over the n
// clicks of writeWindowClicks: a click at time ts is in the windows
// [s, s+size) with s a multiple of the slide and s <= ts < s+size.
func expectHop(n int) map[hopKey]hopAgg {
	want := map[hopKey]hopAgg{}
	base := baseTime.UnixMilli()
	sl, sz := hopSlide.Milliseconds(), hopSize.Milliseconds()
	for id := 1; id <= n; id++ {
		app := strconv.Quote(appName(appOf(id, winApps)))
		ms := winTime(id, n) // >= 0
		for st := ms - ms%sl; st > ms-sz; st -= sl {
			k := hopKey{base + st, base + st + sz, app}
			a := want[k]
			a.cnt++
			a.total += int64(id)
			want[k] = a
		}
	}
	return want
}

// expectSessions computes the result of every (SESSION window, u) over
// the n clicks of writeWindowClicks: the clicks of each u sorted by time,
// a session ending where the next click is more than sessionGap later
// (the engine's and Flink's rule: [t1, t1+gap) and [t2, t2+gap) merge when
// they overlap or touch); a session is [first click, last click + gap).
func expectSessions(n int) map[hopKey]hopAgg {
	type click struct{ ms, id int64 }
	byUser := make([][]click, sessionUsers)
	for id := 1; id <= n; id++ {
		u := clickUser(id) % sessionUsers
		byUser[u] = append(byUser[u], click{winTime(id, n), int64(id)})
	}
	base, g := baseTime.UnixMilli(), sessionGap.Milliseconds()
	want := map[hopKey]hopAgg{}
	for u, cs := range byUser {
		sort.Slice(cs, func(i, j int) bool { return cs[i].ms < cs[j].ms })
		for i := 0; i < len(cs); {
			var a hopAgg
			j := i
			for ; j < len(cs) && (j == i || cs[j].ms <= cs[j-1].ms+g); j++ {
				a.cnt++
				a.total += cs[j].id
			}
			want[hopKey{base + cs[i].ms, base + cs[j-1].ms + g, strconv.Itoa(u)}] = a
			i = j
		}
	}
	return want
}

// checkWindowRows reads the committed rows of topic, (window_start,
// window_end, keyCol, cnt, total), and compares them with want: exactly
// one row per (window, key), with its count and sum, and no other.
func checkWindowRows(t *testing.T, b *broker, topic, keyCol string, want map[hopKey]hopAgg) {
	t.Helper()
	type row struct {
		WindowStart string `json:"window_start"`
		WindowEnd   string `json:"window_end"`
		Cnt         int64  `json:"cnt"`
		Total       int64  `json:"total"`
	}
	const layout = "2006-01-02 15:04:05" // parsing accepts a fraction
	got := map[hopKey][]hopAgg{}
	n := consumeCommitted(t, b, topic, func(r record) error {
		var w row
		var key map[string]json.RawMessage
		if err := json.Unmarshal(r.value, &w); err != nil {
			return fmt.Errorf("value is not a window row: %v", err)
		}
		if err := json.Unmarshal(r.value, &key); err != nil || key[keyCol] == nil {
			return fmt.Errorf("value has no %s", keyCol)
		}
		ws, err1 := time.Parse(layout, w.WindowStart)
		we, err2 := time.Parse(layout, w.WindowEnd)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bad window_start or window_end: %v %v", err1, err2)
		}
		k := hopKey{ws.UnixMilli(), we.UnixMilli(), string(key[keyCol])}
		got[k] = append(got[k], hopAgg{w.Cnt, w.Total})
		return nil
	})
	show := func(k hopKey) string {
		return fmt.Sprintf("[%s, %s) %s=%s", time.UnixMilli(k.start).UTC().Format(layout), time.UnixMilli(k.end).UTC().Format(layout), keyCol, k.key)
	}
	var problems []string
	for k, a := range want {
		switch gs := got[k]; {
		case len(gs) == 0:
			problems = append(problems, fmt.Sprintf("%s: no committed row, want %+v", show(k), a))
		case len(gs) > 1:
			problems = append(problems, fmt.Sprintf("%s: %d committed rows %+v, want one %+v", show(k), len(gs), gs, a))
		case gs[0] != a:
			problems = append(problems, fmt.Sprintf("%s: committed %+v, want %+v", show(k), gs[0], a))
		}
	}
	for k, gs := range got {
		if _, ok := want[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %d committed rows %+v of a window that has no clicks", show(k), len(gs), gs))
		}
	}
	if total := len(problems); total > 0 {
		t.Errorf("%s: %d of %d (window, key) results wrong (%d committed records read):\n  %s",
			topic, total, len(want), n, testenv.Problems(problems, 20))
		return
	}
	t.Logf("%s: exactly one committed row for each of the %d (window, %s) pairs, with its true count and sum", topic, len(want), keyCol)
}

// waitFirstCheckpoint waits until the run has completed its first
// checkpoint or has exited.
func (p *proc) waitFirstCheckpoint() {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for p.firstCheckpoint.Load() == 0 {
		select {
		case <-p.Done():
			return
		case <-tick.C:
		}
	}
}

var savepointRE = regexp.MustCompile(`\[INFO\] Savepoint written: (\S+)`)

// stopWithSavepoint runs the job file with --savepoint-on-stop, stops it
// with SIGTERM once it has completed a checkpoint, and returns the path of
// the savepoint it wrote.
func (r *jobRun) stopWithSavepoint() string {
	r.t.Helper()
	want := r.latest()
	p := r.start(nil, "--savepoint-on-stop")
	p.waitFirstCheckpoint()
	if p.firstCheckpoint.Load() == 0 {
		r.t.Fatalf("run %d ended (%v) before its first checkpoint, before it could be stopped; output:\n%s", r.runs, p.Err, p.Output())
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		r.t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		r.t.Fatalf("run %d, stopped with SIGTERM and --savepoint-on-stop: %v; output:\n%s", r.runs, err, p.Output())
	}
	out := p.Output()
	r.expectResumed(out, want)
	m := savepointRE.FindStringSubmatch(out)
	if m == nil {
		r.t.Fatalf("run %d: no \"[INFO] Savepoint written: <path>\" after SIGTERM with --savepoint-on-stop; output:\n%s", r.runs, out)
	}
	r.t.Logf("run %d: %s; SIGTERM at %v (%s): savepoint %s, %.0f%% of the input committed",
		r.runs, restoredLine(out), time.Duration(p.firstCheckpoint.Load()).Round(time.Millisecond), r.ended(p), m[1], 100*r.progress())
	return m[1]
}

// killAfterCheckpoint runs the job file and kills it at a random moment
// less than one checkpoint interval after the run completed its first
// checkpoint, so that each run moves the job on by about one checkpoint.
// It reports whether the run ended by itself first (then with status 0).
func (r *jobRun) killAfterCheckpoint(rng *rand.Rand) (finished bool) {
	r.t.Helper()
	want := r.latest()
	before := r.progress()
	p := r.start(nil)
	p.waitFirstCheckpoint()
	// The phases go by the group offsets the source commits when a
	// checkpoint completes, which land a while after it (later on Apache
	// Kafka and on a busy machine): kill once they moved (or the run
	// ended), else the progress would lag the checkpoints.
	for deadline := time.Now().Add(time.Minute); r.progress() <= before && time.Now().Before(deadline); {
		select {
		case <-p.Done():
		case <-time.After(20 * time.Millisecond):
			continue
		}
		break
	}
	d := time.Since(p.Start)
	d += time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
	return r.killAt(p, want, d)
}

// TestWindowRescale runs HOP and SESSION windows over the clicks topic
// (one job, a statement set) at parallelism 2, killed shortly after a
// checkpoint until 15% of the input is committed, then the same job at
// parallelism 3 from the newest checkpoint (key groups of the window
// state, with the watermark stored in each, and Kafka partitions move
// between subtasks; the sinks abort the transactions of subtasks that no
// longer exist) until 40%, then stopped with a savepoint (SIGTERM with
// --savepoint-on-stop) and restored from it (-s) at parallelism 1 to the
// end. Each restore
// lands in the middle of open windows; the committed rows must hold every
// (window, key) once, with its true count and sum. One transaction
// protocol: TestWindowCrash runs both.
func TestWindowRescale(t *testing.T) {
	topics := []string{"clicks", "hop_out", "session_out"}
	testWindowRescale(t, startBroker(t, winPartitions, false, topics...))
	onApache(t, winPartitions, topics, testWindowRescale)
}

func testWindowRescale(t *testing.T, b *broker) {
	start := time.Now()
	rng := testenv.NewRand(t, seed, seedEnv)
	dir := t.TempDir()
	c := writeWindowClicks(t, dir, rescaleRows)
	produceFile(t, b, "clicks", c.file, true, -1)
	const name = "hop"
	r := &jobRun{t: t, b: b, spec: jobSpec{name: name, guarantee: "exactly-once", out: "hop_out"},
		dataDir: filepath.Join(dir, "data"), ends: endOffsets(t, b, "clicks")}
	for _, ph := range rescalePhases {
		r.file = writeFile(t, dir, fmt.Sprintf("job-p%d.sql", ph.par), rescaleJobSQL(b, name, ph.par))
		from := r.latest()
		for r.latest() == from || r.progress() < ph.until {
			if r.runs >= 30 {
				t.Fatalf("%.0f%% of the input committed after %d runs; want %.0f%% at parallelism %d", 100*r.progress(), r.runs, 100*ph.until, ph.par)
			}
			if r.killAfterCheckpoint(rng) {
				t.Fatalf("the job ran to the end at parallelism %d; want it killed before %.0f%% of the input", ph.par, 100*ph.until)
			}
		}
		t.Logf("parallelism %d: started from checkpoint %d; newest checkpoint now %d, %.0f%% of the input committed",
			ph.par, from, r.latest(), 100*r.progress())
	}
	// Stopped with a savepoint at the last parallelism, resumed from it at
	// parallelism 1 to the end.
	sp := r.stopWithSavepoint()
	r.file = writeFile(t, dir, "job-p1.sql", rescaleJobSQL(b, name, 1))
	p := r.start(nil, "-s", sp)
	if err := p.Wait(); err != nil {
		t.Fatalf("run %d with -s %s: %v; output:\n%s", r.runs, sp, err, p.Output())
	}
	if want := fmt.Sprintf("restored job %s from %s", name, sp); !strings.Contains(p.Output(), want) {
		t.Errorf("run %d: want %q in the output:\n%s", r.runs, want, p.Output())
	}
	t.Logf("run %d: parallelism 1 from the savepoint: %s; finished in %v", r.runs, restoredLine(p.Output()), p.Took())
	checkWindowRows(t, b, "hop_out", "app_id", expectHop(rescaleRows))
	checkWindowRows(t, b, "session_out", "u", expectSessions(rescaleRows))
	t.Logf("%s took %v", t.Name(), time.Since(start).Round(time.Millisecond))
}
