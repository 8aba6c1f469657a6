package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/fsutil"
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

// backend is the state backend of the jobs submitted next: Pebble stores
// within mem, or the hashmap.
func (s *Session) backend(mem *state.ManagedMemory) state.Backend {
	if s.Settings().StateBackend == "hashmap" {
		return state.MemoryBackend{}
	}
	return state.PebbleBackend{Options: mem.Pebble(state.PebbleOptions{FS: s.stateFS})}
}

// jobPlan is everything needed to (re)start attempts of one job.
type jobPlan struct {
	name    string
	graph   *planner.Graph
	opts    exec.Options
	storage *checkpoint.Storage
	restart checkpoint.RestartStrategy
	// dir is the job folder; text the statement's.
	dir, text string
}

// checkpointing says whether the job takes checkpoints (else it takes
// savepoints only, when asked).
func (jp *jobPlan) checkpointing() bool {
	return jp.opts.Checkpoint != nil && !jp.opts.Checkpoint.SavepointsOnly
}

// savepointStaging, in a job folder, is where a job without checkpointing
// takes a savepoint before it is copied to the savepoints directory.
const savepointStaging = "savepoint-staging"

// planFile, in a job folder, records the plan of the job that owns the
// folder's checkpoints: its statement and operators (planRecord).
const planFile = "plan.json"

type planRecord struct {
	Statement string
	Operators []planOperator
}

type planOperator struct{ ID, Name string }

func (jp *jobPlan) record() planRecord {
	r := planRecord{Statement: jp.text}
	for _, o := range jp.graph.Operators {
		r.Operators = append(r.Operators, planOperator{o.ID, o.Name()})
	}
	return r
}

