package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/streamsql/streamsql/internal/failpoint"
)

// ErrDeclined is wrapped by the error of a checkpoint a subtask declined
// (a source that already finished, say). Declines do not count as failures.
var ErrDeclined = errors.New("checkpoint declined")

// ErrTooManyFailures is the error a job fails with when more checkpoints
// failed in a row than it tolerates. The error wraps the last failure's
// too, so that its cause (syscall.ENOSPC, say) is found by errors.Is.
var ErrTooManyFailures = errors.New("exceeded tolerable checkpoint failures")

// ErrSubsumed is wrapped by the error of a checkpoint that a newer one
// completed before it: it is discarded, and does not count as a failure.
var ErrSubsumed = errors.New("subsumed by a newer checkpoint")

// Job is what the coordinator drives. The runtime implements it.
type Job interface {
	// TriggerCheckpoint makes every source subtask record its position and
	// send barrier id downstream. It must not block on the data flow.
	TriggerCheckpoint(id int64, savepoint bool) error
	// NotifyComplete tells every subtask that checkpoint id is complete:
	// sinks commit what they pre-committed for it.
	NotifyComplete(id int64)
	// NotifyAborted tells every subtask that checkpoint id was discarded.
	NotifyAborted(id int64)
}

// Task identifies one subtask that must acknowledge every checkpoint.
type Task struct {
	Operator    string // stable operator id
	Name        string
	Subtask     int
	Parallelism int
}

// Config configures a Coordinator.
type Config struct {
	Job            Job
	JobName        string
	Storage        *Storage
	Options        Options
	Tasks          []Task
	MaxParallelism int
	// Backend is the job's 'state.backend', recorded in every
	// checkpoint's metadata (Metadata.Backend).
	Backend string
	// FirstID is the id of the first checkpoint (above any on disk).
	FirstID int64
	// Fail is called when the job must fail: too many checkpoint failures
	// in a row, or a checkpoint that failed with ErrFenced (at once: it
	// does not count against the tolerable failures).
	Fail func(error)
	// Failed, if set, is told of every checkpoint failure that counts
	// against the tolerable failures (not of declines), with the number of
	// failures in a row so far (for a log line).
	Failed func(id int64, err error, inRow int)
	// Recorded, if set, is told of every checkpoint and savepoint as it
	// enters the history (History): completed, or failed with its cause
	// (declines and subsumed ones included). It is called once per
	// checkpoint, without the coordinator's lock, from the goroutine that
	// completed or failed it (a subtask's, a timer's), before a caller
	// waiting for that checkpoint returns; it must not block.
	Recorded func(Record)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Stats describe a job's checkpoints so far.
type Stats struct {
	Completed, Failed int
	// The last completed checkpoint.
	LastID                    int64
	LastCompleted             time.Time
	LastDuration              time.Duration
	LastSize, LastIncremental int64
	// Durations counts the completed checkpoints by duration.
	Durations Durations
}

// Coordinator triggers checkpoints and completes them once every subtask
// acknowledged. It is safe for concurrent use: subtasks call Ack and Decline
// from their goroutines.
type Coordinator struct {
	cfg Config

	mu            sync.Mutex
	nextID        int64
	pending       map[int64]*pendingCheckpoint
	lastEnd       time.Time
	failuresInRow int
	// finished tasks ended their work (an operator without inputs, such as
	// VALUES): they take part in no later checkpoint.
	finished map[Task]bool
	stats    Stats
	history  []Record
	closed   bool
	// suspended stops periodic triggers (stop-with-savepoint); so do
	// holds, the savepoints being taken and copied (Savepoint).
	suspended bool
	holds     int
	// completeMu serializes completions: one checkpoint at a time writes
	// its metadata, subsumes the older pending ones and prunes the
	// storage, so no completion removes the directory of another that is
	// still writing into it.
	completeMu sync.Mutex
	// uploading counts the completions running on goroutines of their own
	// (with an object store); Close waits for them.
	uploading sync.WaitGroup
}

type pendingCheckpoint struct {
	id        int64
	savepoint bool
	format    Format
	started   time.Time
	dir       string
	acks      map[Task]SubtaskState
	timer     *time.Timer
	done      chan result
}

type result struct {
	md  *Metadata
	err error
}

// NewCoordinator returns a coordinator; Run starts periodic checkpoints.
func NewCoordinator(cfg Config) *Coordinator {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FirstID < 1 {
		cfg.FirstID = 1
	}
	return &Coordinator{cfg: cfg, nextID: cfg.FirstID, pending: map[int64]*pendingCheckpoint{}, finished: map[Task]bool{}}
}

// Run triggers a checkpoint every Options.Interval until ctx ends.
func (c *Coordinator) Run(ctx context.Context) {
	if c.cfg.Options.Interval <= 0 {
		return
	}
	t := time.NewTicker(c.cfg.Options.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.trigger(false, FormatNative, false)
		}
	}
}

