package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/streamsql/streamsql/internal/testenv"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamsql-server-test-")
	if err != nil {
		panic(err)
	}
	bin, err = testenv.BuildStreamsql(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startServer starts a server on dir and addr, with the further flags
// extra, and waits for its /healthz to answer (over plain HTTP on addr).
func startServer(t *testing.T, dir, addr string, extra ...string) *testenv.Proc {
	p := testenv.StartProc(t, 3*time.Minute, nil, bin, append([]string{"server", "--data-dir", dir, "--http", addr}, extra...)...)
	waitFor(t, "the server's /healthz", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("server exited: %v\n%s", p.Err, p.Output())
		default:
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// serve starts a server on a data directory and a loopback address of
// its own, stopped with SIGTERM when the test ends, and returns them with
// the server's URL.
func serve(t *testing.T) (dir, addr, url string) {
	t.Helper()
	dir, addr = t.TempDir(), freeAddr(t)
	srv := startServer(t, dir, addr)
	t.Cleanup(func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	return dir, addr, "http://" + addr
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
	return resp.StatusCode
}

type jobsResponse struct {
	Jobs []struct {
		ID, Name, Status string
		RecordsIn        int64 `json:"records_in"`
		Restored         int64 `json:"restored_from_checkpoint"`
	} `json:"jobs"`
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("POST %s: %v: %s", url, err, data)
	}
	return resp.StatusCode, out
}

// metric is the sum of a metric's samples whose labels include want.
func metric(t *testing.T, addr, name string, want map[string]string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.Metric {
		match := 0
		for _, l := range m.Label {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				match++
			}
		}
		if match < len(want) {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

const tables = `
CREATE TABLE src (id BIGINT) WITH ('connector'='datagen', 'rows-per-second'='2000');
CREATE TABLE dst (id BIGINT) WITH ('connector'='blackhole');
SET 'execution.checkpointing.interval' = '200ms';
`

// TestServer submits a job with `streamsql --server URL -f`, reads it back
// over the API and /metrics, kills the server with SIGKILL, sees the job
// resumed from its checkpoint by the next server, which a second server
// cannot share, and stops it cleanly with SIGTERM.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, dir, addr)

	// A syntax error through the API: the shell's message, line and column.
	code, body := post(t, api+"/statements", "SELECT 1;\nSELEC 2;")
	if code != 400 || body["line"] != float64(2) || body["column"] != float64(1) || !strings.Contains(body["error"].(string), `unknown statement "SELEC 2"`) {
		t.Fatalf("syntax error: %d %v", code, body)
	}
	// A bounded SELECT's rows as JSON.
	code, body = post(t, api+"/statements", "SELECT 1 + 1 AS two;")
	if code != 200 || !strings.Contains(fmt.Sprint(body["results"]), "two") || !strings.Contains(fmt.Sprint(body["results"]), "[[2]]") {
		t.Fatalf("SELECT: %d %v", code, body)
	}

	file := filepath.Join(t.TempDir(), "job.sql")
	os.WriteFile(file, []byte(tables+"INSERT INTO dst SELECT id FROM src;\n"), 0o644)
	client := testenv.StartProc(t, time.Minute, nil, bin, "--server", "http://"+addr, "-f", file)
	if err := client.Wait(); err != nil || !strings.Contains(client.Output(), "Job ID:") {
		t.Fatalf("streamsql --server -f: %v\n%s", err, client.Output())
	}
	var jobs jobsResponse
	waitFor(t, "the job to read rows", func() bool {
		getJSON(t, api+"/jobs", &jobs)
		return len(jobs.Jobs) == 1 && jobs.Jobs[0].Status == "RUNNING" && jobs.Jobs[0].RecordsIn > 0
	})
	id := jobs.Jobs[0].ID
	var detail struct {
		Plan struct {
			Operators []struct {
				ID       string
				Subtasks []struct {
					RecordsIn int64 `json:"records_in"`
				}
			}
		}
	}
	if code := getJSON(t, api+"/jobs/"+id, &detail); code != 200 || len(detail.Plan.Operators) < 2 {
		t.Fatalf("GET job: %d %+v", code, detail)
	}
	var missing struct{ Error string }
	if code := getJSON(t, api+"/jobs/nosuch", &missing); code != 404 || !strings.Contains(missing.Error, "no such job") {
		t.Fatalf("unknown job: %d %+v", code, missing)
	}

	// The metrics move.
	labels := map[string]string{"job": id}
	for _, name := range []string{"streamsql_operator_records_in_total", "streamsql_operator_records_out_total",
		"streamsql_operator_busy_seconds_total", "streamsql_checkpoints_total", "streamsql_checkpoint_duration_seconds"} {
		first, ok := metric(t, addr, name, labels)
		if !ok {
			t.Fatalf("/metrics has no %s", name)
		}
		waitFor(t, name+" to move", func() bool {
			v, _ := metric(t, addr, name, labels)
			return v > first
		})
	}
	for _, name := range []string{"streamsql_operator_backpressured_seconds_total",
		"streamsql_checkpoint_size_bytes", "streamsql_job_restarts_total", "streamsql_late_records_total"} {
		if _, ok := metric(t, addr, name, labels); !ok {
			t.Fatalf("/metrics has no %s", name)
		}
	}
	waitFor(t, "a completed checkpoint", func() bool {
		v, _ := metric(t, addr, "streamsql_checkpoints_total", map[string]string{"job": id, "status": "completed"})
		return v >= 2
	})

	// The checkpoint history: the newest checkpoints, oldest first.
	var cps struct {
		Counts  map[string]int
		History []struct {
			ID          int64
			Status      string
			DurationMS  *int64   `json:"duration_ms"`
			AckedMS     *int64   `json:"acked_ms"`
			AlignmentMS *float64 `json:"alignment_ms"`
			SizeBytes   *int64   `json:"size_bytes"`
		}
	}
	if code := getJSON(t, api+"/jobs/"+id+"/checkpoints", &cps); code != 200 || len(cps.History) < 2 {
		t.Fatalf("GET checkpoints: %d %+v", code, cps)
	}
	for i, h := range cps.History {
		if h.Status != "COMPLETED" || h.DurationMS == nil || h.AckedMS == nil || *h.AckedMS > *h.DurationMS || h.AlignmentMS == nil || h.SizeBytes == nil ||
			(i > 0 && h.ID <= cps.History[i-1].ID) {
			t.Fatalf("checkpoint history entry %d: %+v (history %+v)", i, h, cps.History)
		}
	}

	// SIGKILL: the next server resumes the job from its checkpoint.
	srv.Signal(syscall.SIGKILL)
	srv.Wait()
	srv = startServer(t, dir, addr)
	waitFor(t, "the resumed job", func() bool {
		getJSON(t, api+"/jobs", &jobs)
		return len(jobs.Jobs) == 1 && jobs.Jobs[0].Status == "RUNNING" && jobs.Jobs[0].RecordsIn > 0
	})
	if jobs.Jobs[0].Restored == 0 || !regexp.MustCompile(`msg="job resumed" .*previous_job=`+id+` from=checkpoint checkpoint=[1-9]`).MatchString(srv.Output()) {
		t.Fatalf("job not resumed from a checkpoint: %+v\n%s", jobs, srv.Output())
	}

	// The data dir's lock refuses a second server.
	second := testenv.StartProc(t, time.Minute, nil, bin, "server", "--data-dir", dir, "--http", freeAddr(t))
	if err := second.Wait(); err == nil || !strings.Contains(second.Output(), "is in use by process") {
		t.Fatalf("a second server on the data dir: %v\n%s", err, second.Output())
	}

	// SIGTERM stops the job with a final checkpoint, and exits 0.
	srv.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil || !regexp.MustCompile(`msg="job stopped on shutdown" .*status=CANCELED checkpoint=[1-9]`).MatchString(srv.Output()) {
		t.Fatalf("SIGTERM: %v\n%s", err, srv.Output())
	}
	// ... which the next start resumes from.
	srv = startServer(t, dir, addr)
	waitFor(t, "the job resumed after SIGTERM", func() bool {
		getJSON(t, api+"/jobs", &jobs)
		return len(jobs.Jobs) == 1 && jobs.Jobs[0].Status == "RUNNING"
	})
	if jobs.Jobs[0].Restored == 0 {
		t.Fatalf("not resumed from the final checkpoint: %+v\n%s", jobs, srv.Output())
	}
	// Stop with a savepoint through the API: the job ends, and is not resumed again.
	code, body = post(t, api+"/jobs/"+jobs.Jobs[0].ID+"/stop?savepoint=true", "")
	if code != 200 || body["savepoint"] == "" || body["status"] != "FINISHED" {
		t.Fatalf("stop with savepoint: %d %v (want status FINISHED, as Flink's job stopped with a savepoint)", code, body)
	}
	srv.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, srv.Output())
	}
	data, err := os.ReadFile(filepath.Join(dir, "server", "jobs.json"))
	if err != nil || strings.TrimSpace(string(data)) != "[]" {
		t.Fatalf("a job stopped through the API is still to be resumed: %v %s", err, data)
	}
}

// TestClients: `streamsql --server URL` as a shell reading statements
// from stdin, and `-f --wait` waiting for a bounded job to finish.
func TestClients(t *testing.T) {
	_, _, url := serve(t)
	file := filepath.Join(t.TempDir(), "bounded.sql")
	os.WriteFile(file, []byte(`CREATE TABLE nums (n BIGINT) WITH ('connector'='datagen', 'number-of-rows'='5000');
CREATE TABLE out (n BIGINT) WITH ('connector'='blackhole');
INSERT INTO out SELECT n FROM nums;
`), 0o644)
	client := testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-f", file, "--wait")
	if err := client.Wait(); err != nil {
		t.Fatalf("-f --wait: %v\n%s", err, client.Output())
	}
	var jobs jobsResponse
	getJSON(t, url+"/api/v1/jobs", &jobs)
	if len(jobs.Jobs) != 1 || jobs.Jobs[0].Status != "FINISHED" || jobs.Jobs[0].RecordsIn != 5000 {
		t.Fatalf("after --wait: %+v", jobs)
	}

	sh := exec.Command(bin, "--server", url)
	sh.Stdin = strings.NewReader("SHOW TABLES;\nSELECT 40 +\n  2 AS answer;\nSELEC 1;\n\\d nums\n\\nope\nSELECT 'after' AS x;\n\\q\nSELECT 'not reached' AS y;\n")
	out, err := sh.CombinedOutput()
	for _, want := range []string{"| nums", "| out", "answer", "42", `unknown statement "SELEC 1"`,
		"| n    | BIGINT |", `[ERROR] shell command '\nope' is not available`, "after"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("shell output lacks %q (err %v):\n%s", want, err, out)
		}
	}
	if strings.Contains(string(out), "not reached") {
		t.Fatalf("the shell went on after \\q:\n%s", out)
	}
	if err == nil {
		t.Fatalf("shell with a failed statement exited 0:\n%s", out)
	}
}

// TestTwoClients: two `streamsql --server URL -f` processes submit their
// jobs at the same time while the job list is read over the API; both
// succeed, and then two shells at once each list both jobs.
func TestTwoClients(t *testing.T) {
	_, _, url := serve(t)
	var files []string
	for _, c := range []string{"a", "b"} {
		file := filepath.Join(t.TempDir(), c+".sql")
		os.WriteFile(file, []byte(fmt.Sprintf(`CREATE TABLE src_%[1]s (id BIGINT) WITH ('connector'='datagen', 'rows-per-second'='200');
CREATE TABLE dst_%[1]s (id BIGINT) WITH ('connector'='blackhole');
SET 'execution.checkpointing.interval' = '500ms';
INSERT INTO dst_%[1]s SELECT id FROM src_%[1]s;
SELECT 1 + 2 AS n;
`, c)), 0o644)
		files = append(files, file)
	}

	// Reads of the job list run all along the submissions.
	stopReads := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(readErr)
		for {
			select {
			case <-stopReads:
				return
			default:
			}
			resp, err := http.Get(url + "/api/v1/jobs")
			if err != nil {
				readErr <- err
				return
			}
			var jobs jobsResponse
			err = json.NewDecoder(resp.Body).Decode(&jobs)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				readErr <- fmt.Errorf("GET /api/v1/jobs during submissions: %d %v", resp.StatusCode, err)
				return
			}
		}
	}()
	var clients []*testenv.Proc
	for _, f := range files {
		clients = append(clients, testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-f", f))
	}
	jobID := regexp.MustCompile(`Job ID: (\S+)`)
	var ids []string
	for _, c := range clients {
		err := c.Wait()
		m := jobID.FindStringSubmatch(c.Output())
		if err != nil || m == nil || !strings.Contains(c.Output(), "| 3 |") {
			t.Fatalf("client %v: %v\n%s", c.Args(), err, c.Output())
		}
		ids = append(ids, m[1])
	}
	close(stopReads)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	if ids[0] == ids[1] {
		t.Fatalf("two clients got the same job id %s", ids[0])
	}

	// Each of two shells at once sees both jobs running.
	var shells []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		sh := exec.Command(bin, "--server", url)
		sh.Stdin = strings.NewReader("SHOW JOBS;\nSELECT 40 + 2 AS answer;\nSHOW JOBS;\n")
		var out strings.Builder
		sh.Stdout, sh.Stderr = &out, &out
		if err := sh.Start(); err != nil {
			t.Fatal(err)
		}
		shells = append(shells, sh)
		outs = append(outs, &out)
	}
	for i, sh := range shells {
		if err := sh.Wait(); err != nil {
			t.Fatalf("shell %d: %v\n%s", i, err, outs[i])
		}
		out := outs[i].String()
		for _, want := range []string{ids[0], ids[1], "42"} {
			if strings.Count(out, want) < 1 {
				t.Fatalf("shell %d does not show %q:\n%s", i, want, out)
			}
		}
		if strings.Count(out, "RUNNING") < 4 {
			t.Fatalf("shell %d does not show both jobs running twice:\n%s", i, out)
		}
	}
	var jobs jobsResponse
	getJSON(t, url+"/api/v1/jobs", &jobs)
	if len(jobs.Jobs) != 2 {
		t.Fatalf("the server runs %d jobs, want 2: %+v", len(jobs.Jobs), jobs)
	}
	for _, j := range jobs.Jobs {
		if j.Status != "RUNNING" || (j.ID != ids[0] && j.ID != ids[1]) {
			t.Fatalf("jobs: %+v, want %v running", jobs, ids)
		}
	}
}

