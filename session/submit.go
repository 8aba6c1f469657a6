package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
)

// path joins elem to the session's data directory; a session without one
// uses a temporary directory of its own (removed by Close), so that its
// in-memory tables and job files are its own too.
func (s *Session) path(elem ...string) string {
	s.mu.Lock()
	if s.dataDir == "" && s.tmpDir == "" {
		s.tmpDir, _ = os.MkdirTemp("", "streamsql-")
	}
	root := s.dataDir
	if root == "" {
		root = s.tmpDir
	}
	s.mu.Unlock()
	return filepath.Join(append([]string{root}, elem...)...)
}

func (s *Session) backend() state.Backend {
	if strings.EqualFold(s.Option(OptStateBackend), "hashmap") {
		return state.MemoryBackend{}
	}
	return state.PebbleBackend{}
}

// jobPlan is everything needed to (re)start attempts of one job.
type jobPlan struct {
	name    string
	graph   *planner.Graph
	opts    exec.Options
	storage *checkpoint.Storage
	restart checkpoint.RestartStrategy
}

// submit plans and starts the job of one INSERT or a statement set. With
// checkpointing on, it resumes from the job's latest completed checkpoint
// (or from 'execution.state-recovery.path'). With 'table.dml-sync' it waits
// for the job to end.
func (s *Session) submit(ctx context.Context, st sql.Statement, inserts []*sql.Insert) (*Result, error) {
	_, g, err := s.plan(ctx, st)
	if err != nil {
		return nil, err
	}
	var tables []string
	for _, ins := range inserts {
		tables = append(tables, ins.Table)
	}
	opts := s.Options()
	name := s.jobName(tables)
	cpo, err := checkpoint.ParseOptions(opts)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	restart, err := checkpoint.ParseRestart(opts, cpo.Interval > 0)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	jobDir := s.path("jobs", safeName(name))
	if s.Fresh {
		if err := os.RemoveAll(jobDir); err != nil {
			return nil, err
		}
	}
	jp := &jobPlan{name: name, graph: g, restart: restart, storage: checkpoint.NewStorage(filepath.Join(jobDir, "checkpoints"))}
	jp.opts = s.execOptions(nil)
	jp.opts.Backend = s.backend()
	jp.opts.StateDir = filepath.Join(jobDir, "state")
	jp.opts.IgnoreUnclaimedState = s.boolOption(OptIgnoreUnclaimed)
	jp.opts.JobName = name
	if cpo.Interval > 0 {
		jp.opts.Checkpoint = &exec.CheckpointOptions{JobName: name, Storage: jp.storage, Options: cpo}
	}

	var notes []string
	var job *exec.Job
	var restoredFrom int64
	switch path := opts[OptRecoveryPath]; {
	case path != "":
		md, err := checkpoint.Load(path)
		if err != nil {
			return nil, sql.Errorf(st.Pos(), "cannot restore from '%s': %v", path, err)
		}
		o := jp.opts
		o.Restore = md
		if job, err = exec.Start(context.Background(), g, o); err != nil {
			return nil, sql.Errorf(st.Pos(), "cannot restore job %s from '%s': %v", name, path, err)
		}
		restoredFrom = md.ID
		notes = append(notes, fmt.Sprintf("restored job %s from %s", name, path))
	case cpo.Interval > 0:
		var ws []string
		job, restoredFrom, ws, err = jp.startLatest()
		notes = append(notes, ws...)
		if err != nil {
			return nil, sql.Errorf(st.Pos(), "%v", err)
		}
		if restoredFrom > 0 {
			notes = append(notes, fmt.Sprintf("restored job %s from checkpoint %d", name, restoredFrom))
		}
	default:
		if job, err = exec.Start(context.Background(), g, jp.opts); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	e := &jobEntry{id: newJobID(name, start), name: name, start: start, done: make(chan struct{}), cur: job, restored: restoredFrom,
		watermark: exec.NoWatermark}
	s.jobs.add(e)
	go s.supervise(e, jp)

	var msg strings.Builder
	for _, n := range notes {
		msg.WriteString("[INFO] " + n + "\n")
	}
	if s.boolOption(OptDMLSync) {
		select {
		case <-e.done:
		case <-ctx.Done():
			e.stop()
			return nil, ctx.Err()
		}
		info := e.info()
		if info.Err != nil {
			return nil, fmt.Errorf("job %s (%s) failed: %w", e.id, name, info.Err)
		}
		fmt.Fprintf(&msg, "[INFO] Job %s (%s) finished: %d rows written.", e.id, name, info.RecOut)
		return &Result{Kind: ResultJob, JobID: e.id, Message: msg.String()}, nil
	}
	fmt.Fprintf(&msg, "[INFO] Submitting SQL update statement to the cluster...\n[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: %s", e.id)
	return &Result{Kind: ResultJob, JobID: e.id, Message: msg.String()}, nil
}

// startLatest starts the job from its newest usable checkpoint, falling
// back past damaged ones with a warning; with none it starts fresh.
func (jp *jobPlan) startLatest() (*exec.Job, int64, []string, error) {
	done, warnings, err := jp.storage.Completed()
	if err != nil {
		return nil, 0, nil, err
	}
	for _, md := range done {
		o := jp.opts
		o.Restore = md
		job, err := exec.Start(context.Background(), jp.graph, o)
		if err == nil {
			return job, md.ID, warnings, nil
		}
		if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, os.ErrNotExist) {
			return nil, 0, warnings, fmt.Errorf("cannot restore job %s from checkpoint %d: %w", jp.name, md.ID, err)
		}
		warnings = append(warnings, fmt.Sprintf("WARNING: checkpoint %d of job %s cannot be restored (%v); trying an older one", md.ID, jp.name, err))
	}
	if len(done) > 0 || len(warnings) > 0 {
		return nil, 0, warnings, fmt.Errorf("job %s has checkpoints but none can be restored (%s); start it with --fresh to discard them",
			jp.name, strings.Join(warnings, "; "))
	}
	job, err := exec.Start(context.Background(), jp.graph, jp.opts)
	return job, 0, warnings, err
}