// Savepoint triggers a savepoint checkpoint in format f ("": canonical)
// and waits for it to complete. Periodic checkpoints pause from the
// trigger until the caller calls the release function it returns (also
// after an error), so that no later checkpoint prunes the savepoint's
// directory while the caller copies it (WriteSavepoint).
func (c *Coordinator) Savepoint(ctx context.Context, f Format) (*Metadata, func(), error) {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			c.mu.Lock()
			c.holds--
			c.mu.Unlock()
		})
	}
	md, err := c.wait(ctx, true, f)
	return md, release, err
}

// Canonical reports whether the subtasks write their state of pending
// checkpoint id in the canonical format (a savepoint that asked for it);
// false for a checkpoint, or an id no longer pending.
func (c *Coordinator) Canonical(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[id]
	return p != nil && p.format == FormatCanonical
}

// StopWithSavepoint stops periodic checkpoints, so that nothing the job
// does after it is ever committed, then takes a savepoint. The caller
// cancels the job once it returns; what ran past the savepoint's barrier is
// replayed by a job restored from it. If the savepoint fails, periodic
// checkpoints resume.
func (c *Coordinator) StopWithSavepoint(ctx context.Context, f Format) (*Metadata, error) {
	c.mu.Lock()
	c.suspended = true
	c.mu.Unlock()
	md, err := c.wait(ctx, true, f)
	if err != nil {
		c.mu.Lock()
		c.suspended = false
		c.mu.Unlock()
	}
	return md, err
}

// Checkpoint triggers a checkpoint now, whatever the interval and pause
// limits say, and waits for it to complete (the final checkpoint of a
// bounded job).
func (c *Coordinator) Checkpoint(ctx context.Context) (*Metadata, error) {
	return c.wait(ctx, false, FormatNative)
}

func (c *Coordinator) wait(ctx context.Context, savepoint bool, f Format) (*Metadata, error) {
	if f == "" {
		f = FormatCanonical
	}
	if !savepoint {
		f = FormatNative
	}
	p, err := c.trigger(savepoint, f, true)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-p.done:
		return r.md, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// trigger starts a checkpoint unless the limits forbid one now.
func (c *Coordinator) trigger(savepoint bool, format Format, force bool) (*pendingCheckpoint, error) {
	c.mu.Lock()
	now := c.cfg.Now()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("checkpoint coordinator is shut down")
	}
	if !force {
		if c.suspended || c.holds > 0 {
			c.mu.Unlock()
			return nil, nil
		}
		if len(c.pending) >= c.cfg.Options.MaxConcurrent || now.Sub(c.lastEnd) < c.cfg.Options.MinPause {
			c.mu.Unlock()
			return nil, nil
		}
	}
	id := c.nextID
	c.nextID++
	p := &pendingCheckpoint{id: id, savepoint: savepoint, format: format, started: now, acks: map[Task]SubtaskState{}, done: make(chan result, 1)}
	// Reserved, so that no other trigger starts meanwhile; the directory is
	// made without the lock (a slow disk must not block acks and aborts).
	c.pending[id] = p
	c.mu.Unlock()
	dir, err := c.cfg.Storage.Prepare(id)
	c.mu.Lock()
	switch {
	case c.pending[id] == nil:
		// Close dropped it meanwhile, before its directory was made: the
		// directory is this trigger's to remove.
		c.mu.Unlock()
		if err == nil {
			c.cfg.Storage.Discard(id)
		}
		p.done <- result{err: errors.New("checkpoint coordinator is shut down")}
		return p, nil
	case err != nil:
		// A checkpoint whose directory cannot be made failed: it counts.
		delete(c.pending, id)
		c.mu.Unlock()
		c.fail(p, fmt.Errorf("checkpoint %d: %w", id, err), true)
		return p, nil
	}
	p.dir = dir
	p.timer = time.AfterFunc(c.cfg.Options.Timeout, func() {
		c.abort(id, fmt.Errorf("checkpoint %d expired after %v", id, c.cfg.Options.Timeout), true)
	})
	// Tasks that finished while the directory was made ack nothing.
	c.completeIfAllAckedLocked(p)
	c.mu.Lock()
	if c.pending[id] == nil {
		c.mu.Unlock()
		return p, nil // completed already
	}
	c.mu.Unlock()
	if err := c.cfg.Job.TriggerCheckpoint(id, savepoint); err != nil {
		c.abort(id, err, !errors.Is(err, ErrDeclined))
		return p, nil
	}
	return p, nil
}

