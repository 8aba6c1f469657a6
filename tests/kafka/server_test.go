package kafka

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// serverRows are the clicks of TestServerKilled.
const serverRows = idRows

// serverKills is how many times TestServerKilled kills the server at a
// random moment.
const serverKills = 6

// TestServerKilled runs the exactly-once count of TestUpsertCounts in
// `streamsql server`, submitted through POST /api/v1/statements, and
// kills the server with SIGKILL: at each failpoint of the checkpoint
// protocol, during a restore, and at random moments (from the process's
// start: while it resumes its jobs, or while the job runs). Each time a
// new server is started on the same data dir, and must resume the job
// from the newest completed checkpoint by itself (its log says "job
// resumed ... from=checkpoint checkpoint=N"); the last one runs it to the
// end, and the API reports it FINISHED. Then the last committed value of
// each key of pv must be the true count.
func TestServerKilled(t *testing.T) {
	forEachProtocol(t, partitions, []string{"clicks", "pv"}, func(t *testing.T, b *broker) {
		rng := testenv.NewRand(t, seed, seedEnv)
		c := writeClicks(t, t.TempDir(), serverRows, apps)
		produceFile(t, b, "clicks", c.file, true, -1)
		r := newJobRun(t, b, jobSpec{name: "pv", kind: upsertCounts, guarantee: "exactly-once", out: "pv", sets: []string{parallel2}})
		s := &serverRun{jobRun: r}
		s.killEverywhere(rng)
		checkCounts(t, b, "pv", c)
	})
}

// serverRun is a jobRun whose runs are `streamsql server` processes on
// its data dir, the job submitted once through the REST API.
type serverRun struct {
	*jobRun
	// job is the id of the job the first server was given.
	job string
}

// serverProc is one run of the server.
type serverProc struct {
	*proc
	addr string // its API's host:port
}

func (s *serverRun) api(p *serverProc, path string) string {
	return "http://" + p.addr + "/api/v1" + path
}

