package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// ErrNoSuchJob is returned for a job id the session does not know.
var ErrNoSuchJob = errors.New("no such job")

// JobInfo describes a submitted job.
type JobInfo struct {
	ID, Name, Status  string
	Start             time.Time
	Duration          time.Duration
	RecordsIn, RecOut int64
	// Skipped counts bad records skipped ('json.ignore-parse-errors');
	// Late the records dropped for arriving behind the watermark;
	// LateRouted those written to the late-records table instead
	// ('table.exec.late-records.table').
	Skipped, Late, LateRouted int64
	// OpenWindows and WindowGroups are the state of the running attempt's
	// window aggregations (exec.Metrics): windows not fired yet, and their
	// (window, key) groups.
	OpenWindows, WindowGroups int64
	// Watermark is the event time the job's output has reached
	// (exec.Metrics.Watermark; exec.NoWatermark when there is none).
	Watermark int64
	Restarts  int
	// RestoredFrom is the checkpoint the job started from (0: fresh).
	RestoredFrom int64
	// Checkpoints are the statistics of its checkpoints (zero without).
	Checkpoints checkpoint.Stats
	Err         error
}

// jobEntry is one submitted job: a supervisor goroutine runs attempts of it
// (exec.Jobs), restarting from the latest completed checkpoint as the
// restart strategy allows.
type jobEntry struct {
	id, name string
	start    time.Time
	done     chan struct{}
	// stopping is closed by stop: it ends a wait before a restart.
	stopping  chan struct{}
	closeStop sync.Once

	mu       sync.Mutex
	cur      *exec.Job
	stopped  bool
	restarts int
	restored int64
	in, out  int64 // records of finished attempts
	skipped  int64
	late     int64
	routed   int64
	// watermark is the last ended attempt's (exec.Metrics.Watermark).
	watermark int64
	lastStats checkpoint.Stats
	end       time.Time
	err       error
}

func (e *jobEntry) attempt() *exec.Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// stop cancels the job and waits for its supervisor to end.
func (e *jobEntry) stop() {
	select {
	case <-e.done:
		return // already ended: keep its outcome
	default:
	}
	e.mu.Lock()
	e.stopped = true
	cur := e.cur
	e.mu.Unlock()
	e.closeStop.Do(func() { close(e.stopping) })
	if cur != nil {
		cur.Cancel()
	}
	<-e.done
}

func (e *jobEntry) info() JobInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := JobInfo{ID: e.id, Name: e.name, Start: e.start, Restarts: e.restarts, RestoredFrom: e.restored,
		RecordsIn: e.in, RecOut: e.out, Skipped: e.skipped, Late: e.late, LateRouted: e.routed, Checkpoints: e.lastStats,
		Watermark: e.watermark}
	if e.cur != nil {
		m := e.cur.Metrics()
		info.RecordsIn += m.RecordsIn
		info.RecOut += m.RecordsOut
		info.Skipped += m.Skipped
		info.Late += m.LateRecords
		info.LateRouted += m.LateRouted
		info.OpenWindows, info.WindowGroups = m.OpenWindows, m.WindowGroups
		info.Watermark = m.Watermark
		if c := e.cur.Coordinator(); c != nil {
			st := c.Stats()
			if st.LastID != 0 {
				info.Checkpoints.LastID, info.Checkpoints.LastCompleted = st.LastID, st.LastCompleted
				info.Checkpoints.LastDuration, info.Checkpoints.LastSize, info.Checkpoints.LastIncremental = st.LastDuration, st.LastSize, st.LastIncremental
			}
			info.Checkpoints.Completed += st.Completed
			info.Checkpoints.Failed += st.Failed
		}
	}
	select {
	case <-e.done:
		switch {
		case e.stopped || errors.Is(e.err, exec.ErrStopped):
			info.Status = "CANCELED"
		case e.err != nil:
			info.Status, info.Err = "FAILED", e.err
		default:
			info.Status = "FINISHED"
		}
		info.Duration = e.end.Sub(e.start)
	default:
		info.Status = "RUNNING"
		if e.restarts > 0 && e.cur == nil {
			info.Status = "RESTARTING"
		}
		info.Duration = time.Since(e.start)
	}
	return info
}

type jobRegistry struct {
	mu   sync.Mutex
	jobs []*jobEntry
}

func newJobRegistry() *jobRegistry { return &jobRegistry{} }

func (r *jobRegistry) add(e *jobEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, e)
}

func (r *jobRegistry) all() []*jobEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*jobEntry(nil), r.jobs...)
}

func (r *jobRegistry) find(id string) *jobEntry {
	for _, e := range r.all() {
		if e.id == id || e.name == id {
			return e
		}
	}
	return nil
}

func (r *jobRegistry) stopAll() {
	for _, e := range r.all() {
		e.stop()
	}
}

