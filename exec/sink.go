package exec

import (
	"fmt"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/failpoint"
	"github.com/streamsql/streamsql/planner"
)

// sinkOp drives a connector Sink.
type sinkOp struct {
	t       *taskContext
	sink    Sink
	name    string
	pending []pendingCommit
	// ordered: the sink's next pre-commit waits for the outcome of the
	// checkpoints it pre-committed (OrderedCommitter). aborted are the
	// checkpoints above completed known to be aborted (the news may come
	// before the barrier: with two checkpoints in flight, their barriers
	// can reach two subtasks in different orders); completed is the
	// newest one completed, below which none can complete any more.
	ordered   bool
	aborted   map[int64]bool
	completed int64
}

// abort records that checkpoint id was aborted.
func (s *sinkOp) abort(id int64) {
	if id <= s.completed {
		return
	}
	if s.aborted == nil {
		s.aborted = map[int64]bool{}
	}
	s.aborted[id] = true
}

// undecided reports whether a checkpoint before id was pre-committed and
// is neither committed nor decided otherwise (aborted, or older than a
// completed one).
func (s *sinkOp) undecided(id int64) bool {
	for _, p := range s.pending {
		if p.id < id && p.id > s.completed && !s.aborted[p.id] {
			return true
		}
	}
	return false
}

// open opens the sink; after a restore it first commits what the restored
// checkpoint had pre-committed (a crash may have come between the
// checkpoint's completion and the commit; committing twice is harmless).
func (s *sinkOp) open(t *taskContext) error {
	s.t = t
	if err := s.sink.Open(t.ctx); err != nil {
		return err
	}
	if r := t.restored; r != nil {
		for _, h := range r.commits {
			if err := s.sink.Commit(t.ctx, r.checkpointID, h); err != nil {
				return fmt.Errorf("sink %s: recovering the commit of checkpoint %d: %w", s.name, r.checkpointID, err)
			}
		}
		failpoint.Hit(failpoint.AfterRestoreCommit)
	}
	return nil
}

// watermark hands the watermark to a WatermarkSink.
func (s *sinkOp) watermark(wm int64, _ *emitter) error {
	if w, ok := s.sink.(WatermarkSink); ok && wm != maxWatermark {
		w.Watermark(wm)
	}
	return nil
}

func (s *sinkOp) process(_ int, b Batch, _ *emitter) error {
	if err := s.sink.Write(s.t.ctx, b); err != nil {
		return fmt.Errorf("sink %s: %w", s.name, err)
	}
	s.t.job.recordsOut.Add(int64(b.Len()))
	return nil
}

// preCommit pre-commits the sink's open transaction for checkpoint cp and
// keeps its handle until the checkpoint completes (or a later one does).
func (s *sinkOp) preCommit(cp *snapshotContext) (checkpoint.SubtaskState, error) {
	h, err := s.sink.PreCommit(s.t.ctx, cp.id)
	if err != nil {
		return checkpoint.SubtaskState{}, fmt.Errorf("sink %s: pre-commit of checkpoint %d: %w", s.name, cp.id, err)
	}
	failpoint.Hit(failpoint.AfterPreCommit)
	s.pending = append(s.pending, pendingCommit{id: cp.id, handle: h})
	return checkpoint.SubtaskState{Inline: h}, nil
}

// commit commits, in order, every pre-committed checkpoint up to id: a
// checkpoint that was aborted after its pre-commit is committed with the
// next one that completes.
func (s *sinkOp) commit(id int64) error {
	n := 0
	for _, p := range s.pending {
		if p.id > id {
			break
		}
		if err := s.sink.Commit(s.t.ctx, p.id, p.handle); err != nil {
			return fmt.Errorf("sink %s: commit of checkpoint %d: %w", s.name, p.id, err)
		}
		s.t.job.committed(p.id)
		n++
	}
	s.pending = s.pending[n:]
	if id > s.completed {
		s.completed = id
		for a := range s.aborted {
			if a <= id {
				delete(s.aborted, a)
			}
		}
	}
	return nil
}

