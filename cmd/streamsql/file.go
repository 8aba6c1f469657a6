package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/connectors/print"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// While it waits for jobs, `streamsql -f` rewrites its progress line on a
// terminal every progressEveryTerminal, and elsewhere (a pipe, a log file)
// prints it as a line of its own every progressEvery.
const (
	progressEveryTerminal = 2 * time.Second
	progressEvery         = 10 * time.Second
)

// failurePoll is how often `streamsql -f` looks for failed jobs while it
// waits.
const failurePoll = 500 * time.Millisecond

// fileRun runs a file of statements (streamsql -f) on a session.
type fileRun struct {
	path   string
	sess   *session.Session
	out    io.Writer
	errOut io.Writer
	disp   display
	// progressEvery, when not 0, is how often progress is shown while
	// waiting for jobs: on status (stderr is a terminal), else as a line on
	// errOut.
	progressEvery time.Duration
	status        *statusLine
	// jobPos is where the statement that submitted each job starts,
	// guarded by mu: job events arrive from the jobs' goroutines.
	mu     sync.Mutex
	jobPos map[string]sql.Pos
	// signal is the signal that stopped the run, if one did.
	signal os.Signal
}

// runFile runs the statements of path in order and then waits for the jobs
// they started, printing every failure and restart of a job to stderr as
// it happens. It returns the exit code: 0 on success, or when SIGINT or
// SIGTERM stopped the run and every running job with a savepoint
// (--savepoint-on-stop); 1 when a statement or a job failed; 130 (SIGINT)
// or 143 (SIGTERM) when the signal cut a statement short or stopped jobs
// without a savepoint. progress shows the jobs' progress while waiting
// (--progress).
func runFile(sess *session.Session, path string, progress bool) int {
	f := newFileRun(sess, path, os.Stdout, os.Stderr)
	f.disp = stdoutDisplay()
	switch {
	case !progress:
	case !isTerminal(os.Stderr):
		f.progressEvery = progressEvery
	default:
		f.progressEvery = progressEveryTerminal
		f.status = &statusLine{w: os.Stderr}
		f.disp.out = f.status.wrap(os.Stdout)
		f.errOut = f.status.wrap(os.Stderr)
		restore := print.SetOutput(f.status.wrap(os.Stdout), f.status.wrap(os.Stderr))
		defer restore()
	}
	sess.OnJobEvent(f.jobEvent)
	defer sess.OnJobEvent(nil)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case sig := <-sigc:
			f.mu.Lock()
			f.signal = sig
			f.mu.Unlock()
			cancel()
		case <-ctx.Done():
		}
	}()
	return f.run(ctx)
}

func newFileRun(sess *session.Session, path string, out, errOut io.Writer) *fileRun {
	return &fileRun{path: path, sess: sess, out: out, errOut: errOut, disp: display{out: out},
		jobPos: map[string]sql.Pos{}}
}

// jobEvent prints a failure or restart of a job as it happens: where its
// statement is, the cause, and what happens next.
func (f *fileRun) jobEvent(ev session.JobEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.path + ": "
	if ev.Pos.Line > 0 {
		// (The event may come before runStatement noted the job's place.)
		f.jobPos[ev.ID] = ev.Pos
	}
	if pos, ok := f.jobPos[ev.ID]; ok {
		at = fmt.Sprintf("%s:%d:%d: ", f.path, pos.Line, pos.Col)
	}
	switch {
	case ev.Kind == session.JobWaiting && len(ev.Waiting) > 0:
		fmt.Fprintf(f.errOut, "[INFO] %sjob %s (%s) is running and waits: %s\n", at, ev.ID, ev.Name, strings.Join(ev.Waiting, "; "))
	case ev.Kind == session.JobWaiting:
		fmt.Fprintf(f.errOut, "[INFO] %sjob %s (%s) no longer waits: what it waited for exists now\n", at, ev.ID, ev.Name)
	case ev.Kind == session.JobRestarted && ev.Checkpoint > 0:
		fmt.Fprintf(f.errOut, "[INFO] %sjob %s (%s) restarted from checkpoint %d (restart %d)\n", at, ev.ID, ev.Name, ev.Checkpoint, ev.Restarts)
	case ev.Kind == session.JobRestarted:
		fmt.Fprintf(f.errOut, "[INFO] %sjob %s (%s) restarted from the start (restart %d, no checkpoint completed yet)\n", at, ev.ID, ev.Name, ev.Restarts)
	case ev.Final:
		// Printed once, where the run learns of it: the failed statement of
		// a synchronous INSERT, or reportJobs.
	default:
		repeated := ""
		if ev.Repeated > 1 {
			repeated = fmt.Sprintf("; the same failure %d times in a row, the job fails for good at %d", ev.Repeated, session.MaxRepeatedFailures)
		}
		fmt.Fprintf(f.errOut, "[WARN] %sjob %s (%s) failed: %v; restarting in %v (restart %d%s)\n",
			at, ev.ID, ev.Name, ev.Err, ev.Delay, ev.Restarts+1, repeated)
	}
}

