package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ScreenshotEnv names the environment variable that, set to a path,
// makes TestWebUI save a PNG of a job's page there (docs/ui.png is one;
// a relative path is relative to tests/server).
const ScreenshotEnv = "STREAMSQL_UI_SCREENSHOT"

// chromium is the headless browser the web UI is tested in: Debian's
// chromium, which test.sh installs. Without it the test fails.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: the web UI is tested in headless Chromium (test.sh installs it: apt-get install chromium)")
	return ""
}

// pageProblems collects what the page must never do: log an error to the
// console, throw an uncaught exception (or reject a promise unhandled),
// have the browser log an error (a failed load, a Content-Security-Policy
// violation), or send a request anywhere but to the server.
type pageProblems struct {
	origin string
	mu     sync.Mutex
	list   []string
}

func (p *pageProblems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *pageProblems) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			p.add("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		what := d.Text
		if d.Exception != nil {
			what += " " + d.Exception.Description
		}
		p.add("uncaught exception at %s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, what)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			p.add("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; !strings.HasPrefix(u, p.origin+"/") {
			p.add("request outside the server: %s", u)
		}
	}
}

func (p *pageProblems) check(t *testing.T, when string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.list) > 0 {
		t.Fatalf("%s, the page had problems:\n%s", when, strings.Join(p.list, "\n"))
	}
}