// supervise waits for each attempt of a job and restarts it from its
// latest completed checkpoint while the restart strategy allows.
func (s *Session) supervise(e *jobEntry, jp *jobPlan) {
	defer close(e.done)
	for {
		cur := e.attempt()
		err := cur.Wait()
		m := cur.Metrics()
		e.mu.Lock()
		e.in += m.RecordsIn
		e.out += m.RecordsOut
		e.skipped += m.Skipped
		e.late += m.LateRecords
		e.routed += m.LateRouted
		e.watermark = m.Watermark
		if c := cur.Coordinator(); c != nil {
			st := c.Stats()
			if st.LastID != 0 {
				e.lastStats.LastID, e.lastStats.LastCompleted, e.lastStats.LastDuration = st.LastID, st.LastCompleted, st.LastDuration
				e.lastStats.LastSize, e.lastStats.LastIncremental = st.LastSize, st.LastIncremental
			}
			e.lastStats.Completed += st.Completed
			e.lastStats.Failed += st.Failed
		}
		stopped := e.stopped
		e.cur = nil
		e.mu.Unlock()
		if err == nil || stopped || errors.Is(err, exec.ErrStopped) {
			e.finish(err)
			if stopped && jp.opts.Checkpoint != nil && !jp.opts.Checkpoint.Options.RetainOnCancel {
				os.RemoveAll(jp.storage.Root())
			}
			return
		}
		delay, ok := jp.restart.Next(time.Now())
		if !ok || jp.opts.Checkpoint == nil {
			e.finish(err)
			return
		}
		time.Sleep(delay)
		next, from, _, serr := jp.startLatest()
		e.mu.Lock()
		if e.stopped {
			e.mu.Unlock()
			if next != nil {
				next.Cancel()
				next.Wait()
			}
			e.finish(exec.ErrStopped)
			return
		}
		if serr != nil {
			e.mu.Unlock()
			e.finish(fmt.Errorf("%v; restarting failed: %w", err, serr))
			return
		}
		e.cur, e.restarts, e.restored = next, e.restarts+1, from
		e.mu.Unlock()
	}
}

func (e *jobEntry) finish(err error) {
	e.mu.Lock()
	e.err, e.end = err, time.Now()
	e.mu.Unlock()
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ' ', ',', ':', '*', '?', '"', '<', '>', '|':
			return '_'
		}
		return r
	}, s)
}