// writePlan records the job's plan in its folder, once an attempt started:
// the checkpoints it takes are of this plan.
func (jp *jobPlan) writePlan() error {
	data, err := json.MarshalIndent(jp.record(), "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(jp.dir, 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(jp.dir, planFile), append(data, '\n'))
}

// planDiff says how the job's plan differs from the plan that took
// checkpoint md ("" when they are the same operators): the folder's plan
// file when there is one, else the operators in the checkpoint (which
// leaves out the operators that had finished, so only the checkpoint's
// operators missing from the plan count then).
func (jp *jobPlan) planDiff(md *checkpoint.Metadata) string {
	var old []planOperator
	var rec planRecord
	data, err := os.ReadFile(filepath.Join(jp.dir, planFile))
	both := err == nil && json.Unmarshal(data, &rec) == nil
	if both {
		old = rec.Operators
	} else {
		for _, o := range md.Operators {
			old = append(old, planOperator{o.ID, o.Name})
		}
	}
	inOld := map[string]bool{}
	for _, o := range old {
		inOld[o.ID] = true
	}
	inNew := map[string]bool{}
	for _, o := range jp.graph.Operators {
		inNew[o.ID] = true
	}
	var onlyOld, onlyNew []string
	for _, o := range old {
		if !inNew[o.ID] {
			onlyOld = append(onlyOld, "    "+o.ID+" "+o.Name)
		}
	}
	if both {
		for _, o := range jp.graph.Operators {
			if !inOld[o.ID] {
				onlyNew = append(onlyNew, "    "+o.ID+" "+o.Name())
			}
		}
	}
	if len(onlyOld) == 0 && len(onlyNew) == 0 {
		return ""
	}
	var b strings.Builder
	if len(onlyOld) > 0 {
		b.WriteString("\n  in the checkpoint, not in the plan:\n" + strings.Join(onlyOld, "\n"))
	}
	if len(onlyNew) > 0 {
		b.WriteString("\n  in the plan, not in the checkpoint:\n" + strings.Join(onlyNew, "\n"))
	}
	if rec.Statement != "" {
		b.WriteString("\n  the checkpoint is of: " + strings.Join(strings.Fields(rec.Statement), " "))
	}
	return b.String()
}

// startOver is the hint of an error that keeps a job from resuming its
// folder's checkpoints.
const startOver = "run with --fresh or SET a new 'pipeline.name' to start over"

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
	name, explicit := s.jobName(st, tables)
	cpo, err := checkpoint.ParseOptions(opts)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	restart, err := checkpoint.ParseRestart(opts, cpo.Interval > 0)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	// A job's folder is its own while it runs: a second job under the name
	// of a running one is refused (it would share its state and
	// checkpoints).
	start := time.Now()
	id, folder := newJobID(name, start), JobFolder(name)
	if err := s.jobs.claim(folder, id, name); err != nil {
		hint := "STOP JOB it first, or SET 'pipeline.name' to another name"
		if !explicit {
			hint = "the same statement is running as that job; STOP JOB it first, or SET 'pipeline.name' to run it a second time"
		}
		return nil, &sql.Error{Pos: st.Pos(), Msg: fmt.Sprintf("cannot submit job '%s': %v", name, err), Hint: hint}
	}
	submitted := false
	defer func() {
		if !submitted {
			s.jobs.release(folder)
		}
	}()
	jobDir := s.path("jobs", folder)
	storage, err := checkpoint.OpenStorage(ctx, cpo, filepath.Join(jobDir, "checkpoints"), folder)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "job %s: %v", name, err)
	}
	if s.Fresh {
		if err := storage.Clear(); err != nil {
			return nil, fmt.Errorf("job %s: --fresh: discarding its checkpoints: %w", name, err)
		}
		if err := os.RemoveAll(jobDir); err != nil {
			return nil, err
		}
	}
	// A job whose checkpoints are in an object store is claimed there
	// before they are listed: a process that ran it before (paused, or
	// on another machine) is fenced from then on.
	var owner checkpoint.Owner
	if storage.Remote() != "" && cpo.Interval > 0 {
		if owner, err = storage.Claim(ctx); err != nil {
			return nil, sql.Errorf(st.Pos(), "job %s: %v", name, err)
		}
	}
	jp := &jobPlan{name: name, graph: g, restart: restart, storage: storage,
		dir: jobDir, text: st.Text()}
	if jp.opts, err = s.execOptions(nil); err != nil {
		return nil, err
	}
	mem, err := s.managedMemory()
	if err != nil {
		return nil, err
	}
	jp.opts.Backend = s.backend(mem)
	jp.opts.StateDir = filepath.Join(jobDir, "state")
	jp.opts.IgnoreUnclaimedState = s.Settings().IgnoreUnclaimed
	jp.opts.JobName = name
	jp.opts.Checkpoint = &exec.CheckpointOptions{JobName: name, Storage: jp.storage, Options: cpo,
		OnCheckpoint: func(r checkpoint.Record) {
			s.jobs.emitCheckpoint(CheckpointEvent{JobID: id, JobName: name, Record: r})
		}}
	if cpo.Interval <= 0 {
		// Without checkpointing the job can still be stopped with a
		// savepoint (as in Flink), staged in a directory of its own: the
		// folder's checkpoints, of earlier runs with checkpointing, are
		// left as they are.
		jp.opts.Checkpoint.SavepointsOnly = true
		jp.opts.Checkpoint.Storage = checkpoint.NewStorage(filepath.Join(jobDir, savepointStaging))
		if err := os.RemoveAll(jp.opts.Checkpoint.Storage.Root()); err != nil {
			return nil, err
		}
	}

	var notes []string
	var job *exec.Job
	var restoredFrom int64
	path, once := s.Settings().RecoveryPath, false
	if s.RestoreNext != "" {
		path, once = s.RestoreNext, true
	}
	s.mu.Lock()
	err = s.checkPathLocked("'"+OptRecoveryPath+"'", path)
	s.mu.Unlock()
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	switch {
	case path != "":
		// One in an object store is downloaded into the job's folder
		// (restore/), replacing what an earlier restore left there.
		restoreDir := filepath.Join(jobDir, "restore")
		if err := os.RemoveAll(restoreDir); err != nil {
			return nil, err
		}
		md, err := checkpoint.LoadFrom(ctx, path, cpo.S3, restoreDir)
		if err != nil {
			return nil, sql.Errorf(st.Pos(), "cannot restore from '%s': %v", path, err)
		}
		if !s.AllowOlderRestore {
			if err := jp.checkNotOlder(md, path); err != nil {
				return nil, &sql.Error{Pos: st.Pos(), Msg: err.Error()}
			}
		}
		notes = append(notes, jp.foreignWarnings(md, path)...)
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
			notes = append(notes, fmt.Sprintf("restored job %s from checkpoint %d (%s)", name, restoredFrom, startOver))
		}
	default:
		if job, err = exec.Start(context.Background(), g, jp.opts); err != nil {
			return nil, err
		}
	}
	if jp.checkpointing() {
		if err := jp.writePlan(); err != nil {
			job.Cancel()
			job.Wait()
			return nil, sql.Errorf(st.Pos(), "job %s: recording its plan: %v", name, err)
		}
	}
	e := &jobEntry{id: id, name: name, folder: folder, checkpointing: jp.checkpointing(), pos: st.Pos(), text: st.Text(), graph: g, start: start,
		done: make(chan struct{}), stopc: make(chan struct{}), cur: job, restored: restoredFrom, owner: owner.Epoch, watermark: exec.NoWatermark}
	s.jobs.add(e)
	submitted = true
	if once {
		s.RestoreNext = ""
	}
	go s.supervise(e, jp)

	var msg strings.Builder
	for _, n := range notes {
		msg.WriteString("[INFO] " + n + "\n")
	}
	if s.Settings().DMLSync {
		select {
		case <-e.done:
		case <-ctx.Done():
			e.stop()
			return nil, ctx.Err()
		}
		info := e.info()
		if info.Status == "FAILED" {
			return nil, fmt.Errorf("job %s (%s) failed: %w", e.id, name, info.Err)
		}
		fmt.Fprintf(&msg, "[INFO] Job %s (%s) finished: %d rows written.", e.id, name, info.RecOut)
		return &Result{Kind: ResultJob, JobID: e.id, Message: msg.String(), RowsChanged: info.RecOut}, nil
	}
	fmt.Fprintf(&msg, "[INFO] Submitting SQL update statement to this process (there is no cluster: the job runs here)...\n[INFO] SQL update statement has been successfully submitted:\nJob ID: %s", e.id)
	return &Result{Kind: ResultJob, JobID: e.id, Message: msg.String()}, nil
}