// TestRestoreSavepoint stops a counting job with a savepoint through the
// API, then restores it from that savepoint with `streamsql --server URL
// -s PATH -f` and lets it finish: the restored job reads only the rows
// after the savepoint, and the counts it writes continue from the
// savepoint's, so that every row is counted once.
func TestRestoreSavepoint(t *testing.T) {
	const rows, rate = 100_000, 20_000
	dir := t.TempDir()
	addr := freeAddr(t)
	url := "http://" + addr
	srv := startServer(t, filepath.Join(dir, "data"), addr, "--allowed-paths", dir)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	out := filepath.Join(dir, "counts")
	insert := "INSERT INTO counts SELECT id % 10 AS k, COUNT(*) FROM gen GROUP BY id % 10;\n"
	job := filepath.Join(dir, "job.sql")
	os.WriteFile(job, []byte(fmt.Sprintf(`CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%[1]d',
  'rows-per-second' = '%[2]d', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%[1]d');
CREATE TABLE counts (k BIGINT, c BIGINT) WITH ('connector' = 'filesystem', 'path' = '%[3]s', 'format' = 'debezium-json');
SET 'execution.checkpointing.interval' = '200ms';
`, rows, rate, out)+insert), 0o644)
	restore := filepath.Join(dir, "restore.sql")
	os.WriteFile(restore, []byte(insert), 0o644)

	jobID := regexp.MustCompile(`Job ID: (\S+)`)
	client := testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-f", job)
	err := client.Wait()
	m := jobID.FindStringSubmatch(client.Output())
	if err != nil || m == nil {
		t.Fatalf("streamsql --server -f: %v\n%s", err, client.Output())
	}
	id := m[1]
	// Stop once the sink committed a checkpoint's counts, before the
	// source (throttled) reaches the end of its rows.
	waitFor(t, "committed counts", func() bool {
		parts, _ := filepath.Glob(filepath.Join(out, "part-*"))
		return len(parts) > 0
	})
	code, body := post(t, url+"/api/v1/jobs/"+id+"/stop?savepoint=true", "")
	sp, _ := body["savepoint"].(string)
	if code != 200 || sp == "" {
		t.Fatalf("stop with savepoint: %d %v", code, body)
	}
	if _, err := os.Stat(sp); err != nil {
		t.Fatalf("the savepoint's path: %v", err)
	}
	// total sums the counts the sink committed (the changelog replayed).
	total := func() (sum, keys int64) {
		t.Helper()
		code, body := post(t, url+"/api/v1/statements", "SELECT SUM(c) AS total, COUNT(*) AS keys FROM counts;")
		rs, _ := body["results"].([]any)
		if code != 200 || len(rs) != 1 {
			t.Fatalf("SELECT SUM(c) FROM counts: %d %v", code, body)
		}
		row := rs[0].(map[string]any)["rows"].([]any)[0].([]any)
		fmt.Sscan(row[0].(string), &sum)
		fmt.Sscan(row[1].(string), &keys)
		return sum, keys
	}
	saved, keys := total()
	t.Logf("the savepoint %s holds counts for %d of %d rows", sp, saved, rows)
	if saved <= 0 || saved >= rows || keys != 10 {
		t.Fatalf("the stopped job committed counts for %d rows over %d keys; want some of the %d rows, 10 keys", saved, keys, rows)
	}

	// Restore from the savepoint, as a user would, and wait for the end.
	client = testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-s", sp, "-f", restore, "--wait")
	if err := client.Wait(); err != nil || !strings.Contains(client.Output(), "restored job") || !strings.Contains(client.Output(), sp) {
		t.Fatalf("streamsql --server -s %s -f --wait: %v\n%s", sp, err, client.Output())
	}
	m = jobID.FindStringSubmatch(client.Output())
	if m == nil {
		t.Fatalf("no job id:\n%s", client.Output())
	}
	var restored struct {
		Job struct {
			Status    string
			RecordsIn int64 `json:"records_in"`
			Restored  int64 `json:"restored_from_checkpoint"`
		}
	}
	getJSON(t, url+"/api/v1/jobs/"+m[1], &restored)
	if restored.Job.Status != "FINISHED" || restored.Job.Restored == 0 {
		t.Fatalf("the restored job: %+v", restored.Job)
	}
	if restored.Job.RecordsIn != rows-saved {
		t.Errorf("the restored job read %d rows, want the %d after the savepoint", restored.Job.RecordsIn, rows-saved)
	}
	if sum, keys := total(); sum != rows || keys != 10 {
		t.Errorf("after the restore the counts add up to %d over %d keys, want %d over 10: the restored counts did not continue from the savepoint's", sum, keys, rows)
	}
	// -s held for that request's statements only.
	code, body = post(t, url+"/api/v1/statements", "SET;")
	if code != 200 || strings.Contains(fmt.Sprint(body), sp) || !strings.Contains(fmt.Sprint(body), "execution.checkpointing.interval") {
		t.Fatalf("the server's options after the request with -s: %d %v", code, body)
	}
}

