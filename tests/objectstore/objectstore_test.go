package objectstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/tests/crash"
)

// binary is the streamsql binary TestMain builds.
var binary string

// runTimeout bounds one run of the binary; a run still going then is
// killed and fails the test (a hang is a bug too).
const runTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "streamsql-objectstore-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "objectstore tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = testenv.BuildStreamsql(dir); err != nil {
		fmt.Fprintln(os.Stderr, "objectstore tests:", err)
		return 1
	}
	defer testenv.StopS3()
	return m.Run()
}

// rows and rate are the datagen table's: about three seconds of input, so
// that kills land mid-run.
const (
	rows = 60000
	rate = 20000
)

// jobFile writes the job file into dir: checkpoints every 200ms into
// chkURI, savepoints (if spURI is not empty) into spURI, the outputs under
// dir/agg and dir/ids.
func jobFile(t *testing.T, srv *testenv.S3Server, dir, chkURI, spURI string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d');
CREATE TABLE agg_out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
CREATE TABLE ids_out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
SET 'execution.checkpointing.interval' = '200ms';
SET 'execution.checkpointing.dir' = '%s';
SET 's3.endpoint' = '%s';
SET 's3.path.style.access' = 'true';
`, rows, rate, rows, filepath.Join(dir, "agg"), filepath.Join(dir, "ids"), chkURI, srv.Endpoint)
	if spURI != "" {
		fmt.Fprintf(&b, "SET 'state.savepoints.dir' = '%s';\n", spURI)
	}
	for _, e := range extra {
		fmt.Fprintf(&b, "SET %s;\n", e)
	}
	b.WriteString(`SET 'pipeline.name' = 'agg';
INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id) FROM gen GROUP BY id % 1000;
SET 'pipeline.name' = 'ids';
INSERT INTO ids_out SELECT id FROM gen;
`)
	p := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var jobs = []string{"agg", "ids"}

// start starts `streamsql --data-dir DATA [args] -f FILE` with the S3
// server's credentials in the environment.
func start(t *testing.T, srv *testenv.S3Server, dataDir, file string, args ...string) *testenv.Proc {
	argv := append(append([]string{"--data-dir", dataDir}, args...), "-f", file)
	return testenv.StartProc(t, runTimeout, srv.Env, binary, argv...)
}

// newestInBucket is the newest checkpoint of job whose _metadata is in
// the bucket under prefix (0: none), read from the server's files (its
// POSIX backend keeps each object as a file), not through the engine.
func newestInBucket(t *testing.T, srv *testenv.S3Server, prefix, job string) int64 {
	ents, err := os.ReadDir(filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var newest int64
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "chk-")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(n, 10, 64)
		if err != nil || id <= newest {
			continue
		}
		if _, err := os.Stat(filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job, e.Name(), "_metadata")); err == nil {
			newest = id
		}
	}
	return newest
}

var restoredRE = regexp.MustCompile(`restored job (\S+) from checkpoint (\d+)`)

// restoredFrom returns, per job, the checkpoint the output says it was
// restored from.
func restoredFrom(out string) map[string]int64 {
	m := map[string]int64{}
	for _, sm := range restoredRE.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(sm[2], 10, 64)
		m[sm[1]] = n
	}
	return m
}

// checkExact checks both outputs under dir.
func checkExact(t *testing.T, dir string) {
	t.Helper()
	if err := crash.CheckAgg(filepath.Join(dir, "agg"), rows); err != nil {
		t.Error(err)
	}
	if err := crash.CheckIDs(filepath.Join(dir, "ids"), rows); err != nil {
		t.Error(err)
	}
}

func TestNewMachineEachKill(t *testing.T) {
	srv := testenv.S3(t)
	dir := t.TempDir()
	prefix := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	file := jobFile(t, srv, dir, "s3://"+testenv.S3Bucket+"/"+prefix, "")
	last := map[string]int64{}
	const kills = 4
	for run := 0; run < kills; run++ {
		data := filepath.Join(dir, fmt.Sprintf("machine-%d", run))
		p := start(t, srv, data, file)
		// Kill once every job completed a checkpoint in the bucket newer
		// than the one it restored.
		tick := time.NewTicker(10 * time.Millisecond)
		for advanced := false; !advanced; {
			select {
			case <-p.Done():
				t.Fatalf("run %d ended by itself (%v) before it was killed; output:\n%s", run, p.Err, p.Output())
			case <-tick.C:
			}
			advanced = true
			for _, j := range jobs {
				advanced = advanced && newestInBucket(t, srv, prefix, j) > last[j]
			}
		}
		tick.Stop()
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
		if !testenv.KilledBySignal(p.Err, syscall.SIGKILL) {
			t.Fatalf("run %d: not killed by SIGKILL (%v); output:\n%s", run, p.Err, p.Output())
		}
		got := restoredFrom(p.Output())
		for _, j := range jobs {
			if got[j] != last[j] {
				t.Errorf("run %d: job %s restored from checkpoint %d, want %d (the newest in the bucket when the last machine was killed); output:\n%s",
					run, j, got[j], last[j], p.Output())
			}
			last[j] = newestInBucket(t, srv, prefix, j)
		}
		t.Logf("run %d on %s killed after %v; newest checkpoints in the bucket: %v", run, filepath.Base(data), p.Took(), last)
		// The machine is gone: nothing of its data dir survives.
		if err := os.RemoveAll(data); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "machine-last")
	p := start(t, srv, data, file)
	if err := p.Wait(); err != nil {
		t.Fatalf("the last run: %v; output:\n%s", err, p.Output())
	}
	got := restoredFrom(p.Output())
	for _, j := range jobs {
		if got[j] != last[j] {
			t.Errorf("last run: job %s restored from checkpoint %d, want %d; output:\n%s", j, got[j], last[j], p.Output())
		}
	}
	checkExact(t, dir)
}

var savepointRE = regexp.MustCompile(`Savepoint written: (\S+)`)

func TestSavepointOnS3(t *testing.T) {
	srv := testenv.S3(t)
	dir := t.TempDir()
	prefix := fmt.Sprintf("savepoint-%d", time.Now().UnixNano())
	base := "s3://" + testenv.S3Bucket + "/" + prefix
	file := jobFile(t, srv, dir, base+"/checkpoints", base+"/savepoints")
	p := start(t, srv, filepath.Join(dir, "machine-a"), file, "--savepoint-on-stop")
	// Stop once a checkpoint of each job is in the bucket: the sources
	// are mid-run then.
	tick := time.NewTicker(10 * time.Millisecond)
	for ready := false; !ready; {
		select {
		case <-p.Done():
			t.Fatalf("the run ended by itself (%v) before it was stopped; output:\n%s", p.Err, p.Output())
		case <-tick.C:
		}
		ready = newestInBucket(t, srv, prefix+"/checkpoints", "agg") > 0 && newestInBucket(t, srv, prefix+"/checkpoints", "ids") > 0
	}
	tick.Stop()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("the run stopped with SIGTERM: %v; output:\n%s", err, p.Output())
	}
	m := savepointRE.FindAllStringSubmatch(p.Output(), -1)
	if len(m) == 0 {
		t.Fatalf("no \"Savepoint written: <path>\" after SIGTERM with --savepoint-on-stop; output:\n%s", p.Output())
	}
	var agg string
	for _, sm := range m {
		if !strings.HasPrefix(sm[1], base+"/savepoints/savepoint-") {
			t.Fatalf("savepoint written to %s, not under %s/savepoints", sm[1], base)
		}
		if strings.Contains(sm[1], "savepoint-agg-") {
			agg = sm[1]
		}
	}
	if agg == "" {
		t.Fatalf("no savepoint of job agg; output:\n%s", p.Output())
	}
	t.Logf("savepoints: %v", m)
	// The savepoint is in the canonical format (the default): each store's
	// entries, uploaded like any other state file.
	spDir := filepath.Join(srv.Dir, "data", testenv.S3Bucket, strings.TrimPrefix(agg, "s3://"+testenv.S3Bucket+"/"))
	data, err := os.ReadFile(filepath.Join(spDir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"Format": "CANONICAL"`)) || !bytes.Contains(data, []byte(`"Backend": "pebble"`)) ||
		!bytes.Contains(data, []byte(`"Name": "entries"`)) || bytes.Contains(data, []byte(".sst")) {
		t.Fatalf("the savepoint's _metadata is not of a canonical savepoint taken under pebble:\n%s", data)
	}
	// A new machine restores job agg from its savepoint (-s applies to the
	// first job submitted) and ids from its checkpoint in the bucket, under
	// the other state backend: a canonical savepoint restores under any
	// (and ids, stateless, has no store state in its checkpoint).
	file = jobFile(t, srv, dir, base+"/checkpoints", base+"/savepoints", "'state.backend' = 'hashmap'")
	p = start(t, srv, filepath.Join(dir, "machine-b"), file, "-s", agg)
	if err := p.Wait(); err != nil {
		t.Fatalf("the run restoring %s: %v; output:\n%s", agg, err, p.Output())
	}
	if !strings.Contains(p.Output(), "restored job agg from "+agg) {
		t.Errorf("want \"restored job agg from %s\"; output:\n%s", agg, p.Output())
	}
	checkExact(t, dir)
}

