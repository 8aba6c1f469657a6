package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/internal/failpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// ErrStopped is the error of a job stopped by Stop or Cancel.
var ErrStopped = errors.New("job stopped")

// Options configure a job. The zero value of each field is its default; a
// negative size is an error of Start (ErrBadOptions), never taken for the
// default.
type Options struct {
	// DataDir is where connectors and state keep files.
	DataDir string
	// JobName names the job to connectors (TableSpec.Job).
	JobName string
	// BatchSize is the preferred rows per batch (default DefaultBatchSize).
	BatchSize int
	// ChannelCapacity is the number of elements an edge buffers before the
	// sender blocks (default DefaultChannelCapacity): the backpressure bound.
	ChannelCapacity int
	// Mem allocates batches (default memory.DefaultAllocator).
	Mem memory.Allocator
	// Collect receives the rows of a plan's collecting sink (an ad-hoc
	// SELECT), from one goroutine, in order. The runtime releases b.Rec
	// after Collect returns. Required when the plan has such a sink.
	Collect func(b Batch) error
	// Backend creates the keyed state of stateful operator subtasks
	// (default: the in-memory backend).
	Backend state.Backend
	// StateDir holds the working directories of the subtasks' stores
	// (default: a temporary directory removed when the job ends).
	StateDir string
	// StateCacheEntries bounds the keys a stateful subtask keeps in memory
	// above its store (default 1,000,000); beyond it the cache writes back
	// and evicts ('state.backend.cache.max-entries').
	StateCacheEntries int
	// Memory is the byte budget of the state held in memory, shared by
	// every stateful subtask of the jobs given it (nil: no bound but
	// StateCacheEntries). Each subtask takes a share of it while it runs.
	Memory *state.Budget
	// Checkpoint enables checkpoints (nil: none).
	Checkpoint *CheckpointOptions
	// Restore is the checkpoint or savepoint to start from (nil: fresh).
	Restore *checkpoint.Metadata
	// IgnoreUnclaimedState lets a restore drop the state of operators the
	// plan no longer has ('execution.state-recovery.ignore-unclaimed-state').
	IgnoreUnclaimedState bool
	// Now is the statement time for CURRENT_TIMESTAMP (default: time.Now()).
	Now time.Time
	// LatencyInterval is how often each source subtask sends a latency
	// marker ('metrics.latency.interval'; 0, the default: never). See
	// latency.go.
	LatencyInterval time.Duration
}

// DefaultChannelCapacity is Options.ChannelCapacity's default.
const DefaultChannelCapacity = 8

// DefaultStateCacheEntries is Options.StateCacheEntries's default.
const DefaultStateCacheEntries = 1_000_000

