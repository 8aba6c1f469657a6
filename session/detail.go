package session

import (
	"context"
	"fmt"
	"maps"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// JobDetail is one job as the server's REST API shows it: its JobInfo, the
// statement that submitted it, and its physical plan with per-subtask
// metrics.
type JobDetail struct {
	JobInfo
	Statement string
	Operators []OperatorDetail
	// CheckpointHistory is the newest checkpoints of every attempt, oldest
	// first (at most checkpoint.HistorySize).
	CheckpointHistory []checkpoint.Record
}

// OperatorDetail is one operator of a job's physical plan.
type OperatorDetail struct {
	// ID is the stable operator id (planner identity).
	ID, Name    string
	Parallelism int
	Inputs      []InputDetail
	// Subtasks are the counters of its subtasks, summed over the job's
	// attempts (a restart does not set them back).
	Subtasks []exec.SubtaskMetrics
	// Latency are the ages of the latency markers that reached the
	// operator, its subtasks' histograms added, one per source operator
	// ('metrics.latency.interval'; nil when none did).
	Latency []exec.LatencyHistogram
}

// InputDetail is one input edge of an operator.
type InputDetail struct {
	From, Partitioning string
	Late               bool
}

type subtaskKey struct {
	op  string
	idx int
}

// JobDetail describes the job with the given id (or name).
func (s *Session) JobDetail(id string) (JobDetail, error) {
	e := s.jobs.find(id)
	if e == nil {
		return JobDetail{}, fmt.Errorf("%w '%s'", ErrNoSuchJob, id)
	}
	d := JobDetail{JobInfo: e.info(), Statement: e.text, CheckpointHistory: e.checkpointHistory()}
	cur := map[subtaskKey]exec.SubtaskMetrics{}
	for _, m := range e.subtaskMetrics() {
		cur[subtaskKey{m.Operator, m.Subtask}] = m
	}
	for _, op := range e.graph.Operators {
		od := OperatorDetail{ID: op.ID, Name: op.Name(), Parallelism: op.Parallelism}
		for _, in := range op.Inputs {
			od.Inputs = append(od.Inputs, InputDetail{From: in.From.ID, Partitioning: in.Partition.String(), Late: in.Late})
		}
		for i := 0; i < op.Parallelism; i++ {
			m, ok := cur[subtaskKey{op.ID, i}]
			if !ok {
				m = exec.SubtaskMetrics{Operator: op.ID, Name: op.Name(), Subtask: i, Watermark: exec.NoWatermark, StateEntries: -1, StateBytes: -1}
			}
			od.Subtasks = append(od.Subtasks, m)
			od.Latency = exec.MergeLatency(od.Latency, m.Latency)
		}
		d.Operators = append(d.Operators, od)
	}
	return d, nil
}

// JobDone is closed when the job with the given id has ended (nil for an
// unknown id).
func (s *Session) JobDone(id string) <-chan struct{} {
	e := s.jobs.find(id)
	if e == nil {
		return nil
	}
	return e.done
}

// Savepoint takes a savepoint in format f ("": canonical) of a running job
// and leaves it running. It returns the savepoint's path.
func (s *Session) Savepoint(ctx context.Context, id string, f checkpoint.Format) (string, error) {
	e := s.jobs.find(id)
	if e == nil {
		return "", fmt.Errorf("%w '%s'", ErrNoSuchJob, id)
	}
	cur := e.attempt()
	if cur == nil || cur.Coordinator() == nil {
		return "", fmt.Errorf("job %s (%s) is not running: no savepoint taken", e.id, e.name)
	}
	md, release, err := cur.Coordinator().Savepoint(ctx, f)
	defer release()
	if err != nil {
		return "", fmt.Errorf("savepoint of job %s failed: %w", e.id, err)
	}
	defer s.discardStaged(e, md)
	root := s.Settings().SavepointDir
	if root == "" {
		root = s.path("savepoints")
	}
	return s.writeSavepoint(ctx, md, root)
}

// subtaskMetrics are the job's subtask counters: those of its ended
// attempts plus the running one's.
func (e *jobEntry) subtaskMetrics() []exec.SubtaskMetrics {
	e.mu.Lock()
	defer e.mu.Unlock()
	sum := map[subtaskKey]exec.SubtaskMetrics{}
	var order []subtaskKey
	add := func(ms []exec.SubtaskMetrics, live bool) {
		for _, m := range ms {
			k := subtaskKey{m.Operator, m.Subtask}
			p, ok := sum[k]
			if !ok {
				order = append(order, k)
				sum[k] = m
				continue
			}
			p.RecordsIn += m.RecordsIn
			p.RecordsOut += m.RecordsOut
			p.Busy += m.Busy
			p.Backpressured += m.Backpressured
			p.Latency = exec.MergeLatency(p.Latency, m.Latency)
			if live {
				p.Watermark, p.StateEntries, p.StateBytes, p.Lag = m.Watermark, m.StateEntries, m.StateBytes, m.Lag
			}
			sum[k] = p
		}
	}
	add(e.prevSubtasks, false)
	if e.cur != nil {
		add(e.cur.SubtaskMetrics(), true)
	}
	out := make([]exec.SubtaskMetrics, 0, len(order))
	for _, k := range order {
		out = append(out, sum[k])
	}
	return out
}

// SetOptions are the options SET in the session (not the defaults).
func (s *Session) SetOptions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.opts)
}

