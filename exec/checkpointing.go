package exec

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/failpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// CheckpointOptions turn on checkpoints for a job.
type CheckpointOptions struct {
	// JobName is recorded in every checkpoint's metadata.
	JobName string
	// Storage keeps the completed checkpoints.
	Storage *checkpoint.Storage
	// Options are the interval, mode, timeout and limits.
	Options checkpoint.Options
	// OnCheckpoint, if set, is told of each checkpoint and savepoint that
	// completed or failed (checkpoint.Config.Recorded); it must not block.
	OnCheckpoint func(checkpoint.Record)
	// SavepointsOnly is a job without checkpointing that can still take a
	// savepoint when asked (Options.Interval is zero): nothing else is
	// ever checkpointed, so a bounded input ends without a final
	// checkpoint, as it does without CheckpointOptions.
	SavepointsOnly bool
}

// errCannotSnapshot is wrapped by operators that cannot take part in a
// checkpoint; the checkpoint is declined, the job goes on.
var errCannotSnapshot = errors.New("operator cannot be checkpointed")

// control is a message from the job to one subtask, outside the data flow.
type control struct {
	kind      controlKind
	id        int64
	savepoint bool
}

type controlKind uint8

const (
	// ctlTrigger asks a source to take checkpoint id and send its barrier.
	ctlTrigger controlKind = iota
	// ctlComplete says checkpoint id is complete: sinks commit.
	ctlComplete
	// ctlFinish tells a source that reached its end to end its output.
	ctlFinish
	// ctlAborted says checkpoint id was discarded: a sink that waits for
	// the outcome of the checkpoints it pre-committed stops waiting for it.
	ctlAborted
)

// restoredState is a subtask's share of the checkpoint it restores from.
type restoredState struct {
	checkpointID int64
	// inline is the subtask's own inline state (a source's position).
	inline []byte
	// rescaled holds every old subtask's inline state, in subtask order,
	// when a source restores into another parallelism.
	rescaled [][]byte
	// commits are sink handles of the restored checkpoint this subtask must
	// commit again on open (its own, and after a rescale those of old
	// subtasks that no longer exist).
	commits [][]byte
	// dirs are the store checkpoints of every old subtask of the operator;
	// the new store keeps the key groups of this subtask.
	dirs []string
}

// checkpointing is the job's side of the checkpoint protocol.
type checkpointing struct {
	coord *checkpoint.Coordinator
	mode  checkpoint.Mode
	// savepointsOnly: CheckpointOptions.SavepointsOnly.
	savepointsOnly bool

	mu        sync.Mutex
	commits   map[int64]int // sink subtasks that committed each checkpoint
	finished  int           // sources that reached their end
	nSources  int
	sinkTasks int
}

func (j *Job) setupCheckpointing() error {
	co := j.opts.Checkpoint
	first, err := co.Storage.NextID()
	if err != nil {
		return err
	}
	var tasks []checkpoint.Task
	cp := &checkpointing{commits: map[int64]int{}, mode: co.Options.Mode, savepointsOnly: co.SavepointsOnly}
	for _, t := range j.tasks {
		tasks = append(tasks, t.checkpointTask())
		if t.source != nil {
			cp.nSources++
		}
		if _, ok := t.impl.(committer); ok {
			cp.sinkTasks++
		}
	}
	tolerable := co.Options.TolerableFailures
	cp.coord = checkpoint.NewCoordinator(checkpoint.Config{
		Job: j, JobName: co.JobName, Storage: co.Storage, Options: co.Options, Tasks: tasks,
		MaxParallelism: j.graph.MaxParallelism, FirstID: first, Fail: j.fail, Backend: j.opts.Backend.Name(),
		// Every counted failure is said on stderr, as it happens: a job
		// whose checkpoints fail is not silently left without any.
		Failed: func(id int64, err error, inRow int) {
			log.Printf("checkpoint %d of job %s failed (%d in a row; '%s' = %d): %v",
				id, co.JobName, inRow, checkpoint.KeyTolerable, tolerable, err)
		},
		Recorded: co.OnCheckpoint,
	})
	j.cp = cp
	return nil
}

func (t *subtask) checkpointTask() checkpoint.Task {
	return checkpoint.Task{Operator: t.op.ID, Name: t.op.Name(), Subtask: t.index, Parallelism: t.op.Parallelism}
}

// Coordinator returns the job's checkpoint coordinator (nil without checkpoints).
func (j *Job) Coordinator() *checkpoint.Coordinator {
	if j.cp == nil {
		return nil
	}
	return j.cp.coord
}