// completedInBucket are the ids of job's checkpoints whose _metadata is in
// the bucket under prefix, newest first.
func completedInBucket(t *testing.T, srv *testenv.S3Server, prefix, job string) []int64 {
	ents, err := os.ReadDir(filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "chk-")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job, e.Name(), "_metadata")); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}

// stateObjects are the files of the server that hold the state files the
// _metadata of checkpoint id of job lists (the bucket's layout,
// docs/DESIGN.md: shared/<subtask dir>/<name>.<crc32c>.<size>).
func stateObjects(t *testing.T, srv *testenv.S3Server, prefix, job string, id int64) []string {
	root := filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job)
	data, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("chk-%d", id), "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := bytes.Cut(data, []byte("\nsha256 "))
	var md struct {
		Operators []struct {
			Subtasks []struct {
				Dir   string
				Files []struct {
					Name   string
					Size   int64
					CRC32C uint32
				}
			}
		}
	}
	if err := json.Unmarshal(body, &md); err != nil {
		t.Fatalf("checkpoint %d's _metadata: %v", id, err)
	}
	var out []string
	for _, o := range md.Operators {
		for _, st := range o.Subtasks {
			for _, f := range st.Files {
				out = append(out, filepath.Join(root, "shared", st.Dir, fmt.Sprintf("%s.%08x.%d", f.Name, f.CRC32C, f.Size)))
			}
		}
	}
	return out
}