// TestWebUI opens the web UI of a server running two datagen jobs in
// headless Chromium: the jobs are listed, a job's page draws one graph
// node per operator of its plan and one edge per input, its records-in
// count grows between two reads, the checkpoint chart has bars, and its
// stop buttons stop the jobs (without and with a savepoint), as the API
// then reports; all without a console error, an uncaught exception or a
// request to anywhere but the server.
func TestWebUI(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	origin := "http://" + addr
	api := origin + "/api/v1"
	srv := startServer(t, dir, addr)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()

	// Two jobs: a keyed aggregation with event time (five operators, a
	// hash edge, watermarks, latency markers) and a plain copy.
	code, body := post(t, api+"/statements", `
CREATE TABLE src (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector'='datagen', 'rows-per-second'='2000');
CREATE TABLE counts (k BIGINT, n BIGINT) WITH ('connector'='blackhole');
CREATE TABLE copy (id BIGINT) WITH ('connector'='blackhole');
SET 'execution.checkpointing.interval' = '500ms';
SET 'pipeline.name' = 'counts-by-key';
SET 'metrics.latency.interval' = '20 ms';
INSERT INTO counts SELECT id % 8, COUNT(*) FROM src GROUP BY id % 8;
RESET 'metrics.latency.interval';
SET 'pipeline.name' = 'copy';
INSERT INTO copy SELECT id FROM src;
`)
	if code != 200 {
		t.Fatalf("submitting the jobs: %d %v", code, body)
	}
	var ids []string
	for _, r := range body["results"].([]any) {
		if id, ok := r.(map[string]any)["job_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("want 2 job ids: %v", body)
	}
	jobID, copyID := ids[0], ids[1]
	var jobs jobsResponse
	waitFor(t, "the jobs to read rows", func() bool {
		getJSON(t, api+"/jobs", &jobs)
		running := 0
		for _, j := range jobs.Jobs {
			if j.Status == "RUNNING" && j.RecordsIn > 0 {
				running++
			}
		}
		return running == 2
	})
	var detail struct {
		Plan struct {
			Operators []struct {
				ID     string
				Inputs []struct{ From string }
			}
		}
	}
	getJSON(t, api+"/jobs/"+jobID, &detail)
	var opIDs []string
	edges := 0
	for _, o := range detail.Plan.Operators {
		opIDs = append(opIDs, o.ID)
		edges += len(o.Inputs)
	}
	if len(opIDs) < 4 {
		t.Fatalf("the aggregation's plan has only %d operators: %+v", len(opIDs), detail)
	}

	start := time.Now()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser),
		// The pages are the server's own on loopback; the sandbox cannot
		// run as root or in most containers.
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // starts the browser, without a timeout
		t.Fatalf("starting %s: %v", browser, err)
	}
	problems := &pageProblems{origin: origin}
	if err := chromedp.Listen(bctx, problems.listen); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// poll evaluates a JavaScript expression until it is true.
	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}

	// The job list.
	run("opening /", chromedp.Navigate(origin+"/"))
	for _, id := range ids {
		poll("job "+id+" in the list", fmt.Sprintf(`document.querySelector('#jobs tr[data-job-id="%s"][data-status="RUNNING"]') !== null`, id))
	}
	name := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('#jobs tr[data-job-id="%s"] a').textContent`, jobID))
	if name != "counts-by-key" {
		t.Fatalf("the list names job %s %q", jobID, name)
	}
	problems.check(t, "on the job list")

	// The job's page, from its link in the list.
	run("opening the job", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#jobs tr[data-job-id="%s"] a`, jobID))))
	poll("the job's graph", fmt.Sprintf(`document.querySelectorAll('#graph g.op').length === %d`, len(opIDs)))
	drawn := eval[[]string](t, ctx, `[...document.querySelectorAll('#graph g.op')].map(g => g.dataset.opId)`)
	if !sameSet(drawn, opIDs) {
		t.Fatalf("graph nodes %v, plan operators %v", drawn, opIDs)
	}
	if edgeCount := eval[int](t, ctx, `document.querySelectorAll('#graph path.edge').length`); edgeCount != edges {
		t.Fatalf("graph has %d edges, the plan %d inputs", edgeCount, edges)
	}

	// A live count: the job's records in, read twice.
	readCount := func() int64 {
		s := eval[string](t, ctx, `document.getElementById('records-in').dataset.value || ''`)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("records in on the page: %q", s)
		}
		return n
	}
	poll("the records-in count", `/^[0-9]+$/.test(document.getElementById('records-in').dataset.value || '')`)
	first := readCount()
	deadline := time.Now().Add(30 * time.Second)
	second := readCount()
	for second <= first && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		second = readCount()
	}
	if second <= first {
		t.Fatalf("records in on the page stayed at %d", first)
	}
	// Rates need two polls; the source's node then shows its rate, and the
	// checkpoint chart its bars.
	poll("a rate on the source's node", fmt.Sprintf(
		`/out [0-9]/.test(document.querySelector('#graph g.op[data-op-id="%s"] .op-rates').textContent)`, opIDs[0]))
	poll("checkpoints in the chart", `document.querySelectorAll('#checkpoint-chart g.bars rect').length > 0`)
	// The operator table shows the latency markers' ages (p50 / p99) on
	// the operators after the source, a dash on the source.
	poll("latency on the sink's row", fmt.Sprintf(
		`/ \/ /.test(document.querySelector('#operators tr[data-op-id="%s"] td:last-child').textContent)`, opIDs[len(opIDs)-1]))
	if got := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('#operators tr[data-op-id="%s"] td:last-child').textContent`, opIDs[0])); got != "–" {
		t.Errorf("latency on the source's row: %q, want –", got)
	}
	problems.check(t, "on the job's page")

	if path := os.Getenv(ScreenshotEnv); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("taking a screenshot: %v", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of the job's page: %s (%d bytes)", path, len(png))
	}

	// Stop, after the confirmation: the page and the API say CANCELED, or
	// FINISHED after a savepoint (as Flink's job stopped with a savepoint).
	stop := func(id, button, want string) {
		t.Helper()
		run("opening job "+id, chromedp.Navigate(origin+"/#/jobs/"+id))
		poll("job "+id+"'s page", fmt.Sprintf(`document.getElementById('job-id').textContent === %q &&
			document.getElementById('job-status').dataset.value === 'RUNNING' && !document.getElementById('%s').disabled`, id, button))
		run("clicking "+button, chromedp.Click(chromedp.ID(button)),
			chromedp.WaitVisible(chromedp.ID("confirm-yes")),
			chromedp.Click(chromedp.ID("confirm-yes")))
		poll("job "+id+" stopped on the page", fmt.Sprintf(`document.getElementById('job-status').dataset.value === %q`, want))
		var job struct{ Job struct{ Status string } }
		if code := getJSON(t, api+"/jobs/"+id, &job); code != 200 || job.Job.Status != want {
			t.Fatalf("after the stop button, the API says %d %+v", code, job)
		}
	}
	stop(jobID, "stop", "CANCELED")
	stop(copyID, "stop-savepoint", "FINISHED")
	note := eval[string](t, ctx, `document.getElementById('action-result').textContent`)
	if !strings.Contains(note, "savepoint "+dir) {
		t.Fatalf("after a stop with savepoint the page says %q", note)
	}
	problems.check(t, "after the stops")
	t.Logf("in Chromium for %v", time.Since(start).Round(time.Millisecond))
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