// moves fails unless the metric is on /metrics for the labels, and waits
// for its value to grow past the first one read.
func moves(t *testing.T, addr, name string, labels map[string]string) {
	t.Helper()
	first, ok := metric(t, addr, name, labels)
	if !ok {
		t.Fatalf("/metrics has no %s%v", name, labels)
	}
	waitFor(t, fmt.Sprintf("%s%v to move past %v", name, labels, first), func() bool {
		v, _ := metric(t, addr, name, labels)
		return v > first
	})
}

// reaches waits for the metric's value for the labels to be at least min.
func reaches(t *testing.T, addr, name string, labels map[string]string, min float64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s%v to reach %v", name, labels, min), func() bool {
		v, ok := metric(t, addr, name, labels)
		return ok && v >= min
	})
}

// submit runs statements on the server and returns the id of the job they
// submitted.
func submit(t *testing.T, api, statements string) string {
	t.Helper()
	code, body := post(t, api+"/statements", statements)
	if code != 200 {
		t.Fatalf("POST statements: %d %v", code, body)
	}
	for _, r := range body["results"].([]any) {
		if id, _ := r.(map[string]any)["job_id"].(string); id != "" {
			return id
		}
	}
	t.Fatalf("no job submitted: %v", body)
	return ""
}

// TestMetrics reads /metrics with the Prometheus text parser while three
// jobs run: a windowed aggregation over event time whose out-of-order rows
// are partly late (dropped), a fast bounded one whose source outruns its
// window operator and whose late rows go to a table, and one that fails
// and restarts. Every metric of docs/API.md is there, and each moves where
// its job makes it move.
func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, dir, addr)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	// Event time advances 20 s per second; rows are up to 2 s behind the
	// newest, and the watermark is the newest: many are late.
	gen := func(name, more string) string {
		return fmt.Sprintf(`CREATE TABLE %s (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', %s
  'fields.k.min' = '0', 'fields.k.max' = '9', 'fields.ts.kind' = 'sequence', 'fields.ts.start' = '2024-01-01 00:00:00',
  'fields.ts.step' = '10 ms', 'fields.ts.max-past' = '2 s');
`, name, more)
	}
	windows := func(sink, src string) string {
		return fmt.Sprintf(`CREATE TABLE %[1]s (k INT, window_start TIMESTAMP(3), n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO %[1]s SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE %[2]s, DESCRIPTOR(ts), INTERVAL '1' SECOND))
  GROUP BY k, window_start, window_end;
`, sink, src)
	}
	win := submit(t, api, gen("clicks", "'rows-per-second' = '2000',")+
		"SET 'execution.checkpointing.interval' = '200ms';\n"+windows("per_window", "clicks"))

	job := map[string]string{"job": win}
	for _, name := range []string{"streamsql_operator_records_in_total", "streamsql_operator_records_out_total",
		"streamsql_operator_busy_seconds_total", "streamsql_operator_watermark_seconds",
		"streamsql_checkpoint_duration_seconds", "streamsql_checkpoints_total"} {
		moves(t, addr, name, job)
	}
	moves(t, addr, "streamsql_late_records_total", map[string]string{"job": win, "disposition": "dropped"})
	reaches(t, addr, "streamsql_checkpoints_total", map[string]string{"job": win, "status": "completed"}, 2)
	reaches(t, addr, "streamsql_checkpoint_size_bytes", job, 1)
	reaches(t, addr, "streamsql_state_entries", job, 1)
	reaches(t, addr, "streamsql_state_memory_bytes", job, 1)
	// A group aggregation reports its groups and their bytes too.
	grouped := submit(t, api, gen("clicks2", "'rows-per-second' = '2000',")+
		`CREATE TABLE per_k (k INT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO per_k SELECT k, COUNT(*) FROM clicks2 GROUP BY k;
`)
	reaches(t, addr, "streamsql_state_entries", map[string]string{"job": grouped}, 10)
	reaches(t, addr, "streamsql_state_memory_bytes", map[string]string{"job": grouped}, 10*100)
	if v, ok := metric(t, addr, "streamsql_operator_watermark_seconds", job); !ok || v < float64(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("streamsql_operator_watermark_seconds of the windowed job is %v, want the event time (2024-01-01 on)", v)
	}
	for _, name := range []string{"streamsql_operator_backpressured_seconds_total", "streamsql_job_restarts_total"} {
		if _, ok := metric(t, addr, name, job); !ok {
			t.Errorf("/metrics has no %s for the windowed job", name)
		}
	}
	if _, ok := metric(t, addr, "streamsql_late_records_total", map[string]string{"job": win, "disposition": "routed"}); !ok {
		t.Errorf("/metrics has no streamsql_late_records_total{disposition=\"routed\"} for the windowed job")
	}

	// As fast as it can: the source waits on the window operator's inbox.
	burst := submit(t, api, gen("burst", "'rows-per-second' = '0', 'number-of-rows' = '1000000',")+
		"CREATE TABLE burst_late (k INT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');\n"+
		"SET 'table.exec.late-records.table' = 'burst_late';\n"+windows("burst_windows", "burst")+
		"RESET 'table.exec.late-records.table';\n")
	reaches(t, addr, "streamsql_late_records_total", map[string]string{"job": burst, "disposition": "routed"}, 1)
	waitFor(t, "the source of the burst to be backpressured", func() bool {
		v, _ := metric(t, addr, "streamsql_operator_backpressured_seconds_total", map[string]string{"job": burst})
		return v > 0
	})

	// Division by zero at row 500: two restarts, then the job fails.
	failing := submit(t, api, `CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE ratios (x BIGINT) WITH ('connector' = 'blackhole');
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '2';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
INSERT INTO ratios SELECT 10 / (id - 500) FROM seq;
RESET 'restart-strategy.type';
RESET 'restart-strategy.fixed-delay.attempts';
RESET 'restart-strategy.fixed-delay.delay';
`)
	reaches(t, addr, "streamsql_job_restarts_total", map[string]string{"job": failing}, 2)
}