// checkNotOlder refuses to restore md (read from path) into a job whose
// folder holds a completed checkpoint of the job's plan taken after it:
// that checkpoint covers output the sinks committed past md, which a job
// restored from md would write again (a rerun with -s after a crash during
// that restore).
func (jp *jobPlan) checkNotOlder(md *checkpoint.Metadata, path string) error {
	const stamp = "2006-01-02 15:04:05.000 UTC"
	done, _, err := jp.storage.Completed()
	if err != nil {
		return fmt.Errorf("cannot restore job %s from '%s': reading its folder's checkpoints: %v", jp.name, path, err)
	}
	for _, c := range done { // newest first
		// Checkpoints of another plan (a 'pipeline.name' reused by
		// another statement) are not this job's to resume, nor its output.
		if !c.Triggered.After(md.Triggered) || jp.planDiff(c) != "" {
			continue
		}
		kind := "checkpoint"
		if md.Savepoint {
			kind = "savepoint"
		}
		return fmt.Errorf("cannot restore job %s from %s '%s' (id %d, taken %s): the job's folder holds checkpoint %d (%s, taken %s), which is newer, "+
			"and the output written between the two would be written again.\n"+
			"Run without -s (or RESET '%s') to resume from checkpoint %d; with --fresh to discard the folder's checkpoints and restore the %s; "+
			"or with --allow-older-restore to restore the %s and keep them",
			jp.name, kind, path, md.ID, md.Triggered.UTC().Format(stamp), c.ID, c.Dir, c.Triggered.UTC().Format(stamp),
			OptRecoveryPath, c.ID, kind, kind)
	}
	return nil
}

