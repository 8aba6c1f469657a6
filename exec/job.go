package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// ErrStopped is the error of a job stopped by Stop or Cancel.
var ErrStopped = errors.New("job stopped")

// Options configure a job. The zero value of each field is its default.
type Options struct {
	// DataDir is where connectors and state keep files.
	DataDir string
	// BatchSize is the preferred rows per batch (default DefaultBatchSize).
	BatchSize int
	// ChannelCapacity is the number of elements an edge buffers before the
	// sender blocks (default 8): the backpressure bound.
	ChannelCapacity int
	// Mem allocates batches (default memory.DefaultAllocator).
	Mem memory.Allocator
	// Collect receives the rows of a plan's collecting sink (an ad-hoc
	// SELECT), from one goroutine, in order. The runtime releases b.Rec
	// after Collect returns. Required when the plan has such a sink.
	Collect func(b Batch) error
	// NewStore opens the keyed state of one stateful operator subtask
	// (default: an in-memory store).
	NewStore func(op *planner.Operator, subtask int) (state.Store, error)
	// Now is the statement time for CURRENT_TIMESTAMP (default: time.Now()).
	Now time.Time
}

func (o *Options) ensureDefaults() {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.ChannelCapacity <= 0 {
		o.ChannelCapacity = 8
	}
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.NewStore == nil {
		o.NewStore = func(*planner.Operator, int) (state.Store, error) { return state.NewMemory(), nil }
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
}

// Metrics are a job's counters.
type Metrics struct {
	// RecordsIn counts rows read by the sources; RecordsOut rows written by
	// the sinks.
	RecordsIn, RecordsOut int64
}

// Job is a running physical plan. Start it with Start; it ends when every
// sink has seen the end of its input (bounded plans), on the first error,
// or when stopped.
type Job struct {
	graph *planner.Graph
	opts  Options

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	tasks  []*subtask

	recordsIn, recordsOut atomic.Int64

	errOnce sync.Once
	err     error
	done    chan struct{}
}

// Start builds the subtasks of g, wires their channels and starts one
// goroutine per subtask. It returns once everything runs; Wait returns the
// job's outcome.
func Start(ctx context.Context, g *planner.Graph, opts Options) (*Job, error) {
	opts.ensureDefaults()
	j := &Job{graph: g, opts: opts, done: make(chan struct{})}
	j.ctx, j.cancel = context.WithCancelCause(ctx)
	byOp := map[*planner.Operator][]*subtask{}
	for _, op := range g.Operators {
		for i := 0; i < op.Parallelism; i++ {
			t := &subtask{job: j, op: op, index: i}
			byOp[op] = append(byOp[op], t)
			j.tasks = append(j.tasks, t)
		}
	}
	// Wire every edge: each receiving subtask counts its senders; each
	// sending subtask gets an output per downstream edge.
	for _, op := range g.Operators {
		for inputIdx, e := range op.Inputs {
			senders := byOp[e.From]
			receivers := byOp[op]
			for _, r := range receivers {
				r.inputs = append(r.inputs, 0)
			}
			for si, s := range senders {
				out := &output{edge: e, input: inputIdx, partition: e.Partition, keys: e.Keys, maxPar: g.MaxParallelism, sender: si}
				for ri, r := range receivers {
					if !connected(e.Partition, si, ri) {
						continue
					}
					out.targets = append(out.targets, target{task: r, from: r.addSender(inputIdx)})
				}
				s.outputs = append(s.outputs, out)
			}
		}
	}
	for _, t := range j.tasks {
		t.inbox = make(chan Element, opts.ChannelCapacity*max(1, t.numSenders))
		if err := t.build(); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", t.op.Name(), t.index, err)
		}
	}
	for _, t := range j.tasks {
		j.wg.Add(1)
		go t.run()
	}
	go func() {
		j.wg.Wait()
		j.fail(nil)
		close(j.done)
	}()
	return j, nil
}

func connected(p planner.Partitioning, sender, receiver int) bool {
	switch p {
	case planner.Forward:
		return sender == receiver
	case planner.Global:
		return receiver == 0
	}
	return true
}

// fail records the job's outcome (the first error wins) and cancels every
// subtask when err is not nil.
func (j *Job) fail(err error) {
	j.errOnce.Do(func() {
		j.err = err
		if err != nil {
			j.cancel(err)
		}
	})
}

// Wait blocks until the job ends and returns nil when it finished, the
// first error otherwise (ErrStopped when stopped).
func (j *Job) Wait() error {
	<-j.done
	return j.err
}

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Err returns the outcome of an ended job (nil while it runs).
func (j *Job) Err() error {
	select {
	case <-j.done:
		return j.err
	default:
		return nil
	}
}

// Cancel stops every subtask now; Wait then returns ErrStopped.
func (j *Job) Cancel() {
	j.fail(ErrStopped)
}

// Metrics returns the job's counters so far.
func (j *Job) Metrics() Metrics {
	return Metrics{RecordsIn: j.recordsIn.Load(), RecordsOut: j.recordsOut.Load()}
}

// Graph is the plan the job runs.
func (j *Job) Graph() *planner.Graph { return j.graph }

func (j *Job) newTaskContext(t *subtask) *taskContext {
	return &taskContext{
		ctx:       j.ctx,
		op:        t.op,
		subtask:   t.index,
		job:       j,
		mem:       j.opts.Mem,
		fctx:      &functions.Context{Mem: j.opts.Mem, Now: j.opts.Now.UnixMicro()},
		batchSize: j.opts.BatchSize,
	}
}