// TriggerCheckpoint implements checkpoint.Job: every source subtask takes
// its snapshot and sends the barrier between two batches.
func (j *Job) TriggerCheckpoint(id int64, savepoint bool) error {
	if j.ctx.Err() != nil {
		return fmt.Errorf("%w: the job is stopping", checkpoint.ErrDeclined)
	}
	for _, t := range j.tasks {
		if t.source != nil {
			t.deliver(control{kind: ctlTrigger, id: id, savepoint: savepoint})
		}
	}
	return nil
}

// NotifyComplete implements checkpoint.Job: sinks commit.
func (j *Job) NotifyComplete(id int64) {
	for _, t := range j.tasks {
		_, commits := t.impl.(committer)
		_, listens := t.source.(CheckpointListener)
		if commits || listens {
			t.deliver(control{kind: ctlComplete, id: id})
		}
	}
}

// NotifyAborted implements checkpoint.Job. Nothing to undo: a sink's
// pre-committed transaction of an aborted checkpoint is committed with the
// next checkpoint that completes; a sink that waits for the outcome of
// the checkpoints it pre-committed (OrderedCommitter) is told.
func (j *Job) NotifyAborted(id int64) {
	for _, t := range j.tasks {
		if s, ok := t.impl.(*sinkOp); ok && s.ordered {
			t.deliver(control{kind: ctlAborted, id: id})
		}
	}
}

// committed counts sink subtask commits of checkpoint id; the failpoint
// between the commits of two sink subtasks fires after the first.
func (j *Job) committed(id int64) {
	if j.cp == nil {
		return
	}
	j.cp.mu.Lock()
	j.cp.commits[id]++
	first := j.cp.commits[id] == 1
	j.cp.mu.Unlock()
	if first && j.cp.sinkTasks > 1 {
		failpoint.Hit(failpoint.BetweenCommits)
	}
}

// WaitCommitted waits until every sink subtask has committed checkpoint id
// (stop-with-savepoint waits for it before it cancels the job), or ctx ends.
func (j *Job) WaitCommitted(ctx context.Context, id int64) error {
	if j.cp == nil {
		return nil
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		j.cp.mu.Lock()
		done := j.cp.commits[id] >= j.cp.sinkTasks
		j.cp.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-j.done:
			return fmt.Errorf("the job ended before committing checkpoint %d", id)
		case <-t.C:
		}
	}
}

// deliver queues a control message for t without blocking the caller.
func (t *subtask) deliver(c control) {
	select {
	case t.ctl <- c:
	default:
		go func() {
			select {
			case t.ctl <- c:
			case <-t.job.ctx.Done():
			}
		}()
	}
}

// ack reports this subtask's part of checkpoint id.
func (t *subtask) ack(id int64, st checkpoint.SubtaskState) {
	t.job.cp.coord.Ack(id, t.checkpointTask(), st)
}