type pendingCommit struct {
	id     int64
	handle []byte
}

func (s *sinkOp) endInput(*emitter) error {
	if err := s.commit(1<<63 - 1); err != nil {
		return err
	}
	if err := s.sink.Finish(s.t.ctx); err != nil {
		return fmt.Errorf("sink %s: %w", s.name, err)
	}
	return nil
}

func (s *sinkOp) close() error { return s.sink.Close() }

// collectOp hands the rows of an ad-hoc query to Options.Collect.
type collectOp struct {
	t *taskContext
}

func (c *collectOp) open(t *taskContext) error {
	c.t = t
	if t.job.opts.Collect == nil {
		return fmt.Errorf("plan collects rows but the job has no Collect function")
	}
	return nil
}

func (c *collectOp) process(_ int, b Batch, _ *emitter) error {
	c.t.job.recordsOut.Add(int64(b.Len()))
	return c.t.job.opts.Collect(b)
}

func (c *collectOp) endInput(*emitter) error { return nil }
func (c *collectOp) close() error            { return nil }

// tableSpec fills what a connector learns about the job and the subtask.
func (j *Job) tableSpec(t *subtask) TableSpec {
	o := j.opts
	spec := TableSpec{Subtask: t.index, Parallelism: t.op.Parallelism, DataDir: o.DataDir, BatchSize: o.BatchSize,
		Mem: o.Mem, OperatorID: t.op.ID, ExactlyOnce: true}
	if c := o.Checkpoint; c != nil {
		spec.Job = c.JobName
		spec.CheckpointInterval = c.Options.Interval
		spec.ExactlyOnce = c.Options.Mode == checkpoint.ExactlyOnce
	}
	if o.JobName != "" {
		spec.Job = o.JobName
	}
	return spec
}

// scanOf is the scan a source operator reads (nil: op is no source).
func scanOf(op *planner.Operator) *planner.Scan {
	if s, ok := op.Spec.(*planner.SourceSpec); ok {
		return s.Scan
	}
	return nil
}

// newSource builds the connector source of a scan subtask.
func newSource(t *subtask) (Source, error) {
	sc := scanOf(t.op)
	tbl := sc.Table
	f, err := lookupSource(tbl.Connector)
	if err != nil {
		return nil, err
	}
	spec := t.job.tableSpec(t)
	spec.Table, spec.Schema, spec.Fields, spec.Options, spec.PrimaryKey = tbl.Name, tbl.Columns, sc.Fields, tbl.Options, tbl.PrimaryKey
	spec.Watermark = tbl.WatermarkColumn
	spec.PartitionKeys = tbl.PartitionKeys
	// The connector reads the physical columns (ROW columns with the fields
	// the plan reads); the subtask computes the others (proctime.go).
	spec.Schema = sc.PhysicalSchema()
	if len(tbl.Computed) > 0 {
		spec.Fields = sc.PhysicalFields()
	}
	return f(spec)
}

// newSink builds a sink subtask: a connector sink, or the collector of an
// ad-hoc query's rows.
func newSink(t *subtask) (operator, error) {
	tbl := t.op.Spec.(*planner.SinkSpec).Table
	if tbl == nil {
		return &collectOp{}, nil
	}
	f, err := lookupSink(tbl.Connector)
	if err != nil {
		return nil, err
	}
	spec := t.job.tableSpec(t)
	phys, _ := tbl.Physical() // computed columns are not written
	spec.Table, spec.Schema, spec.Options, spec.PrimaryKey = tbl.Name, phys, tbl.Options, tbl.PrimaryKey
	spec.PartitionKeys = tbl.PartitionKeys
	spec.Watermark = tbl.WatermarkColumn
	s, err := f(spec)
	if err != nil {
		return nil, err
	}
	o, ok := s.(OrderedCommitter)
	return &sinkOp{sink: s, name: tbl.Name, ordered: ok && o.CommitBeforeNextPreCommit()}, nil
}