// run reads, parses and runs the file. The whole file is parsed first, so
// a syntax error anywhere runs nothing.
func (f *fileRun) run(ctx context.Context) int {
	src, err := os.ReadFile(f.path)
	if err != nil {
		fmt.Fprintf(f.errOut, "[ERROR] %v\n", err)
		return 1
	}
	stmts, err := sql.Parse(string(src))
	if err != nil {
		f.printError(nil, err)
		return 1
	}
	for _, st := range stmts {
		if err := f.runStatement(ctx, st); err != nil {
			if ctx.Err() != nil {
				return f.interrupted(true)
			}
			f.printError(st, err)
			f.sess.StopJobs()
			return 1
		}
	}
	return f.waitJobs(ctx)
}

// runStatement runs one statement and prints its result. SELECTs stream
// (see runQuery).
func (f *fileRun) runStatement(ctx context.Context, st sql.Statement) error {
	if sel, ok := st.(*sql.Select); ok {
		return runQuery(ctx, f.sess, sel, f.disp)
	}
	r, err := f.sess.ExecuteStatement(ctx, st)
	if err != nil {
		return err
	}
	if r.JobID != "" {
		f.mu.Lock()
		f.jobPos[r.JobID] = st.Pos()
		f.mu.Unlock()
	}
	printResult(f.out, r)
	return nil
}

// waitJobs waits for every job to end, showing progress (progressEvery),
// and reports the jobs that failed. SIGINT or SIGTERM (ctx) stops them.
func (f *fileRun) waitJobs(ctx context.Context) int {
	stopProgress := func() {}
	if f.progressEvery > 0 && running(f.sess.Jobs()) > 0 {
		done, ended := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(ended)
			f.showProgress(done)
		}()
		stopProgress = func() {
			close(done)
			<-ended
			if f.status != nil {
				f.status.clear()
			}
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- f.sess.WaitJobs(context.Background()) }()
	poll := time.NewTicker(failurePoll)
	defer poll.Stop()
	for {
		select {
		case err := <-errc:
			stopProgress()
			return f.reportJobs(f.sess.Jobs(), err)
		case <-poll.C:
			if jobs := f.sess.Jobs(); failedJobs(jobs) > 0 {
				// One failure fails the run: stop the others rather than
				// wait for streams that may never end. (The jobs are
				// listed first: StopJobs marks every job CANCELED.)
				stopProgress()
				f.sess.StopJobs()
				return f.reportJobs(jobs, <-errc)
			}
		case <-ctx.Done():
			stopProgress()
			return f.interrupted(false)
		}
	}
}