// TestLogJSON runs the server with --log-format json: every line of its
// log is a JSON object, and the log has a job's submission, its completed
// checkpoints (id, duration, size), and a failing job's failures with
// their cause, its restart and its final failure.
func TestLogJSON(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := testenv.StartProc(t, 3*time.Minute, nil, bin, "server", "--data-dir", dir, "--http", addr, "--log-format", "json")
	waitFor(t, "the server's /healthz", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	counting := submit(t, api, tables+"INSERT INTO dst SELECT id FROM src;\n")
	failing := submit(t, api, `CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE ratios (x BIGINT) WITH ('connector' = 'blackhole');
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '1';
SET 'restart-strategy.fixed-delay.delay' = '100ms';
INSERT INTO ratios SELECT 10 / (id - 500) FROM seq;
`)
	waitFor(t, "two completed checkpoints and the failing job's end", func() bool {
		v, _ := metric(t, addr, "streamsql_checkpoints_total", map[string]string{"job": counting, "status": "completed"})
		var j struct{ Job struct{ Status string } }
		getJSON(t, api+"/jobs/"+failing, &j)
		return v >= 2 && j.Job.Status == "FAILED"
	})
	srv.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, srv.Output())
	}

	type record struct {
		Time, Level, Msg, Job, Name, Status, Error, Statement string
		Checkpoint                                            int64
		DurationMS                                            *float64 `json:"duration_ms"`
		AckedMS                                               *float64 `json:"acked_ms"`
		SizeBytes                                             int64    `json:"size_bytes"`
		Restart                                               int
	}
	var recs []record
	for _, line := range strings.Split(strings.TrimSpace(srv.Output()), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Time == "" || r.Level == "" || r.Msg == "" {
			t.Fatalf("a log line is not a JSON record with time, level and msg (%v): %s\nlog:\n%s", err, line, srv.Output())
		}
		recs = append(recs, r)
	}
	find := func(what string, ok func(r record) bool) record {
		t.Helper()
		for _, r := range recs {
			if ok(r) {
				return r
			}
		}
		t.Fatalf("the log has no %s:\n%s", what, srv.Output())
		return record{}
	}
	find("submission of the counting job", func(r record) bool {
		return r.Msg == "job submitted" && r.Job == counting && r.Status == "RUNNING" && strings.Contains(r.Statement, "INSERT INTO dst")
	})
	cp := find("completed checkpoint", func(r record) bool {
		return r.Msg == "checkpoint completed" && r.Job == counting && r.Checkpoint > 0 && r.DurationMS != nil && r.AckedMS != nil && r.SizeBytes > 0
	})
	t.Logf("a checkpoint record: %+v", cp)
	find("failure with its cause, restarting", func(r record) bool {
		return r.Msg == "job failed" && r.Level == "WARN" && r.Job == failing && r.Status == "RESTARTING" && strings.Contains(r.Error, "division by zero")
	})
	find("restart", func(r record) bool {
		return r.Msg == "job restarted" && r.Job == failing && r.Status == "RUNNING" && r.Restart == 1
	})
	find("final failure", func(r record) bool {
		return r.Msg == "job failed" && r.Level == "ERROR" && r.Job == failing && r.Status == "FAILED" && strings.Contains(r.Error, "division by zero")
	})
	find("the counting job stopped on shutdown", func(r record) bool {
		return r.Msg == "job stopped on shutdown" && r.Job == counting && r.Checkpoint > 0
	})
}