// ensureDefaults validates o and fills in the defaults of its zero fields.
// A negative size is an error naming the field and its value (the session
// validates the options it fills in when they are SET; this catches any
// other caller), never replaced by a default.
func (o *Options) ensureDefaults() error {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"BatchSize", &o.BatchSize, DefaultBatchSize},
		{"ChannelCapacity", &o.ChannelCapacity, DefaultChannelCapacity},
		{"StateCacheEntries", &o.StateCacheEntries, DefaultStateCacheEntries},
	} {
		switch {
		case *f.v < 0:
			return fmt.Errorf("%w: Options.%s must be a positive integer (or 0 for the default, %d), got %d", ErrBadOptions, f.name, f.def, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	if o.LatencyInterval < 0 {
		return fmt.Errorf("%w: Options.LatencyInterval must not be negative, got %v", ErrBadOptions, o.LatencyInterval)
	}
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.Backend == nil {
		o.Backend = state.MemoryBackend{}
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	return nil
}

// ErrBadOptions is wrapped by Start's error for Options it cannot run with.
var ErrBadOptions = errors.New("bad job options")

// Metrics are a job's counters.
type Metrics struct {
	// RecordsIn counts rows read by the sources; RecordsOut rows written by
	// the sinks.
	RecordsIn, RecordsOut int64
	// Skipped counts bad records the sources skipped.
	Skipped int64
	// Tombstones counts the messages without a value (Kafka tombstones)
	// the sources skipped: an append-only table has no row for them.
	Tombstones int64
	// LateRecords counts records window operators dropped because every
	// window they belong to had already fired (event time behind the
	// watermark) and no late-records table was set; LateRouted counts those
	// written to the late-records table instead.
	LateRecords, LateRouted int64
	// StateExpired counts the rows of regular joins and the groups of
	// group aggregations dropped by their state TTL
	// ('table.exec.state.ttl', the STATE_TTL hint).
	StateExpired int64
	// OpenWindows counts the windows the window aggregations (TUMBLE, HOP,
	// CUMULATE) hold state for, not fired yet, summed over their subtasks;
	// WindowGroups the (window, key) groups in their state caches, which is
	// all of their state while a cache stays within
	// Options.StateCacheEntries. Each subtask updates both after every batch
	// and every firing; they are what a state-stays-flat check samples.
	OpenWindows, WindowGroups int64
	// JoinRows counts the rows the interval joins hold in state (both
	// sides, every subtask), updated after every batch and watermark.
	JoinRows int64
	// Watermark is the event time the output has reached: the lowest
	// watermark over the sinks' inputs (microseconds since the epoch), or
	// NoWatermark while some sink has not received one (no event time, or
	// not yet); math.MaxInt64 once every input ended.
	Watermark int64
	// Waiting lists what source subtasks wait for (Waiter: a Kafka topic
	// not created yet), each text once, sorted; nil when none waits.
	Waiting []string
}

// NoWatermark is Metrics.Watermark when there is none.
const NoWatermark = minWatermark

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

	// bg counts the goroutines the job runs beside its subtasks that drive
	// its checkpoints (the coordinator's periodic triggers, the final
	// checkpoint of a bounded job): they make and remove checkpoint
	// directories, so the job ends only after them. bgCtx, a child of ctx,
	// ends them once every subtask returned.
	bg     sync.WaitGroup
	bgCtx  context.Context
	stopBg context.CancelFunc

	recordsIn, recordsOut atomic.Int64
	// lateRecords counts records dropped as late (Metrics.LateRecords),
	// lateRouted those routed to the late-records table.
	lateRecords, lateRouted atomic.Int64
	// stateExpired counts the rows state TTLs dropped (Metrics.StateExpired).
	stateExpired atomic.Int64
	// align is the job's watermark alignment groups by name.
	alignMu sync.Mutex
	align   map[string]*alignGroup

	// latencySources are the ids of the source operators, by the index
	// latency markers carry (nil with markers off).
	latencySources []string
	// started is when Start began (the zero time of latency markers).
	started time.Time

	// cp is the checkpoint side of the job (nil without checkpoints).
	cp *checkpointing
	// stateDir holds the working directories of the subtasks' stores;
	// removeStateDir says the job made it and removes it at the end.
	stateDir       string
	removeStateDir bool

	errOnce sync.Once
	err     error
	done    chan struct{}
}

// Start builds the subtasks of g, wires their channels and starts one
// goroutine per subtask. It returns once everything runs; Wait returns the
// job's outcome. Once ctx is done, building stops with ctx's error (a job
// of many subtasks takes a while to build), and so does the job.
func Start(ctx context.Context, g *planner.Graph, opts Options) (*Job, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	j := &Job{graph: g, opts: opts, done: make(chan struct{}), started: time.Now()}
	j.ctx, j.cancel = context.WithCancelCause(ctx)
	byOp := map[*planner.Operator][]*subtask{}
	if opts.LatencyInterval > 0 {
		j.latencySources = latencySources(g)
	}
	for _, op := range g.Operators {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := 0; i < op.Parallelism; i++ {
			t := &subtask{job: j, op: op, index: i}
			t.m.stateBytes.Store(-1)
			t.m.stateEntries.Store(-1)
			t.inWatermark.Store(minWatermark)
			t.m.outWatermark.Store(minWatermark)
			t.setupLatency(j.started)
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
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				out := &output{edge: e, input: inputIdx, partition: e.Partition, keys: e.Keys, maxPar: g.MaxParallelism, sender: si, bp: &s.m.backpressured}
				for ri, r := range receivers {
					if !connected(e.Partition, si, ri) {
						continue
					}
					out.targets = append(out.targets, target{task: r, from: r.addSender(inputIdx)})
				}
				if e.Late {
					s.lateOutputs = append(s.lateOutputs, out)
				} else {
					s.outputs = append(s.outputs, out)
				}
			}
		}
	}
	j.stateDir = opts.StateDir
	if j.stateDir == "" {
		d, err := os.MkdirTemp("", "streamsql-state-")
		if err != nil {
			return nil, err
		}
		j.stateDir, j.removeStateDir = d, true
	}
	if opts.Restore != nil {
		if err := j.mapRestore(); err != nil {
			j.cleanup()
			return nil, err
		}
	}
	for _, t := range j.tasks {
		if err := ctx.Err(); err != nil {
			j.closeStores()
			j.cleanup()
			return nil, err
		}
		t.inbox = make(chan Element, opts.ChannelCapacity*max(1, t.numSenders))
		t.ctl = make(chan control, 16)
		if err := t.build(); err != nil {
			j.closeStores()
			j.cleanup()
			return nil, fmt.Errorf("%s: %w", t.name(), err)
		}
	}
	if opts.Checkpoint != nil {
		if err := j.setupCheckpointing(); err != nil {
			j.cleanup()
			return nil, err
		}
	}
	if opts.Restore != nil {
		failpoint.Hit(failpoint.DuringRestore)
	}
	j.bgCtx, j.stopBg = context.WithCancel(j.ctx)
	for _, t := range j.tasks {
		j.wg.Add(1)
		go t.run()
	}
	if j.cp != nil {
		j.goBackground(j.cp.coord.Run)
	}
	ended := make(chan struct{})
	go j.abortStoresOnCancel(ended)
	go func() {
		j.wg.Wait()
		close(ended)
		// Nothing triggers or completes a checkpoint once the coordinator
		// is closed and the job has ended: its background goroutines have
		// returned first.
		j.stopBg()
		j.bg.Wait()
		if j.cp != nil {
			j.cp.coord.Close()
		}
		j.fail(nil)
		j.cleanup()
		close(j.done)
	}()
	return j, nil
}

// goBackground runs fn(j.bgCtx) in a goroutine that the job's end waits
// for (Job.bg). It is called by Start, or by a subtask's goroutine (so
// before the end waits).
func (j *Job) goBackground(fn func(ctx context.Context)) {
	j.bg.Add(1)
	go func() {
		defer j.bg.Done()
		fn(j.bgCtx)
	}()
}

// abortStoresOnCancel aborts the subtasks' stores when the job is canceled
// (stopped, or failed) before it ended: a subtask blocked in its store (a
// Pebble flush that cannot be written, retried for ever) then returns, so
// that stopping a job never waits on the disk.
func (j *Job) abortStoresOnCancel(ended <-chan struct{}) {
	select {
	case <-ended:
		return
	case <-j.ctx.Done():
	}
	cause := context.Cause(j.ctx)
	for _, t := range j.tasks {
		if a, ok := t.store.(state.Aborter); ok {
			a.Abort(cause)
		}
	}
}

// closeStores closes the stores opened by a Start that then failed.
func (j *Job) closeStores() {
	for _, t := range j.tasks {
		t.share.Close()
		if t.store != nil {
			t.store.Close()
		}
	}
}

// cleanup removes what the job made for itself.
func (j *Job) cleanup() {
	if j.removeStateDir {
		os.RemoveAll(j.stateDir)
	}
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
// first error otherwise (ErrStopped when stopped). The job has ended once
// its subtasks and the goroutines that drive its checkpoints have
// returned: nothing the job started writes under its state or checkpoint
// directories after Wait returns.
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
	m := Metrics{RecordsIn: j.recordsIn.Load(), RecordsOut: j.recordsOut.Load(), LateRecords: j.lateRecords.Load(), LateRouted: j.lateRouted.Load(), StateExpired: j.stateExpired.Load(),
		Watermark: maxWatermark}
	sinks := 0
	for _, t := range j.tasks {
		if c, ok := t.source.(SkipCounter); ok {
			m.Skipped += c.SkippedRecords()
		}
		if c, ok := t.source.(TombstoneCounter); ok {
			m.Tombstones += c.TombstonesSkipped()
		}
		if w, ok := t.source.(Waiter); ok {
			if s := w.Waiting(); s != "" && !slices.Contains(m.Waiting, s) {
				m.Waiting = append(m.Waiting, s)
			}
		}
		if w, ok := t.impl.(windowStateGauge); ok {
			windows, groups := w.windowState()
			m.OpenWindows += windows
			m.WindowGroups += groups
		}
		if g, ok := t.impl.(joinRowsGauge); ok {
			m.JoinRows += g.joinRows()
		}
		if _, ok := t.op.Spec.(*planner.SinkSpec); ok {
			sinks++
			m.Watermark = min(m.Watermark, t.inWatermark.Load())
		}
	}
	if sinks == 0 {
		m.Watermark = NoWatermark
	}
	slices.Sort(m.Waiting)
	return m
}

// SubtaskMetrics are one subtask's counters (Job.SubtaskMetrics).
type SubtaskMetrics struct {
	// Operator is the stable operator id (planner identity), Name its
	// EXPLAIN name; Subtask its index, from 0.
	Operator, Name string
	Subtask        int
	// RecordsIn counts the rows the subtask took in (a source: read),
	// RecordsOut the rows it emitted (a sink: none).
	RecordsIn, RecordsOut int64
	// Busy is the time spent processing batches, Backpressured the time
	// blocked on a full downstream inbox.
	Busy, Backpressured time.Duration
	// Watermark is the last watermark the subtask sent downstream (a
	// sink: its input's), NoWatermark when none yet.
	Watermark int64
	// StateEntries is the entries its operator keeps in state where the
	// operator reports it (window groups, interval join rows; else the
	// keys a stateful operator holds in memory), else -1; StateBytes the
	// bytes a stateful operator's state holds in memory (its part of the
	// state memory budget, 'taskmanager.memory.managed.size'), else -1.
	StateEntries, StateBytes int64
	// Lag is a source's lag per partition where the source reports it
	// (LagReporter: Kafka), else nil.
	Lag []PartitionLag
	// Latency are the ages of the latency markers that reached the
	// subtask, one histogram per source operator whose markers did (nil
	// with 'metrics.latency.interval' off, and for a source).
	Latency []LatencyHistogram
}

// SubtaskMetrics snapshots the counters of every subtask, in plan order.
// It reads atomics only: a scrape costs the job nothing.
func (j *Job) SubtaskMetrics() []SubtaskMetrics {
	out := make([]SubtaskMetrics, 0, len(j.tasks))
	for _, t := range j.tasks {
		m := SubtaskMetrics{Operator: t.op.ID, Name: t.op.Name(), Subtask: t.index,
			RecordsIn: t.m.recordsIn.Load(), RecordsOut: t.m.recordsOut.Load(),
			Busy: time.Duration(t.m.busy.Load()), Backpressured: time.Duration(t.m.backpressured.Load()),
			Watermark: t.m.outWatermark.Load(), StateEntries: t.m.stateEntries.Load(), StateBytes: t.m.stateBytes.Load()}
		if len(t.outputs) == 0 && len(t.lateOutputs) == 0 {
			m.Watermark = t.inWatermark.Load()
		}
		if w, ok := t.impl.(windowStateGauge); ok {
			_, m.StateEntries = w.windowState()
		}
		if t.op.HasKeyedState() && m.StateEntries < 0 {
			m.StateEntries, m.StateBytes = 0, max(m.StateBytes, 0)
		}
		if g, ok := t.impl.(joinRowsGauge); ok {
			m.StateEntries = g.joinRows()
		}
		if l, ok := t.source.(LagReporter); ok {
			m.Lag = l.Lag()
		}
		m.Latency = t.latencyMetrics()
		out = append(out, m)
	}
	return out
}

// windowStateGauge is an operator that keeps windows open: it reports how
// many and their groups (Metrics.OpenWindows, WindowGroups), from any
// goroutine.
type windowStateGauge interface {
	windowState() (windows, groups int64)
}

func (a *windowAggOp) windowState() (int64, int64) {
	return a.gauge.windows.Load(), a.gauge.groups.Load()
}

// joinRowsGauge is an operator that holds join rows in state (an interval
// join): joinRows reports how many, both inputs' together, in memory or
// in the store (Metrics.JoinRows, SubtaskMetrics.StateEntries). It is
// called from any goroutine, so it reads a counter the operator updates
// after every batch and watermark.
type joinRowsGauge interface {
	joinRows() int64
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
		restored:  t.restored,
		store:     t.store,
		share:     t.share,
		m:         &t.m,
	}
}