// startServer starts `streamsql server` on the run's data dir and a free
// port, with the extra environment env.
func (s *serverRun) startServer(env []string) *serverProc {
	s.t.Helper()
	s.runs++
	s.b.alive(s.t)
	port, err := freePort()
	if err != nil {
		s.t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p := &serverProc{proc: &proc{Proc: testenv.StartProc(s.t, runTimeout, env, binary,
		"server", "--data-dir", s.dataDir, "--http", addr)}, addr: addr}
	p.watchCheckpoints(s.dataDir, s.spec.name, s.latest())
	return p
}

// healthy waits until the server answers /healthz, and reports false if it
// exits first.
func (s *serverRun) healthy(p *serverProc) bool {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-p.Done():
			return false
		default:
		}
		if resp, err := http.Get("http://" + p.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("run %d: the server does not answer /healthz after a minute; output:\n%s", s.runs, p.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// submit sends the job file to the server's POST /api/v1/statements and
// returns the id of the job it submitted.
func (s *serverRun) submit(p *serverProc) string {
	s.t.Helper()
	data, err := os.ReadFile(s.file)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.Post(s.api(p, "/statements"), "text/plain", strings.NewReader(string(data)))
	if err != nil {
		s.t.Fatalf("POST /api/v1/statements: %v; output:\n%s", err, p.Output())
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		Results []struct {
			Kind  string `json:"kind"`
			JobID string `json:"job_id"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("POST /api/v1/statements: %d %v: %s", resp.StatusCode, err, body)
	}
	for _, r := range out.Results {
		if r.JobID != "" {
			return r.JobID
		}
	}
	s.t.Fatalf("POST /api/v1/statements submitted no job: %s", body)
	return ""
}

// jobStatus is the status of the server's one job as GET /api/v1/jobs
// says it ("" if it lists none).
func (s *serverRun) jobStatus(p *serverProc) (id, status string) {
	s.t.Helper()
	resp, err := http.Get(s.api(p, "/jobs"))
	if err != nil {
		s.t.Fatalf("GET /api/v1/jobs: %v; output:\n%s", err, p.Output())
	}
	defer resp.Body.Close()
	var out struct {
		Jobs []struct{ ID, Name, Status string } `json:"jobs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		s.t.Fatalf("GET /api/v1/jobs: %v", err)
	}
	for _, j := range out.Jobs {
		if j.Name == s.spec.name {
			return j.ID, j.Status
		}
	}
	return "", ""
}

var resumedRE = regexp.MustCompile(`msg="job resumed" .*name=(\S+) .*from=(\S+)(?: checkpoint=(\d+))?`)

// resumedFrom reads the server's log for the job's resumption: whether it
// was resumed, and from which checkpoint (0: from the start).
func resumedFrom(out, job string) (resumed bool, checkpoint int64) {
	for _, m := range resumedRE.FindAllStringSubmatch(out, -1) {
		if m[1] != job {
			continue
		}
		if m[2] == "checkpoint" {
			n, _ := strconv.ParseInt(m[3], 10, 64)
			return true, n
		}
		return true, 0
	}
	return false, 0
}

// expectServerResumed checks that a server that got as far as resuming the
// job resumed it from want, the newest completed checkpoint before the run.
func (s *serverRun) expectServerResumed(p *serverProc, want int64) string {
	s.t.Helper()
	resumed, got := resumedFrom(p.Output(), s.spec.name)
	switch {
	case !resumed:
		return "killed before it resumed the job"
	case got != want:
		s.t.Errorf("run %d: want the job resumed from checkpoint %d (the newest completed one), got %d; output:\n%s", s.runs, want, got, p.Output())
	}
	if got == 0 {
		return "resumed the job from the start"
	}
	return fmt.Sprintf("resumed the job from checkpoint %d", got)
}

// first starts the first server, submits the job through the API and
// kills the server at a random moment after the submission.
func (s *serverRun) first(rng *rand.Rand) {
	s.t.Helper()
	p := s.startServer([]string{"STREAMSQL_FAILPOINT=" + holdAtEnd})
	if !s.healthy(p) {
		s.t.Fatalf("run %d: the server exited: %v; output:\n%s", s.runs, p.Err, p.Output())
	}
	s.job = s.submit(p)
	if id, status := s.jobStatus(p); id != s.job || status != "RUNNING" {
		s.t.Fatalf("run %d: after the submission GET /api/v1/jobs lists job %q %s, want %s RUNNING", s.runs, id, status, s.job)
	}
	d := s.killDelay(rng)
	if !p.KillAfter(time.Since(p.Start) + d) {
		s.t.Fatalf("run %d: the server exited before the kill: %v; output:\n%s", s.runs, p.Err, p.Output())
	}
	s.t.Logf("run %d: job %s submitted through POST /api/v1/statements; SIGKILL %v later (%s); newest checkpoint now %d, %.0f%% of the input committed",
		s.runs, s.job, d.Round(time.Millisecond), s.ended(p.proc), s.latest(), 100*s.progress())
}

// failpointKill starts a server with a failpoint armed and checks that
// the failpoint killed it.
func (s *serverRun) failpointKill(spec string) {
	s.t.Helper()
	want := s.latest()
	p := s.startServer([]string{"STREAMSQL_FAILPOINT=" + spec + "," + holdAtEnd})
	err := p.Wait()
	name, _, _ := strings.Cut(spec, "@")
	if !testenv.KilledBySignal(err, syscall.SIGKILL) || !strings.Contains(p.Output(), "failpoint "+name+": killing the process") {
		s.t.Fatalf("run %d with STREAMSQL_FAILPOINT=%s: want the failpoint to kill the server, got %v; output:\n%s", s.runs, spec, err, p.Output())
	}
	how := s.expectServerResumed(p, want)
	s.t.Logf("run %d: %s; killed by failpoint %s after %v (%s); newest checkpoint now %d, %.0f%% of the input committed",
		s.runs, how, spec, p.Took(), s.ended(p.proc), s.latest(), 100*s.progress())
}

// randomKill starts a server and kills it d after its start.
func (s *serverRun) randomKill(d time.Duration) {
	s.t.Helper()
	want := s.latest()
	p := s.startServer([]string{"STREAMSQL_FAILPOINT=" + holdAtEnd})
	if !p.KillAfter(d) {
		s.t.Fatalf("run %d: the server exited before the kill at %v: %v; output:\n%s", s.runs, d, p.Err, p.Output())
	}
	how := s.expectServerResumed(p, want)
	s.t.Logf("run %d: %s; SIGKILL at %v (%s); newest checkpoint now %d, %.0f%% of the input committed",
		s.runs, how, d.Round(time.Millisecond), s.ended(p.proc), s.latest(), 100*s.progress())
}

// finish starts a last server, which resumes the job and runs it to its
// end: the API reports it FINISHED, the registry of running jobs is empty
// and SIGTERM stops the server with status 0.
func (s *serverRun) finish() {
	s.t.Helper()
	want := s.latest()
	p := s.startServer(nil)
	if !s.healthy(p) {
		s.t.Fatalf("last run %d: the server exited: %v; output:\n%s", s.runs, p.Err, p.Output())
	}
	how := s.expectServerResumed(p, want)
	deadline := time.Now().Add(runTimeout)
	for {
		id, status := s.jobStatus(p)
		if status == "FINISHED" {
			break
		}
		if id == "" || status == "FAILED" || status == "CANCELED" || time.Now().After(deadline) {
			s.t.Fatalf("last run %d: the resumed job is %q %s, want it to finish; output:\n%s", s.runs, id, status, p.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(p.Start).Round(time.Millisecond)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		s.t.Fatalf("last run %d: SIGTERM: %v; output:\n%s", s.runs, err, p.Output())
	}
	if data, err := os.ReadFile(filepath.Join(s.dataDir, "server", "jobs.json")); err != nil || strings.TrimSpace(string(data)) != "[]" {
		s.t.Errorf("the finished job is still recorded to be resumed: %v %s", err, data)
	}
	s.t.Logf("run %d: %s; the job finished %v after the server's start", s.runs, how, took)
}

// killEverywhere submits the job to a first server and kills it, then
// kills the servers that resume it at each failpoint of the checkpoint
// protocol, during a restore and serverKills times at random moments; a
// last server runs it to the end.
func (s *serverRun) killEverywhere(rng *rand.Rand) {
	s.t.Helper()
	start := time.Now()
	s.first(rng)
	for _, fp := range failpoints {
		s.failpointKill(fp)
	}
	if s.latest() == 0 {
		s.t.Fatalf("no completed checkpoint after the failpoint runs: the during-restore kill needs one")
	}
	s.failpointKill("during-restore")
	for i := 0; i < serverKills; i++ {
		s.randomKill(s.killDelay(rng))
	}
	s.finish()
	s.t.Logf("%d servers (%d random kills) took %v", s.runs, serverKills+1, time.Since(start).Round(time.Millisecond))
}
