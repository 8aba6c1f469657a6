package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
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
	Err               error
}

type jobEntry struct {
	id, name string
	job      *exec.Job
	start    time.Time
	stopped  bool
	end      time.Time
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

func (r *jobRegistry) find(id string) *jobEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.jobs {
		if e.id == id || e.name == id {
			return e
		}
	}
	return nil
}

func (r *jobRegistry) stop(id string) error {
	e := r.find(id)
	if e == nil {
		return fmt.Errorf("%w '%s'", ErrNoSuchJob, id)
	}
	r.mu.Lock()
	e.stopped = true
	r.mu.Unlock()
	e.job.Cancel()
	e.job.Wait()
	return nil
}

func (r *jobRegistry) stopAll() {
	r.mu.Lock()
	jobs := append([]*jobEntry(nil), r.jobs...)
	r.mu.Unlock()
	for _, e := range jobs {
		r.mu.Lock()
		e.stopped = true
		r.mu.Unlock()
		e.job.Cancel()
		e.job.Wait()
	}
}

func (r *jobRegistry) infos() []JobInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []JobInfo
	for _, e := range r.jobs {
		m := e.job.Metrics()
		info := JobInfo{ID: e.id, Name: e.name, Start: e.start, RecordsIn: m.RecordsIn, RecOut: m.RecordsOut}
		select {
		case <-e.job.Done():
			err := e.job.Err()
			switch {
			case e.stopped || errors.Is(err, exec.ErrStopped):
				info.Status = "CANCELED"
			case err != nil:
				info.Status, info.Err = "FAILED", err
			default:
				info.Status = "FINISHED"
			}
			if e.end.IsZero() {
				e.end = time.Now()
			}
			info.Duration = e.end.Sub(e.start)
		default:
			info.Status = "RUNNING"
			info.Duration = time.Since(e.start)
		}
		out = append(out, info)
	}
	return out
}

func (r *jobRegistry) table() *Result {
	res := &Result{Kind: ResultRows, Columns: types.Schema{
		{Name: "job id", Type: types.StringType}, {Name: "job name", Type: types.StringType},
		{Name: "status", Type: types.StringType}, {Name: "start time", Type: types.StringType},
		{Name: "duration", Type: types.StringType}, {Name: "records in", Type: types.BigIntType},
		{Name: "records out", Type: types.BigIntType}, {Name: "error", Type: types.StringType},
	}}
	for _, j := range r.infos() {
		var errText any
		if j.Err != nil {
			errText = j.Err.Error()
		}
		res.Rows = append(res.Rows, []types.Value{j.ID, j.Name, j.Status, j.Start.Format("2006-01-02 15:04:05"),
			j.Duration.Round(time.Millisecond).String(), j.RecordsIn, j.RecOut, errText})
	}
	return res
}

// Jobs lists the session's jobs.
func (s *Session) Jobs() []JobInfo { return s.jobs.infos() }

// WaitJobs waits until every job submitted so far has ended and returns the
// first failure. If ctx ends first, the running jobs are stopped.
func (s *Session) WaitJobs(ctx context.Context) error {
	s.jobs.mu.Lock()
	jobs := append([]*jobEntry(nil), s.jobs.jobs...)
	s.jobs.mu.Unlock()
	var first error
	for _, e := range jobs {
		select {
		case <-e.job.Done():
		case <-ctx.Done():
			s.jobs.stopAll()
			return ctx.Err()
		}
		if err := e.job.Err(); err != nil && !errors.Is(err, exec.ErrStopped) && first == nil {
			first = fmt.Errorf("job %s (%s) failed: %w", e.id, e.name, err)
		}
	}
	return first
}

// StopJobs stops every running job.
func (s *Session) StopJobs() { s.jobs.stopAll() }

func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// submit plans and starts the job of one INSERT or a statement set. With
// 'table.dml-sync' it waits for the job to end.
func (s *Session) submit(ctx context.Context, st sql.Statement, inserts []*sql.Insert) (*Result, error) {
	_, g, err := s.plan(st)
	if err != nil {
		return nil, err
	}
	name := s.Option(OptPipelineName)
	if name == "" {
		var ts []string
		for _, ins := range inserts {
			ts = append(ts, ins.Table)
		}
		name = "insert-into_" + strings.Join(ts, ",")
	}
	job, err := exec.Start(context.Background(), g, s.execOptions(nil))
	if err != nil {
		return nil, err
	}
	e := &jobEntry{id: newJobID(), name: name, job: job, start: time.Now()}
	s.jobs.add(e)
	if s.boolOption(OptDMLSync) {
		select {
		case <-job.Done():
		case <-ctx.Done():
			job.Cancel()
			job.Wait()
			return nil, ctx.Err()
		}
		if err := job.Err(); err != nil {
			return nil, fmt.Errorf("job %s (%s) failed: %w", e.id, name, err)
		}
		return &Result{Kind: ResultJob, JobID: e.id, Message: fmt.Sprintf("[INFO] Job %s (%s) finished: %d rows written.", e.id, name, job.Metrics().RecordsOut)}, nil
	}
	return &Result{Kind: ResultJob, JobID: e.id, Message: fmt.Sprintf("[INFO] Submitting SQL update statement to the cluster...\n[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: %s", e.id)}, nil
}