// TestKafkaLag reads a topic of `streamsql kafka-dev` with two partitions
// in a job on the server: once the job has read every message, /metrics
// has streamsql_kafka_source_lag_records for each partition, at 0, and the
// job's detail lists the same lag per partition.
func TestKafkaLag(t *testing.T) {
	const rows = 2000
	kafka := freeAddr(t)
	_, port, _ := net.SplitHostPort(kafka)
	broker := testenv.StartProc(t, 3*time.Minute, nil, bin, "kafka-dev", "--port", port, "--partitions", "2", "--topic", "lagged")
	defer func() {
		broker.Signal(syscall.SIGTERM)
		broker.Wait()
	}()
	waitFor(t, "kafka-dev", func() bool { return strings.Contains(broker.Output(), "serving Kafka") })
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, dir, addr)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	topic := fmt.Sprintf(`WITH ('connector' = 'kafka', 'topic' = 'lagged', 'properties.bootstrap.servers' = '%s', 'format' = 'json'`, kafka)
	writer := submit(t, api, fmt.Sprintf(`CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0');
CREATE TABLE lagged_out (id BIGINT) %s);
INSERT INTO lagged_out SELECT id FROM gen;
`, rows, topic))
	waitFor(t, "the writer to finish", func() bool {
		var j struct{ Job struct{ Status string } }
		getJSON(t, api+"/jobs/"+writer, &j)
		if j.Job.Status == "FAILED" {
			t.Fatalf("the writer failed: %+v", j)
		}
		return j.Job.Status == "FINISHED"
	})
	reader := submit(t, api, fmt.Sprintf(`CREATE TABLE lagged_in (id BIGINT) %s, 'scan.startup.mode' = 'earliest-offset');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM lagged_in;
`, topic))
	var jobs jobsResponse
	waitFor(t, "the reader to read every message", func() bool {
		getJSON(t, api+"/jobs", &jobs)
		for _, j := range jobs.Jobs {
			if j.ID == reader {
				return j.RecordsIn == rows
			}
		}
		return false
	})
	for _, p := range []string{"0", "1"} {
		labels := map[string]string{"job": reader, "topic": "lagged", "partition": p}
		waitFor(t, "the lag of partition "+p+" at 0", func() bool {
			v, ok := metric(t, addr, "streamsql_kafka_source_lag_records", labels)
			return ok && v == 0
		})
	}
	var detail struct {
		Plan struct {
			Operators []struct {
				Subtasks []struct {
					KafkaLag []struct {
						Topic     string
						Partition int32
						Records   int64
					} `json:"kafka_lag"`
				}
			}
		}
	}
	getJSON(t, api+"/jobs/"+reader, &detail)
	var parts []string
	for _, o := range detail.Plan.Operators {
		for _, st := range o.Subtasks {
			for _, l := range st.KafkaLag {
				parts = append(parts, fmt.Sprintf("%s-%d:%d", l.Topic, l.Partition, l.Records))
			}
		}
	}
	if strings.Join(parts, " ") != "lagged-0:0 lagged-1:0" {
		t.Fatalf("the reader's kafka_lag: %v, want both partitions at 0", parts)
	}
}