// TestDamagedObjectFallback: a state object that only the newest
// checkpoint in the bucket lists is damaged (a byte flipped in the
// server's file); a new machine warns that it cannot restore that
// checkpoint, restores the older one (two are retained) and runs to the
// end. The aggregate's final values are exact (the sink had committed the
// changes up to the newest checkpoint, which it emits again); the
// pass-through job, undamaged, is exact.
func TestDamagedObjectFallback(t *testing.T) {
	srv := testenv.S3(t)
	dir := t.TempDir()
	prefix := fmt.Sprintf("damaged-%d", time.Now().UnixNano())
	file := jobFile(t, srv, dir, "s3://"+testenv.S3Bucket+"/"+prefix, "", "'state.checkpoints.num-retained' = '2'")
	p := start(t, srv, filepath.Join(dir, "machine-a"), file)
	tick := time.NewTicker(10 * time.Millisecond)
	for two := false; !two; {
		select {
		case <-p.Done():
			t.Fatalf("the run ended by itself (%v) before it was killed; output:\n%s", p.Err, p.Output())
		case <-tick.C:
		}
		two = len(completedInBucket(t, srv, prefix, "agg")) >= 2
	}
	tick.Stop()
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	ids := completedInBucket(t, srv, prefix, "agg")
	if len(ids) != 2 {
		t.Fatalf("checkpoints of agg in the bucket after the kill: %v, want the two retained", ids)
	}
	newest, older := ids[0], ids[1]
	inOlder := map[string]bool{}
	for _, o := range stateObjects(t, srv, prefix, "agg", older) {
		inOlder[o] = true
	}
	var damaged string
	for _, o := range stateObjects(t, srv, prefix, "agg", newest) {
		if !inOlder[o] {
			damaged = o
		}
	}
	if damaged == "" {
		t.Fatalf("checkpoint %d lists no state object that checkpoint %d does not", newest, older)
	}
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped a bit of %s, listed by checkpoint %d only", damaged, newest)

	p = start(t, srv, filepath.Join(dir, "machine-b"), file)
	if err := p.Wait(); err != nil {
		t.Fatalf("the run after the damage: %v; output:\n%s", err, p.Output())
	}
	out := p.Output()
	warning := fmt.Sprintf("WARNING: checkpoint %d of job agg cannot be restored", newest)
	if !strings.Contains(out, warning) || !strings.Contains(out, filepath.Base(damaged)) {
		t.Errorf("want %q naming %s; output:\n%s", warning, filepath.Base(damaged), out)
	}
	if got := restoredFrom(out)["agg"]; got != older {
		t.Errorf("job agg restored from checkpoint %d, want %d (the older one); output:\n%s", got, older, out)
	}
	if err := crash.CheckAggFinal(filepath.Join(dir, "agg"), rows); err != nil {
		t.Error(err)
	}
	if err := crash.CheckIDs(filepath.Join(dir, "ids"), rows); err != nil {
		t.Error(err)
	}
}