// Dir is the directory where subtasks write their state for checkpoint id.
func (c *Coordinator) Dir(id int64) string { return c.cfg.Storage.Dir(id) }

// Ack records a subtask's state for checkpoint id. When every subtask has
// acknowledged, the checkpoint's metadata is written and the job notified.
func (c *Coordinator) Ack(id int64, t Task, st SubtaskState) {
	c.mu.Lock()
	p := c.pending[id]
	if p == nil {
		c.mu.Unlock()
		return // expired or aborted meanwhile
	}
	p.acks[t] = st
	c.completeIfAllAckedLocked(p)
}

// completeIfAllAckedLocked completes p once every task that has not
// finished acknowledged it. It is called with mu held and releases it.
func (c *Coordinator) completeIfAllAckedLocked(p *pendingCheckpoint) {
	for _, t := range c.cfg.Tasks {
		if _, ok := p.acks[t]; !ok && !c.finished[t] {
			c.mu.Unlock()
			return
		}
	}
	if p.timer == nil {
		c.mu.Unlock()
		return // its directory is still being made
	}
	delete(c.pending, p.id)
	p.timer.Stop()
	c.mu.Unlock()
	if c.cfg.Storage.Remote() != "" {
		// The upload is the checkpoint's asynchronous part: the subtask
		// whose ack was the last goes on with its records meanwhile.
		c.uploading.Go(func() { c.complete(p) })
		return
	}
	c.complete(p)
}

// Finished records that task t ended its work and holds no state: pending
// and later checkpoints no longer wait for it.
func (c *Coordinator) Finished(t Task) {
	c.mu.Lock()
	c.finished[t] = true
	var ps []*pendingCheckpoint
	for _, p := range c.pending {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		c.mu.Lock()
		if c.pending[p.id] == nil {
			c.mu.Unlock()
			continue
		}
		c.completeIfAllAckedLocked(p)
	}
}

// Decline aborts checkpoint id on behalf of a subtask that cannot take part.
// It does not count as a failure. (Nor does a savepoint's failure, whatever
// its cause: it is returned to the one who asked for it.)
func (c *Coordinator) Decline(id int64, err error) {
	c.abort(id, fmt.Errorf("%w: %v", ErrDeclined, err), false)
}

// Abort fails checkpoint id on behalf of a subtask whose snapshot failed.
// It counts against the tolerable failures.
func (c *Coordinator) Abort(id int64, err error) {
	c.abort(id, err, true)
}