// reportJobs prints the failed jobs (err is what WaitJobs returned) and
// returns the exit code.
func (f *fileRun) reportJobs(jobs []session.JobInfo, err error) int {
	failed := false
	for _, j := range jobs {
		if j.Status == "FAILED" {
			failed = true
			f.mu.Lock()
			fmt.Fprintf(f.errOut, "[ERROR] %s\n", f.jobErrorText(j))
			f.mu.Unlock()
		}
	}
	if err != nil && !failed {
		fmt.Fprintf(f.errOut, "[ERROR] %s: %v\n", f.path, err)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

func failedJobs(jobs []session.JobInfo) int {
	n := 0
	for _, j := range jobs {
		if j.Status == "FAILED" {
			n++
		}
	}
	return n
}

// showProgress shows the jobs' progress every progressEvery until done:
// it rewrites the status line on a terminal, else prints a line.
func (f *fileRun) showProgress(done <-chan struct{}) {
	tick := time.NewTicker(f.progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			text := progress(f.sess.Jobs())
			if f.status != nil {
				f.status.show(text)
				continue
			}
			f.mu.Lock() // not inside a job event's line
			fmt.Fprintln(f.errOut, text)
			f.mu.Unlock()
		}
	}
}

// progress is the progress line for a set of jobs, from the counters SHOW
// JOBS shows (session.Session.Jobs).
func progress(jobs []session.JobInfo) string {
	var in, out int64
	for _, j := range jobs {
		in += j.RecordsIn
		out += j.RecOut
	}
	return fmt.Sprintf("[INFO] %d of %d jobs running, %d records in, %d records out (Ctrl-C stops them)",
		running(jobs), len(jobs), in, out)
}

func running(jobs []session.JobInfo) int {
	n := 0
	for _, j := range jobs {
		if j.Status == "RUNNING" {
			n++
		}
	}
	return n
}

// interrupted stops the jobs after SIGINT or SIGTERM. inStatement says the
// signal cut a statement short. Stopping every running job with a
// savepoint (--savepoint-on-stop) is how a streaming file ends cleanly
// (exit code 0); otherwise the exit code is the signal's, 128 + its number,
// as a shell reports a process the signal ended, and says what was lost.
func (f *fileRun) interrupted(inStatement bool) int {
	jobs := f.sess.Jobs()
	n := running(jobs) + restarting(jobs)
	if n > 0 {
		fmt.Fprintf(f.errOut, "[INFO] Stopping %d running jobs...\n", n)
	}
	clean := !inStatement
	if n > 0 {
		clean = false
		if f.sess.Settings().SavepointOnStop {
			paths, err := f.sess.StopJobsWithSavepoint(context.Background())
			for _, p := range paths {
				fmt.Fprintf(f.errOut, "[INFO] Savepoint written: %s\n", p)
			}
			if err != nil {
				fmt.Fprintf(f.errOut, "[ERROR] %v\n", err)
			}
			clean = err == nil && !inStatement
		}
	}
	f.sess.StopJobs()
	code := 0
	if !clean {
		code = 130
		f.mu.Lock()
		if f.signal == syscall.SIGTERM {
			code = 143
		}
		f.mu.Unlock()
		switch {
		case n > 0:
			fmt.Fprintf(f.errOut, "[INFO] Stopped without a savepoint (exit code %d; --savepoint-on-stop stops jobs with one).\n", code)
		default:
			fmt.Fprintf(f.errOut, "[INFO] Stopped while a statement ran (exit code %d).\n", code)
		}
		return code
	}
	fmt.Fprintln(f.errOut, "[INFO] Stopped.")
	return code
}

func restarting(jobs []session.JobInfo) int {
	n := 0
	for _, j := range jobs {
		if j.Status == "RESTARTING" {
			n++
		}
	}
	return n
}

// printError prints a statement's error as "[ERROR] file:line:col: msg
// (hint)". st is the statement that failed, nil for a parse error.
func (f *fileRun) printError(st sql.Statement, err error) {
	fmt.Fprintf(f.errOut, "[ERROR] %s\n", fileError(f.path, st, err))
}

// jobErrorText is a failed job's error placed at the statement that
// submitted it (f.mu held).
func (f *fileRun) jobErrorText(j session.JobInfo) string {
	var se *sql.Error
	msg := fmt.Sprintf("job %s (%s) failed: %v", j.ID, j.Name, j.Err)
	if errors.As(j.Err, &se) && se.Pos.Line > 0 {
		msg = fmt.Sprintf("%s:%d:%d: job %s (%s) failed: %s", f.path, se.Pos.Line, se.Pos.Col, j.ID, j.Name, withoutPos(j.Err, se))
	} else if pos, ok := f.jobPos[j.ID]; ok {
		msg = fmt.Sprintf("%s:%d:%d: %s", f.path, pos.Line, pos.Col, msg)
	} else {
		msg = f.path + ": " + msg
	}
	return msg
}

// fileError places err in the file: an *sql.Error at its own line and
// column, any other error at the start of st (if known).
func fileError(path string, st sql.Statement, err error) string {
	var se *sql.Error
	if errors.As(err, &se) && se.Pos.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", path, se.Pos.Line, se.Pos.Col, withoutPos(err, se))
	}
	if st != nil {
		return fmt.Sprintf("%s:%d:%d: %v", path, st.Pos().Line, st.Pos().Col, err)
	}
	return fmt.Sprintf("%s: %v", path, err)
}

// withoutPos is the text of err, which wraps se (or is se), with se's
// "line L:C: " prefix left out: the caller prints the position its own way.
func withoutPos(err error, se *sql.Error) string {
	text := se.Msg
	if se.Hint != "" {
		text += " (" + se.Hint + ")"
	}
	return strings.Replace(err.Error(), se.Error(), text, 1)
}