// TestServerFaults: the S3 server paused (SIGSTOP) or killed for three
// seconds while jobs checkpoint to it, with a checkpoint timeout of one
// second: the checkpoints that cannot be written fail within it, fail the
// jobs ('tolerable-failed-checkpoints' 0), which restart by their
// strategy, trying again while the checkpoints cannot be listed; once the
// server is back they resume from the bucket and finish, with the cause
// shown, and the output is exact.
func TestServerFaults(t *testing.T) {
	for _, fault := range []string{"paused", "killed"} {
		t.Run(fault, func(t *testing.T) {
			srv := testenv.S3(t)
			dir := t.TempDir()
			prefix := fmt.Sprintf("fault-%s-%d", fault, time.Now().UnixNano())
			file := jobFile(t, srv, dir, "s3://"+testenv.S3Bucket+"/"+prefix, "",
				"'execution.checkpointing.timeout' = '1s'", "'restart-strategy.type' = 'fixed-delay'",
				"'restart-strategy.fixed-delay.attempts' = '1000'", "'restart-strategy.fixed-delay.delay' = '100ms'")
			p := start(t, srv, filepath.Join(dir, "data"), file)
			deadline := time.Now().Add(60 * time.Second)
			for newestInBucket(t, srv, prefix, "agg") < 2 || newestInBucket(t, srv, prefix, "ids") < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("no 2 checkpoints of each job in the bucket after 60 s; output:\n%s", p.Output())
				}
				time.Sleep(5 * time.Millisecond)
			}
			pidText, err := os.ReadFile(filepath.Join(srv.Dir, "server.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
			if err != nil {
				t.Fatal(err)
			}
			if fault == "paused" {
				err = syscall.Kill(pid, syscall.SIGSTOP)
			} else {
				err = srv.Stop()
			}
			if err != nil {
				t.Fatal(err)
			}
			// The outage: three times the checkpoint timeout. (Not a wait
			// for a condition: the server is down for this long.)
			time.Sleep(3 * time.Second)
			// A checkpoint failed while the server was still down: its
			// upload and its cleanup are bounded by its timeout, not by
			// the server coming back.
			if during := p.Output(); !strings.Contains(during, "failed (1 in a row") {
				t.Errorf("no checkpoint failed during the %s server's three seconds; output so far:\n%s", fault, during)
			}
			if fault == "paused" {
				err = syscall.Kill(pid, syscall.SIGCONT)
			} else {
				err = srv.Start()
			}
			if err != nil {
				t.Fatal(err)
			}
			err = p.Wait()
			out := p.Output()
			if err != nil {
				t.Fatalf("the run ended with %v; output:\n%s", err, out)
			}
			if !strings.Contains(out, "restarted from checkpoint") || !strings.Contains(out, "failed") {
				t.Errorf("the run shows no failed checkpoint and restart; output:\n%s", out)
			}
			t.Logf("%s for 3 s; the run took %v; its failures:\n%s", fault, p.Took(), failureLines(out))
			checkExact(t, dir)
		})
	}
}