// foreignWarnings warns of a restore of md (read from path) that another
// job took: another job name, or operators the plan does not have (a
// savepoint restored into another statement's job, which would take its
// state and source positions as its own).
func (jp *jobPlan) foreignWarnings(md *checkpoint.Metadata, path string) []string {
	var ws []string
	if md.Job != "" && md.Job != jp.name {
		ws = append(ws, fmt.Sprintf("WARNING: job %s restores '%s', which job %s took", jp.name, path, md.Job))
	}
	inPlan := map[string]bool{}
	for _, o := range jp.graph.Operators {
		inPlan[o.ID] = true
	}
	var missing []string
	for _, o := range md.Operators {
		if !inPlan[o.ID] {
			missing = append(missing, o.ID+" "+o.Name)
		}
	}
	if len(missing) > 0 {
		ws = append(ws, fmt.Sprintf("WARNING: job %s restores '%s', whose operators %s are not in the job's plan",
			jp.name, path, strings.Join(missing, ", ")))
	}
	return ws
}

// startLatest starts the job from its newest usable checkpoint, falling
// back past damaged ones with a warning; with none it starts fresh.
func (jp *jobPlan) startLatest() (*exec.Job, int64, []string, error) {
	done, warnings, err := jp.storage.Completed()
	if err != nil {
		return nil, 0, nil, err
	}
	for _, md := range done {
		// Resume only the checkpoints of this plan: another statement under
		// the same name (a 'pipeline.name' left set) must not take them.
		if !jp.opts.IgnoreUnclaimedState {
			if diff := jp.planDiff(md); diff != "" {
				return nil, 0, warnings, fmt.Errorf("cannot resume job %s from checkpoint %d: the job's plan is not the plan of the checkpoint:%s\n"+
					"%s, or SET '%s' = 'true' to resume anyway (the state of operators the plan does not have is dropped, new operators start empty)",
					jp.name, md.ID, diff, startOver, OptIgnoreUnclaimed)
			}
		}
		// A checkpoint in an object store is downloaded first (the files
		// the working copy lacks), every file verified.
		if err := jp.storage.Fetch(context.Background(), md); err != nil {
			if !errors.Is(err, checkpoint.ErrDamagedFile) && !errors.Is(err, checkpoint.ErrCorrupt) {
				return nil, 0, warnings, fmt.Errorf("cannot restore job %s from checkpoint %d in %s: %w", jp.name, md.ID, jp.storage.Remote(), err)
			}
			warnings = append(warnings, fmt.Sprintf("WARNING: checkpoint %d of job %s cannot be restored (%v); trying an older one", md.ID, jp.name, err))
			continue
		}
		o := jp.opts
		o.Restore = md
		job, err := exec.Start(context.Background(), jp.graph, o)
		if err == nil {
			return job, md.ID, warnings, nil
		}
		if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, os.ErrNotExist) {
			return nil, 0, warnings, fmt.Errorf("cannot restore job %s from checkpoint %d (%s): %w", jp.name, md.ID, startOver, err)
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
// latest completed checkpoint while the restart strategy allows, and while
// the failures are not the same one MaxRepeatedFailures times in a row. A
// restart that cannot read the checkpoints (checkpoint.ErrUnreachable) is
// tried again after the strategy's next delay, while it allows.
// Every failure and restart is recorded (SHOW JOBS) and emitted
// (OnJobEvent).
func (s *Session) supervise(e *jobEntry, jp *jobPlan) {
	defer close(e.done)
	defer s.jobs.release(e.folder)
	for {
		cur := e.attempt()
		err := s.await(e, cur)
		if err != nil && !errors.Is(err, exec.ErrStopped) {
			err = jp.fenced(err)
		}
		m := cur.Metrics()
		subs := e.subtaskMetrics()
		progressed := false
		e.mu.Lock()
		e.prevSubtasks = subs
		e.in += m.RecordsIn
		e.out += m.RecordsOut
		e.skipped += m.Skipped
		e.tombstones = m.Tombstones
		e.late += m.LateRecords
		e.expired += m.StateExpired
		e.routed += m.LateRouted
		e.watermark = m.Watermark
		if c := cur.Coordinator(); c != nil {
			st := c.Stats()
			mergeStats(&e.lastStats, st)
			e.history = appendHistory(e.history, c.History())
			progressed = st.Completed > 0
		}
		stopped, keep := e.stopped, e.keep
		e.cur = nil
		failed := err != nil && !stopped && !errors.Is(err, exec.ErrStopped)
		if failed {
			// The same cause again, with no checkpoint completed since the
			// last failure, is the same failure at the same place.
			if e.lastErr != nil && e.lastErr.Error() == err.Error() && !progressed {
				e.repeated++
			} else {
				e.repeated = 1
			}
			e.lastErr, e.lastFailure, e.restarting = err, time.Now(), true
		}
		repeated, restarts := e.repeated, e.restarts
		e.mu.Unlock()
		if !failed {
			e.finish(err)
			if stopped && !keep && jp.checkpointing() && !jp.opts.Checkpoint.Options.RetainOnCancel {
				jp.storage.Clear() // its objects in an object store too
			}
			return
		}
		ev := JobEvent{Kind: JobFailed, ID: e.id, Name: e.name, Pos: e.pos, Time: time.Now(), Err: err, Restarts: restarts, Repeated: repeated}
		if errors.Is(err, checkpoint.ErrFenced) {
			// Another process runs the job now: never restarted here.
			ev.Final = true
			e.finish(err)
			s.jobs.emit(ev)
			return
		}
		if repeated >= MaxRepeatedFailures {
			err = fmt.Errorf("%w (the same failure %d times in a row: not restarted again)", err, repeated)
			ev.Err, ev.Final = err, true
			e.finish(err)
			s.jobs.emit(ev)
			return
		}
		delay, ok := jp.restart.Next(time.Now())
		if !ok || !jp.checkpointing() {
			ev.Final = true
			e.finish(err)
			s.jobs.emit(ev)
			return
		}
		ev.Delay = delay
		s.jobs.emit(ev)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-e.stopc:
			t.Stop()
			e.finish(exec.ErrStopped)
			return
		}
		next, from, _, serr := jp.startLatest()
		for errors.Is(serr, checkpoint.ErrUnreachable) && !errors.Is(serr, checkpoint.ErrFenced) {
			// The checkpoints cannot be read now (their object store is
			// down or paused): another try after the strategy's delay, as
			// for a failed attempt, rather than failing the job for good.
			e.mu.Lock()
			e.lastErr, e.lastFailure = serr, time.Now()
			stopping := e.stopped
			e.mu.Unlock()
			delay, ok := jp.restart.Next(time.Now())
			if stopping || !ok {
				break
			}
			s.jobs.emit(JobEvent{Kind: JobFailed, ID: e.id, Name: e.name, Pos: e.pos, Time: time.Now(),
				Err: fmt.Errorf("restarting: %w", serr), Delay: delay, Restarts: restarts, Repeated: 1})
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-e.stopc:
				t.Stop()
			}
			next, from, _, serr = jp.startLatest()
		}
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
			e.lastErr, e.lastFailure = serr, time.Now()
			e.mu.Unlock()
			err = fmt.Errorf("%v; restarting failed: %w", err, serr)
			e.finish(err)
			s.jobs.emit(JobEvent{Kind: JobFailed, ID: e.id, Name: e.name, Pos: e.pos, Time: time.Now(), Err: err, Final: true, Restarts: restarts, Repeated: 1})
			return
		}
		e.cur, e.restarts, e.restored, e.restarting = next, e.restarts+1, from, false
		restarts = e.restarts
		e.mu.Unlock()
		s.jobs.emit(JobEvent{Kind: JobRestarted, ID: e.id, Name: e.name, Pos: e.pos, Time: time.Now(), Restarts: restarts, Checkpoint: from})
	}
}