func (c *Coordinator) complete(p *pendingCheckpoint) {
	c.completeMu.Lock()
	defer c.completeMu.Unlock()
	c.mu.Lock()
	newer := c.stats.LastID
	c.mu.Unlock()
	if newer > p.id {
		c.fail(p, fmt.Errorf("checkpoint %d: %w (%d)", p.id, ErrSubsumed, newer), false)
		return
	}
	now := c.cfg.Now()
	md := &Metadata{Job: c.cfg.JobName, ID: p.id, Savepoint: p.savepoint, Triggered: p.started,
		Duration: now.Sub(p.started), MaxParallelism: c.cfg.MaxParallelism, Dir: p.dir,
		Format: p.format, Backend: c.cfg.Backend}
	byOp := map[string]*OperatorState{}
	for t, st := range p.acks {
		o := byOp[t.Operator]
		if o == nil {
			o = &OperatorState{ID: t.Operator, Name: t.Name, Parallelism: t.Parallelism}
			byOp[t.Operator] = o
			md.Operators = append(md.Operators, o)
		}
		st.Subtask = t.Subtask
		o.Subtasks = append(o.Subtasks, st)
	}
	sort.Slice(md.Operators, func(i, j int) bool { return md.Operators[i].ID < md.Operators[j].ID })
	for _, o := range md.Operators {
		sort.Slice(o.Subtasks, func(i, j int) bool { return o.Subtasks[i].Subtask < o.Subtasks[j].Subtask })
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if c.cfg.Options.Timeout > 0 {
		ctx, cancel = context.WithDeadline(ctx, p.started.Add(c.cfg.Options.Timeout))
	}
	uploaded, err := c.cfg.Storage.Complete(ctx, md)
	cancel()
	// The metadata's Duration ends at the last ack (it is written after);
	// the checkpoint's ends here, its files uploaded and its metadata
	// written.
	done := c.cfg.Now()
	if err != nil {
		c.fail(p, fmt.Errorf("checkpoint %d: writing metadata: %w", p.id, err), true)
		return
	}
	failpoint.Hit(failpoint.AfterMetadata)
	total, incr := md.Size()
	c.mu.Lock()
	c.failuresInRow = 0
	c.lastEnd = done
	c.stats.Completed++
	c.stats.LastID, c.stats.LastCompleted, c.stats.LastDuration = p.id, done, done.Sub(p.started)
	c.stats.LastSize, c.stats.LastIncremental = total, incr
	c.stats.Durations.observe(done.Sub(p.started))
	rec := Record{ID: p.id, Savepoint: p.savepoint, Status: StatusCompleted, Triggered: p.started,
		Duration: done.Sub(p.started), Acked: md.Duration, Size: total, Incremental: incr, Uploaded: uploaded, Alignment: maxAlignment(p.acks)}
	c.recordLocked(rec)
	// Older pending checkpoints (a savepoint forced past one still
	// aligning) are subsumed: they end before Retain removes their
	// directories.
	var older []*pendingCheckpoint
	for id, q := range c.pending {
		if id < p.id && q.timer != nil {
			older = append(older, q)
			delete(c.pending, id)
			q.timer.Stop()
		}
	}
	c.mu.Unlock()
	for _, q := range older {
		c.fail(q, fmt.Errorf("checkpoint %d: %w (%d)", q.id, ErrSubsumed, p.id), false)
	}
	c.cfg.Job.NotifyComplete(p.id)
	// Bounded by the checkpoint timeout (the next completion waits).
	retainLimit := remoteCallTimeout
	if c.cfg.Options.Timeout > 0 {
		retainLimit = c.cfg.Options.Timeout
	}
	c.cfg.Storage.retainWithin(c.cfg.Options.NumRetained, retainLimit)
	if c.cfg.Recorded != nil {
		c.cfg.Recorded(rec)
	}
	p.done <- result{md: md}
}

func (c *Coordinator) abort(id int64, err error, count bool) {
	c.mu.Lock()
	p := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if p == nil {
		return
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	c.fail(p, err, count)
}

func (c *Coordinator) fail(p *pendingCheckpoint, err error, count bool) {
	// Within the checkpoint's timeout: an object store that does not
	// answer fails the checkpoint once, not again through its cleanup.
	limit := remoteCallTimeout
	if c.cfg.Options.Timeout > 0 {
		limit = c.cfg.Options.Timeout
	}
	c.cfg.Storage.discardWithin(p.id, limit)
	c.cfg.Job.NotifyAborted(p.id)
	c.mu.Lock()
	c.lastEnd = c.cfg.Now()
	rec := Record{ID: p.id, Savepoint: p.savepoint, Status: StatusFailed, Triggered: p.started,
		Duration: c.lastEnd.Sub(p.started), Alignment: maxAlignment(p.acks), Failure: err.Error()}
	c.recordLocked(rec)
	tooMany, inRow := false, 0
	// A failed savepoint is the caller's error: the job goes on as it was.
	count = count && !p.savepoint && !errors.Is(err, ErrFenced)
	if count {
		c.stats.Failed++
		c.failuresInRow++
		inRow = c.failuresInRow
		tooMany = c.failuresInRow > c.cfg.Options.TolerableFailures
	}
	c.mu.Unlock()
	if c.cfg.Recorded != nil {
		c.cfg.Recorded(rec)
	}
	p.done <- result{err: err}
	if count && c.cfg.Failed != nil {
		c.cfg.Failed(p.id, err, inRow)
	}
	switch {
	case c.cfg.Fail == nil:
	case errors.Is(err, ErrFenced):
		// Another process took the job over: no later checkpoint can
		// complete, so the job fails now, whatever it tolerates.
		c.cfg.Fail(err)
	case tooMany:
		c.cfg.Fail(fmt.Errorf("%w (%d): %w", ErrTooManyFailures, c.cfg.Options.TolerableFailures, err))
	}
}

// Stats returns the checkpoint statistics so far.
func (c *Coordinator) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Durations.Buckets = append([]uint64(nil), st.Durations.Buckets...)
	return st
}

// Close stops triggering and discards pending checkpoints. A checkpoint
// that every task acknowledged and that is uploading to an object store
// is not pending: Close waits until it completes or fails (within the
// checkpoint timeout), so nothing writes a job's checkpoints once its
// coordinator is closed.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	pending := c.pending
	c.pending = map[int64]*pendingCheckpoint{}
	c.mu.Unlock()
	for _, p := range pending {
		if p.timer != nil {
			p.timer.Stop()
		}
		c.cfg.Storage.Discard(p.id)
	}
	c.uploading.Wait()
}