func (r *jobRegistry) table() *Result {
	res := &Result{Kind: ResultRows, Columns: types.Schema{
		{Name: "job id", Type: types.StringType}, {Name: "job name", Type: types.StringType},
		{Name: "status", Type: types.StringType}, {Name: "start time", Type: types.StringType},
		{Name: "duration", Type: types.StringType}, {Name: "restarts", Type: types.BigIntType},
		{Name: "last checkpoint", Type: types.StringType},
		{Name: "records in", Type: types.BigIntType}, {Name: "records out", Type: types.BigIntType},
		{Name: "skipped", Type: types.BigIntType}, {Name: "late dropped", Type: types.BigIntType},
		{Name: "late routed", Type: types.BigIntType}, {Name: "watermark", Type: types.StringType},
		{Name: "error", Type: types.StringType},
	}}
	for _, e := range r.all() {
		j := e.info()
		var errText, cp any
		if j.Err != nil {
			errText = j.Err.Error()
		}
		if c := j.Checkpoints; c.LastID > 0 {
			cp = fmt.Sprintf("#%d %s ago, took %s, %s (%s incremental)", c.LastID,
				time.Since(c.LastCompleted).Round(time.Second), c.LastDuration.Round(time.Millisecond),
				byteSize(c.LastSize), byteSize(c.LastIncremental))
		}
		res.Rows = append(res.Rows, []types.Value{j.ID, j.Name, j.Status, j.Start.Format("2006-01-02 15:04:05"),
			j.Duration.Round(time.Millisecond).String(), int64(j.Restarts), cp, j.RecordsIn, j.RecOut, j.Skipped, j.Late, j.LateRouted,
			watermarkText(j.Watermark), errText})
	}
	return res
}

// watermarkText shows a job's watermark: a UTC time, "end of input", or
// NULL when its output has none (no event time, or none yet).
func watermarkText(wm int64) types.Value {
	switch wm {
	case exec.NoWatermark:
		return nil
	case math.MaxInt64:
		return "end of input"
	}
	return time.UnixMicro(wm).UTC().Format("2006-01-02 15:04:05.000")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Jobs lists the session's jobs.
func (s *Session) Jobs() []JobInfo {
	var out []JobInfo
	for _, e := range s.jobs.all() {
		out = append(out, e.info())
	}
	return out
}

// WaitJobs waits until every job submitted so far has ended and returns the
// first failure. If ctx ends first, the running jobs are stopped.
func (s *Session) WaitJobs(ctx context.Context) error {
	var first error
	for _, e := range s.jobs.all() {
		select {
		case <-e.done:
		case <-ctx.Done():
			s.jobs.stopAll()
			return ctx.Err()
		}
		e.mu.Lock()
		err := e.err
		e.mu.Unlock()
		if err != nil && !errors.Is(err, exec.ErrStopped) && first == nil {
			first = fmt.Errorf("job %s (%s) failed: %w", e.id, e.name, err)
		}
	}
	return first
}

// StopJobs stops every running job.
func (s *Session) StopJobs() { s.jobs.stopAll() }

// StopJobsWithSavepoint takes a savepoint of every running job that has
// checkpointing, then stops it. It returns the savepoint paths.
func (s *Session) StopJobsWithSavepoint(ctx context.Context) ([]string, error) {
	var paths []string
	var first error
	for _, e := range s.jobs.all() {
		select {
		case <-e.done:
			continue
		default:
		}
		p, err := s.savepointAndStop(ctx, e)
		if err != nil && first == nil {
			first = err
		}
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, first
}

func (s *Session) savepointAndStop(ctx context.Context, e *jobEntry) (string, error) {
	cur := e.attempt()
	if cur == nil || cur.Coordinator() == nil {
		e.stop()
		return "", fmt.Errorf("job %s (%s) has no checkpointing ('%s' is not set): stopped without a savepoint", e.id, e.name, checkpoint.KeyInterval)
	}
	md, err := cur.Coordinator().StopWithSavepoint(ctx)
	if err != nil {
		return "", fmt.Errorf("savepoint of job %s failed (the job keeps running): %w", e.id, err)
	}
	// The sinks commit what the savepoint covers before the job stops, so
	// its output is visible even if the savepoint is never restored.
	if err := cur.WaitCommitted(ctx, md.ID); err != nil {
		return "", fmt.Errorf("job %s: %w", e.id, err)
	}
	root := s.Option(OptSavepointDir)
	if root == "" {
		root = s.path("savepoints")
	}
	path, err := checkpoint.WriteSavepoint(md, root)
	if err != nil {
		return "", err
	}
	e.stop()
	return path, nil
}

func newJobID(name string, start time.Time) string {
	h := uint32(2166136261)
	for _, c := range []byte(fmt.Sprintf("%s/%d", name, start.UnixNano())) {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

// jobName is 'pipeline.name' or one derived from the sink tables.
func (s *Session) jobName(tables []string) string {
	if n := s.Option(OptPipelineName); n != "" {
		return n
	}
	return "insert-into_" + strings.Join(tables, ",")
}