// fenced returns the error of a failed attempt of the job: err, or, when
// another process has taken over the job's checkpoints in the object store
// (checkpoint.ErrFenced), the fenced error that names it, with err as the
// attempt's cause. A fenced job is not restarted: a failure of its sink
// (its Kafka transactions fenced by the new owner's) comes from the same
// takeover.
func (jp *jobPlan) fenced(err error) error {
	if errors.Is(err, checkpoint.ErrFenced) || jp.storage.Remote() == "" || !jp.checkpointing() {
		return err
	}
	// Within the checkpoint timeout: a store that does not answer (the
	// likely cause of the failure) does not hold the failure back longer.
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if d := jp.opts.Checkpoint.Options.Timeout; d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	ferr := jp.storage.CheckOwner(ctx)
	if !errors.Is(ferr, checkpoint.ErrFenced) {
		return err
	}
	return fmt.Errorf("job %s: %w (the job failed with: %v)", jp.name, ferr, err)
}

// waitingCheck is how often a running attempt is asked what its sources
// wait for.
const waitingCheck = time.Second

// await waits for an attempt of the job to end and returns its outcome.
// Meanwhile it emits a JobWaiting event whenever what the attempt's
// sources wait for changes (a Kafka topic not created yet, then created).
func (s *Session) await(e *jobEntry, cur *exec.Job) error {
	t := time.NewTicker(waitingCheck)
	defer t.Stop()
	var last []string
	for {
		select {
		case <-cur.Done():
			return cur.Wait()
		case <-t.C:
		}
		w := cur.Metrics().Waiting
		if slices.Equal(w, last) {
			continue
		}
		last = w
		s.jobs.emit(JobEvent{Kind: JobWaiting, ID: e.id, Name: e.name, Pos: e.pos, Time: time.Now(), Waiting: w})
	}
}