// sourceFinished records that a source subtask reached the end of its
// input. Once all have, the job takes a final checkpoint, so that what the
// sinks commit at the end is covered by a checkpoint, then lets the sources
// end their outputs.
func (j *Job) sourceFinished() {
	j.cp.mu.Lock()
	j.cp.finished++
	all := j.cp.finished == j.cp.nSources
	j.cp.mu.Unlock()
	if !all {
		return
	}
	// The job ends after this goroutine (a failure meanwhile cancels ctx):
	// the checkpoint it makes or discards is never written to after Wait.
	j.goBackground(func(ctx context.Context) {
		// A job whose operators cannot be checkpointed (a bounded sort)
		// declines; it then ends without a final checkpoint. So does a job
		// that takes savepoints only.
		for attempt := 0; attempt < 3 && ctx.Err() == nil && !j.cp.savepointsOnly; attempt++ {
			_, err := j.cp.coord.Checkpoint(ctx)
			if err == nil || errors.Is(err, checkpoint.ErrDeclined) {
				break
			}
			// The pause before another attempt, not a wait for a
			// condition; cut short when the job is canceled.
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		for _, t := range j.tasks {
			if t.source != nil {
				t.deliver(control{kind: ctlFinish})
			}
		}
	})
}

// snapshotOperator takes t's part of checkpoint id after its barrier
// aligned, and acknowledges it (or declines).
func (t *subtask) snapshotOperator(id int64, alignment time.Duration) error {
	if t.job.cp == nil {
		return nil
	}
	sc := &snapshotContext{id: id, dir: t.job.cp.coord.Dir(id), rel: fmt.Sprintf("%s-%d", t.op.ID, t.index),
		canonical: t.job.cp.coord.Canonical(id)}
	st, rest, err := t.tc.snapshot(t.impl, sc)
	ack := func(st checkpoint.SubtaskState, err error) {
		switch {
		case errors.Is(err, errCannotSnapshot):
			t.job.cp.coord.Decline(id, fmt.Errorf("%s: %w", t.name(), err))
		case err != nil:
			t.job.cp.coord.Abort(id, fmt.Errorf("%s: %w", t.name(), err))
		default:
			st.Alignment = alignment
			t.ack(id, st)
		}
	}
	if err != nil || rest == nil {
		ack(st, err)
		return nil
	}
	// The store's files are written on another goroutine while the
	// subtask takes records on: the acknowledgement waits for them.
	t.job.goBackground(func(context.Context) { ack(rest()) })
	return nil
}

// snapshot takes an operator subtask's part of checkpoint cp: its declared
// keyed state (keyedState.snapshot), a sink's pre-commit (preCommitter),
// or nothing for a stateless operator; an operator that cannot be
// checkpointed (checkpointRefuser) declines it. A non-nil rest is the
// asynchronous part of the snapshot, which returns the subtask's state
// once its files are written; st is then empty.
func (t *taskContext) snapshot(impl operator, cp *snapshotContext) (st checkpoint.SubtaskState, rest asyncState, err error) {
	if r, ok := impl.(checkpointRefuser); ok {
		return checkpoint.SubtaskState{}, nil, r.refuseCheckpoint()
	}
	if p, ok := impl.(preCommitter); ok {
		st, err := p.preCommit(cp)
		return st, nil, err
	}
	if t.keyed != nil {
		return t.keyed.snapshot(cp)
	}
	return checkpoint.SubtaskState{}, nil, nil
}

// asyncState is the asynchronous part of a subtask's snapshot: it returns
// the subtask's state once the store's checkpoint files are written. It
// may run on any goroutine.
type asyncState func() (checkpoint.SubtaskState, error)

// preCommitter is an operator whose part of a checkpoint is what it
// pre-commits (a transactional sink): small state returned inline and
// committed when the checkpoint completes (committer).
type preCommitter interface {
	preCommit(cp *snapshotContext) (checkpoint.SubtaskState, error)
}

// checkpointRefuser is an operator that cannot take part in a checkpoint:
// refuseCheckpoint says why, wrapping errCannotSnapshot.
type checkpointRefuser interface {
	refuseCheckpoint() error
}

// closeOperator closes impl, then its store (stateful operators) and its
// share of the state memory budget.
func (t *taskContext) closeOperator(impl operator) error {
	err := impl.close()
	t.keyed = nil
	t.share.Close()
	if t.store != nil {
		if cerr := t.store.Close(); err == nil {
			err = cerr
		}
		t.store = nil
	}
	return err
}

// storeState runs write (the operator's write-back), then checkpoints a
// subtask's store into its directory of checkpoint cp, in the backend's
// native format or, for a canonical savepoint, as its logical entries
// (state.WriteCanonical), and describes it for the metadata: where it is,
// its sizes, and the size and checksum of each file. A store that
// checkpoints asynchronously (state.AsyncCheckpointer) returns at once
// with the rest to wait for: the subtask takes records on meanwhile.
func storeState(s state.Store, cp *snapshotContext, write func() error) (checkpoint.SubtaskState, asyncState, error) {
	dir := filepath.Join(cp.dir, cp.rel)
	if a, ok := s.(state.AsyncCheckpointer); ok && !cp.canonical {
		wait, err := a.StartCheckpoint(dir, write)
		if err != nil {
			return checkpoint.SubtaskState{}, nil, err
		}
		return checkpoint.SubtaskState{}, func() (checkpoint.SubtaskState, error) {
			info, err := wait()
			if err != nil {
				return checkpoint.SubtaskState{}, err
			}
			return subtaskState(info, cp.rel), nil
		}, nil
	}
	if err := write(); err != nil {
		return checkpoint.SubtaskState{}, nil, err
	}
	checkpointStore := s.Checkpoint
	if cp.canonical {
		checkpointStore = func(dir string) (state.CheckpointInfo, error) { return state.WriteCanonical(s, dir) }
	}
	info, err := checkpointStore(dir)
	if err != nil {
		return checkpoint.SubtaskState{}, nil, err
	}
	return subtaskState(info, cp.rel), nil, nil
}

// subtaskState describes a store checkpoint in directory rel of a
// checkpoint for its metadata.
func subtaskState(info state.CheckpointInfo, rel string) checkpoint.SubtaskState {
	files := make([]checkpoint.FileSum, len(info.Files))
	for i, f := range info.Files {
		files[i] = checkpoint.FileSum(f)
	}
	return checkpoint.SubtaskState{Dir: rel, Size: info.Size, IncrementalSize: info.IncrementalSize, Files: files}
}

// verifyRestore checks the size and checksum of every state file of
// checkpoint md that the plan restores, before any is used: an error wraps
// state.ErrCorrupt and names the file. Metadata of version 1 has no
// checksums; its state gets only the backend's own checks.
func (j *Job) verifyRestore(md *checkpoint.Metadata, inPlan map[string]*planner.Operator) error {
	if !md.HasFileSums() {
		return nil
	}
	for _, o := range md.Operators {
		if inPlan[o.ID] == nil {
			continue
		}
		for _, s := range o.Subtasks {
			if s.Dir == "" {
				continue
			}
			sums := make([]state.FileSum, len(s.Files))
			for i, f := range s.Files {
				sums[i] = state.FileSum(f)
			}
			if err := state.VerifyCheckpoint(filepath.Join(md.Dir, s.Dir), sums); err != nil {
				return fmt.Errorf("checkpoint %d, state of %s %s subtask %d: %w", md.ID, o.ID, o.Name, s.Subtask, err)
			}
		}
	}
	return nil
}

// openStore opens the keyed state of a stateful subtask, restoring it from
// the checkpoint when the job restores.
func (j *Job) openStore(tc *subtask) (state.Store, error) {
	dir := filepath.Join(j.stateDir, fmt.Sprintf("%s-%d", tc.op.ID, tc.index))
	if err := state.AwaitClosed(j.ctx, dir); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if r := tc.restored; r != nil && len(r.dirs) > 0 {
		kgStart, kgEnd := state.KeyGroupRange(tc.index, j.graph.MaxParallelism, tc.op.Parallelism)
		s, err := j.opts.Backend.Restore(dir, r.dirs, kgStart, kgEnd)
		if err != nil {
			return nil, fmt.Errorf("restoring state from checkpoint %d: %w", r.checkpointID, err)
		}
		return s, nil
	}
	return j.opts.Backend.Open(dir)
}

// ErrUnclaimedState is returned when a restore finds state for operators
// the plan no longer has and 'execution.state-recovery.ignore-unclaimed-state'
// is not set.
var ErrUnclaimedState = errors.New("checkpoint has state that no operator of the new plan claims")

// mapRestore assigns the restored checkpoint's state to the subtasks.
func (j *Job) mapRestore() error {
	md := j.opts.Restore
	if err := md.CheckBackend(j.opts.Backend.Name()); err != nil {
		return err
	}
	if md.MaxParallelism != 0 && md.MaxParallelism != j.graph.MaxParallelism {
		return fmt.Errorf("checkpoint %d was taken with 'pipeline.max-parallelism' %d, the job has %d: key groups cannot move",
			md.ID, md.MaxParallelism, j.graph.MaxParallelism)
	}
	inPlan := map[string]*planner.Operator{}
	for _, o := range j.graph.Operators {
		inPlan[o.ID] = o
	}
	var report []string
	unclaimed := false
	for _, o := range md.Operators {
		has := false
		for _, s := range o.Subtasks {
			if len(s.Inline) > 0 || s.Dir != "" {
				has = true
			}
		}
		switch {
		case inPlan[o.ID] != nil:
			report = append(report, fmt.Sprintf("  %s %s: restored into %s", o.ID, o.Name, inPlan[o.ID].Name()))
		case has:
			unclaimed = true
			report = append(report, fmt.Sprintf("  %s %s: has state, but the new plan has no such operator", o.ID, o.Name))
		}
	}
	if unclaimed && !j.opts.IgnoreUnclaimedState {
		sort.Strings(report)
		return fmt.Errorf("%w (set 'execution.state-recovery.ignore-unclaimed-state' = 'true' to drop it):\n%s",
			ErrUnclaimedState, strings.Join(report, "\n"))
	}
	if err := j.verifyRestore(md, inPlan); err != nil {
		return err
	}
	for _, t := range j.tasks {
		ost := md.Operator(t.op.ID)
		if ost == nil {
			continue
		}
		r := &restoredState{checkpointID: md.ID}
		for _, s := range ost.Subtasks {
			if s.Dir != "" {
				r.dirs = append(r.dirs, filepath.Join(md.Dir, s.Dir))
			}
			if s.Subtask == t.index {
				r.inline = s.Inline
			}
			if len(s.Inline) > 0 && s.Subtask%t.op.Parallelism == t.index {
				r.commits = append(r.commits, s.Inline)
			}
		}
		if scanOf(t.op) != nil && ost.Parallelism != t.op.Parallelism {
			r.inline = nil
			r.rescaled = make([][]byte, ost.Parallelism)
			for _, s := range ost.Subtasks {
				if s.Subtask < len(r.rescaled) {
					r.rescaled[s.Subtask] = s.Inline
				}
			}
		}
		t.restored = r
	}
	return nil
}