// TestRemoteQuery: SELECTs streamed back through POST /api/v1/queries.
// Over the API, a bounded query's lines are its header (columns, result
// mode), one line per row and a last "end" line, and a SELECT that does
// not plan is a 400 with its line and column. Through `streamsql --server
// URL` as a shell, an unbounded query's changes print as they arrive in
// changelog mode, while another client's statements still run; Ctrl-C
// stops it ("Query canceled.") and the shell goes on with its next
// statement; in table mode an unbounded GROUP BY prints, at Ctrl-C, its
// table with the retractions applied.
func TestRemoteQuery(t *testing.T) {
	_, _, url := serve(t)

	// The lines of a bounded query.
	submitOK(t, url+"/api/v1/statements", `CREATE TABLE nums (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '3');`)
	resp, err := http.Post(url+"/api/v1/queries", "text/plain", strings.NewReader("SELECT n, n * 10 AS m FROM nums;"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" || len(lines) != 5 ||
		!strings.Contains(lines[0], `"columns":[{"name":"n"`) || !strings.Contains(lines[0], `"mode":"table"`) ||
		lines[1] != `{"op":"+I","row":["1","10"]}` || lines[3] != `{"op":"+I","row":["3","30"]}` || lines[4] != `{"end":true}` {
		t.Fatalf("POST /api/v1/queries: %d %s:\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	code, e := post(t, url+"/api/v1/queries", "SELECT\n  nosuch FROM nums;")
	if code != 400 || e["line"] != float64(2) || !strings.Contains(fmt.Sprint(e["error"]), "nosuch") {
		t.Fatalf("a SELECT that does not plan: %d %v", code, e)
	}

	// A shell whose statements are written as the test goes.
	sh := exec.Command(bin, "--server", url)
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out testenv.SyncBuffer
	sh.Stdout, sh.Stderr = &out, &out
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer sh.Process.Kill()
	io.WriteString(stdin, `CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000');
SET 'sql-client.execution.result-mode' = 'changelog';
SELECT id FROM src;
`)
	row := regexp.MustCompile(`(?m)^\| \+I \|\s+(\d+) \|$`)
	waitFor(t, "the unbounded query's rows to stream back", func() bool { return len(row.FindAllString(out.String(), -1)) >= 20 })
	// The query holds no lock: another client's statement runs meanwhile.
	if code, body := post(t, url+"/api/v1/statements", "SELECT 7 AS seven;"); code != 200 || !strings.Contains(fmt.Sprint(body), "7") {
		t.Fatalf("a statement while a query streams: %d %v", code, body)
	}
	sh.Process.Signal(os.Interrupt)
	waitFor(t, "the query canceled", func() bool { return strings.Contains(out.String(), "Query canceled.") })
	got := row.FindAllStringSubmatch(out.String(), -1)
	for i, m := range got {
		if m[1] != fmt.Sprint(i+1) {
			t.Fatalf("row %d of the changelog is id %s, want %d:\n%s", i+1, m[1], i+1, out.String())
		}
	}
	if !strings.Contains(out.String(), fmt.Sprintf("Received a total of %d rows\nQuery canceled.", len(got))) {
		t.Fatalf("the canceled query's end:\n%s", out.String())
	}

	// Table mode: the result of an updating query, as it was at Ctrl-C.
	// The mark is taken before the statements go out: the shell may answer
	// before this goroutine runs again.
	mark := len(out.String())
	io.WriteString(stdin, `SET 'sql-client.execution.result-mode' = 'table';
SELECT id % 3 AS k, COUNT(*) AS c FROM src GROUP BY id % 3;
`)
	waitFor(t, "the SET", func() bool { return strings.Contains(out.String()[mark:], "[INFO] Session property has been set.") })
	time.Sleep(2 * time.Second) // about 100 rows
	sh.Process.Signal(os.Interrupt)
	waitFor(t, "the GROUP BY canceled", func() bool { return strings.Contains(out.String()[mark:], "Query canceled.") })
	table := out.String()[mark:]
	counts := regexp.MustCompile(`(?m)^\| ([012]) \|\s+(\d+) \|$`).FindAllStringSubmatch(table, -1)
	if len(counts) != 3 || !strings.Contains(table, "3 rows in set\nQuery canceled.") {
		t.Fatalf("the GROUP BY's table at Ctrl-C: want one row per key 0, 1, 2:\n%s", table)
	}
	io.WriteString(stdin, "SELECT 40 + 2 AS answer;\n")
	stdin.Close()
	if err := sh.Wait(); err != nil || !regexp.MustCompile(`\| +42 \|`).MatchString(out.String()[mark:]) {
		t.Fatalf("the shell after the canceled queries: %v\n%s", err, out.String())
	}
}

// submitOK runs statements through POST /api/v1/statements and fails the
// test unless they succeed.
func submitOK(t *testing.T, url, statements string) {
	t.Helper()
	if code, body := post(t, url, statements); code != 200 {
		t.Fatalf("POST %s: %d %v", url, code, body)
	}
}