// failureLines are the lines of out that say a job failed (the first
// few).
func failureLines(out string) string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "failed") && len(ls) < 6 {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "\n")
}

// slowProxy forwards TCP connections to target; while slow is set, every
// chunk of at most 512 bytes it forwards, either way, waits 300 ms first:
// a server that answers, slowly.
type slowProxy struct {
	l      net.Listener
	target string
	slow   atomic.Bool
}

func startSlowProxy(t *testing.T, target string) *slowProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowProxy{l: l, target: target}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *slowProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 512)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if p.slow.Load() {
					time.Sleep(300 * time.Millisecond)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
}

// TestSlowServer: the S3 server reached through a proxy that, for three
// seconds, forwards 512 bytes every 300 ms: the checkpoints whose uploads
// cannot finish within the one-second timeout fail within it, the jobs
// restart by their strategy, and once the server answers at its speed
// again they resume from the bucket and finish with exact output.
func TestSlowServer(t *testing.T) {
	srv := testenv.S3(t)
	proxy := startSlowProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"))
	via := *srv
	via.Endpoint = "http://" + proxy.l.Addr().String()
	dir := t.TempDir()
	prefix := fmt.Sprintf("slow-%d", time.Now().UnixNano())
	file := jobFile(t, &via, dir, "s3://"+testenv.S3Bucket+"/"+prefix, "",
		"'execution.checkpointing.timeout' = '1s'", "'restart-strategy.type' = 'fixed-delay'",
		"'restart-strategy.fixed-delay.attempts' = '1000'", "'restart-strategy.fixed-delay.delay' = '100ms'")
	p := start(t, srv, filepath.Join(dir, "data"), file)
	deadline := time.Now().Add(60 * time.Second)
	for newestInBucket(t, srv, prefix, "agg") < 2 || newestInBucket(t, srv, prefix, "ids") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no 2 checkpoints of each job in the bucket after 60 s; output:\n%s", p.Output())
		}
		time.Sleep(5 * time.Millisecond)
	}
	proxy.slow.Store(true)
	// Three seconds of a slow server (not a wait for a condition).
	time.Sleep(3 * time.Second)
	if during := p.Output(); !strings.Contains(during, "failed (1 in a row") || !strings.Contains(during, "context deadline exceeded") {
		t.Errorf("no checkpoint failed for its timeout while the server was slow; output so far:\n%s", during)
	}
	proxy.slow.Store(false)
	if err := p.Wait(); err != nil {
		t.Fatalf("the run ended with %v; output:\n%s", err, p.Output())
	}
	t.Logf("the run took %v; its failures:\n%s", p.Took(), failureLines(p.Output()))
	checkExact(t, dir)
}