// ReplaceOptions makes opts the options SET in the session, as if RESET
// then SET one by one; on an error nothing changes.
func (s *Session) ReplaceOptions(opts map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.opts
	s.opts = maps.Clone(opts)
	if s.opts == nil {
		s.opts = map[string]string{}
	}
	if err := s.update("", "", false); err != nil {
		s.opts = old
		return err
	}
	return nil
}

// StopWithSavepoint stops the job with the given id with a savepoint in
// format f ("": canonical; STOP JOB ... WITH SAVEPOINT [FORMAT f]) and
// returns the savepoint's path.
func (s *Session) StopWithSavepoint(ctx context.Context, id string, f checkpoint.Format) (string, error) {
	e := s.jobs.find(id)
	if e == nil {
		return "", fmt.Errorf("%w '%s'", ErrNoSuchJob, id)
	}
	return s.savepointAndStop(ctx, e, f)
}

// StopWithCheckpoint takes a final checkpoint of the job with the given id
// and stops it, keeping its checkpoints (whatever the retention option
// says), so that submitting its statement again resumes from that
// checkpoint. It returns the checkpoint's id; a job without checkpointing,
// or whose final checkpoint fails, is stopped all the same, its error said.
func (s *Session) StopWithCheckpoint(ctx context.Context, id string) (int64, error) {
	e := s.jobs.find(id)
	if e == nil {
		return 0, fmt.Errorf("%w '%s'", ErrNoSuchJob, id)
	}
	e.mu.Lock()
	e.keep = true
	e.mu.Unlock()
	defer e.stop()
	cur := e.attempt()
	if cur == nil || cur.Coordinator() == nil || !e.checkpointing {
		return 0, fmt.Errorf("job %s (%s) has no running attempt with checkpointing", e.id, e.name)
	}
	md, err := cur.Coordinator().Checkpoint(ctx)
	if err != nil {
		return 0, err
	}
	return md.ID, nil
}

// checkpointHistory is the history of the ended attempts and the running
// one.
func (e *jobEntry) checkpointHistory() []checkpoint.Record {
	e.mu.Lock()
	h, cur := e.history, e.cur
	e.mu.Unlock()
	if cur != nil {
		if c := cur.Coordinator(); c != nil {
			return appendHistory(append([]checkpoint.Record(nil), h...), c.History())
		}
	}
	return append([]checkpoint.Record(nil), h...)
}