func (e *jobEntry) finish(err error) {
	e.mu.Lock()
	e.err, e.end, e.restarting = err, time.Now(), false
	e.mu.Unlock()
}

// JobFolder is the folder of the job named name under the data directory's
// jobs/: always one path element, never "." or ".." (so never jobs/ itself
// or above it), at most maxFolderName bytes. Characters that separate paths
// or that other file systems refuse (/ \ space , : * ? " < > |) become '_'
// ("../../x" is ".._.._x"); "." is "_" and ".." is "__" ("..." is a name
// like others); a longer name keeps its first bytes and ends with
// a hash of the whole name. Two names may share a folder ("a/b" and "a_b"):
// a job is refused while another holds its folder, and resumes only the
// checkpoints of its own plan. 'pipeline.name' refuses the names no folder
// should have (control characters, invalid UTF-8).
func JobFolder(name string) string {
	f := strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ' ', ',', ':', '*', '?', '"', '<', '>', '|':
			return '_'
		}
		return r
	}, name)
	switch f {
	case "", ".", "..":
		f = strings.Repeat("_", max(1, len(f)))
	}
	if len(f) > maxFolderName {
		h := fnv.New64a()
		h.Write([]byte(name))
		cut := maxFolderName - 17
		for cut > 0 && !utf8.RuneStart(f[cut]) {
			cut--
		}
		f = fmt.Sprintf("%s-%016x", f[:cut], h.Sum64())
	}
	return f
}

// maxFolderName is the longest file name most file systems take, in bytes.
const maxFolderName = 255

// validJobName is what 'pipeline.name' takes: UTF-8 without control
// characters.
func validJobName(name string) bool {
	return utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsControl)
}
