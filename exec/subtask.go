package exec

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/internal/failpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// subtask is one parallel instance of an operator: a goroutine that owns
// the operator instance, reads its inbox and writes its outputs. Nothing of
// a subtask is touched by another goroutine except its inbox.
type subtask struct {
	job   *Job
	op    *planner.Operator
	index int

	inbox chan Element
	// inputs[i] is the number of senders on input i; numSenders the total.
	inputs     []int
	numSenders int
	outputs    []*output
	// lateOutputs are a window aggregate's side outputs, which carry the
	// records it found late (planner.Edge.Late).
	lateOutputs []*output

	impl operator
	// tc is what impl was opened with (runOperator).
	tc     *taskContext
	source Source
	// wm generates a source's watermarks (nil: its table has none).
	wm *watermarkGen
	// align is the source's watermark alignment group (nil: none) and
	// alignDrift its max drift in microseconds.
	align      *alignGroup
	alignDrift int64
	// scanB computes the computed columns a source reads and pt stamps
	// its processing time (nil: none; proctime.go).
	scanB *scanBuilder
	pt    *proctimeGen

	// ctl carries control messages (checkpoint triggers, completions).
	ctl chan control
	// restored is the subtask's state in the checkpoint restored from.
	restored *restoredState
	// store is the keyed state of a stateful operator; the operator closes
	// it, and share, its part of the state memory budget.
	store state.Store
	share *state.Share
	// inWatermark is the combined watermark of the subtask's inputs, for
	// Metrics (read from other goroutines); fctx is the operator's function
	// context, which CURRENT_WATERMARK reads it from.
	inWatermark atomic.Int64
	fctx        *functions.Context
	// m are the subtask's counters (SubtaskMetrics), added to once per
	// batch by its goroutine and read by any.
	m subtaskCounters
	// With latency markers on, a source's marks schedules the markers it
	// sends and an operator's lat records their ages (latency.go); both
	// nil otherwise.
	marks *markerClock
	lat   *latencyStats
}

// subtaskCounters are one subtask's metrics: atomics its goroutine adds to
// once per batch (never per row), read at any time by Job.SubtaskMetrics.
type subtaskCounters struct {
	recordsIn, recordsOut atomic.Int64
	// busy is the time spent processing batches, backpressured the time
	// blocked sending to a full inbox downstream (nanoseconds).
	busy, backpressured atomic.Int64
	// outWatermark is the last watermark the subtask sent downstream.
	outWatermark atomic.Int64
	// stateBytes and stateEntries are what a stateful operator holds in
	// memory (bytes, keys), as it last reported (taskContext.reportState);
	// -1 until it does.
	stateBytes, stateEntries atomic.Int64
}

// timedProcess runs fn, the processing of one batch, and adds its
// duration, less the time blocked downstream meanwhile, to the busy time.
func (t *subtask) timedProcess(fn func() error) error {
	start, bp := time.Now(), t.m.backpressured.Load()
	err := fn()
	t.m.busy.Add(int64(time.Since(start)) - (t.m.backpressured.Load() - bp))
	return err
}

// addSender registers one more sending channel on input and returns its
// index among all of the subtask's channels.
func (t *subtask) addSender(input int) int {
	t.inputs[input]++
	t.numSenders++
	return t.numSenders - 1
}

func (t *subtask) name() string {
	return fmt.Sprintf("%s (%d/%d)", t.op.Name(), t.index+1, t.op.Parallelism)
}

// build creates the operator instance.
func (t *subtask) build() error {
	if sc := scanOf(t.op); sc != nil {
		src, err := newSource(t)
		if err != nil {
			return err
		}
		t.source = src
		if t.wm, err = newWatermarkGen(t, time.Now()); err != nil {
			return err
		}
		t.scanB, t.pt = newScanBuilder(t, sc), newProctimeGen(sc)
		if w := sc.Watermark; w != nil && w.Alignment.Group != "" {
			t.align, t.alignDrift = t.job.alignGroupOf(w.Alignment.Group), w.Alignment.MaxDrift.Microseconds()
			t.align.join(t)
		}
		switch r := t.restored; {
		case r == nil:
		case r.rescaled != nil:
			rs, ok := src.(Rescalable)
			if !ok {
				return fmt.Errorf("checkpoint %d was taken with parallelism %d; the '%s' connector cannot resume at parallelism %d",
					r.checkpointID, len(r.rescaled), sc.Table.Connector, t.op.Parallelism)
			}
			if err := rs.RestoreRescaled(r.rescaled); err != nil {
				return fmt.Errorf("restoring the positions of checkpoint %d: %w", r.checkpointID, err)
			}
		case len(r.inline) > 0:
			if err := src.Restore(r.inline); err != nil {
				return fmt.Errorf("restoring the position of checkpoint %d: %w", r.checkpointID, err)
			}
		}
		return nil
	}
	impl, err := newOperator(t)
	if err != nil {
		return err
	}
	t.impl = impl
	if t.op.HasKeyedState() {
		// State is opened (and restored) here, before the job runs, so that
		// a damaged checkpoint fails Start and the caller can fall back to
		// an older one.
		if t.store, err = t.job.openStore(t); err != nil {
			return err
		}
		if b := t.job.opts.Memory; b != nil {
			t.share = b.Join()
		}
	}
	return nil
}

func (t *subtask) run() {
	defer t.job.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			t.job.fail(fmt.Errorf("internal error in %s: %v\n%s", t.name(), r, debug.Stack()))
		}
	}()
	var err error
	if t.source != nil {
		err = t.runSource()
	} else {
		err = t.runOperator()
	}
	if err != nil && !errors.Is(err, errCanceled) {
		t.job.fail(err)
	}
}

var errCanceled = errors.New("canceled")

// handleControl serves a control message in an operator subtask.
func (t *subtask) handleControl(c control) error {
	switch c.kind {
	case ctlComplete:
		if s, ok := t.impl.(committer); ok {
			if err := s.commit(c.id); err != nil {
				return fmt.Errorf("%s: %w", t.name(), err)
			}
		}
	case ctlAborted:
		if s, ok := t.impl.(*sinkOp); ok {
			s.abort(c.id)
		}
	}
	return nil
}

func (t *subtask) emitter() *emitter {
	return &emitter{task: t}
}

func (t *subtask) runSource() (err error) {
	ctx := t.job.ctx
	em := t.emitter()
	defer func() {
		if cerr := t.source.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: close: %w", t.name(), cerr)
		}
	}()
	defer t.announce(true)
	if err := t.source.Open(ctx); err != nil {
		return fmt.Errorf("%s: %w", t.name(), err)
	}
	ended := false
	for {
		if ctx.Err() != nil {
			return errCanceled
		}
		// Between two batches: control messages. A source at its end waits
		// for them (checkpoints, then the order to finish); so does one
		// paused by its watermark alignment group, until the group lets
		// it read on.
		for {
			var c control
			paused, moved := false, (<-chan struct{})(nil)
			if !ended && t.wm != nil {
				paused, moved = t.align.pause(t.wm.emitted, t.alignDrift)
			}
			if ended || paused {
				select {
				case c = <-t.ctl:
				case <-moved:
					continue
				case <-ctx.Done():
					return errCanceled
				}
			} else {
				select {
				case c = <-t.ctl:
				default:
				}
				if c == (control{}) {
					break
				}
			}
			switch c.kind {
			case ctlTrigger:
				st, err := t.source.Snapshot()
				if err != nil {
					t.job.cp.coord.Abort(c.id, fmt.Errorf("%s: %w", t.name(), err))
					continue
				}
				t.ack(c.id, checkpoint.SubtaskState{Inline: st})
				if err := em.broadcast(Element{Kind: KindBarrier, Barrier: Barrier{ID: c.id, Savepoint: c.savepoint}}); err != nil {
					return err
				}
			case ctlComplete:
				if l, ok := t.source.(CheckpointListener); ok {
					if err := l.NotifyCheckpointComplete(ctx, c.id); err != nil {
						return fmt.Errorf("%s: checkpoint %d complete: %w", t.name(), c.id, err)
					}
				}
			case ctlFinish:
				return em.broadcast(Element{Kind: KindEnd})
			}
		}
		b, err := t.source.Next(ctx)
		switch {
		case err == nil:
			t.job.recordsIn.Add(int64(b.Len()))
			t.m.recordsIn.Add(int64(b.Len()))
			now := time.Now()
			if err := t.timedProcess(func() error {
				if t.scanB != nil {
					if b, err = t.scanB.build(b, t.pt.stamp(now)); err != nil {
						return fmt.Errorf("source %s: %w", scanOf(t.op).Table.Name, err)
					}
				}
				if err := t.wm.observe(t.source, b, now); err != nil {
					b.Rec.Release()
					return fmt.Errorf("source %s: %w", scanOf(t.op).Table.Name, err)
				}
				return em.emit(b)
			}); err != nil {
				return err
			}
			if err := t.wm.forward(t.source, em, now); err != nil {
				return err
			}
			t.announce(false)
			if err := t.pt.forward(em, now); err != nil {
				return err
			}
			if err := t.maybeMark(em, now); err != nil {
				return err
			}
		case errors.Is(err, ErrNoData):
			now := time.Now()
			if err := t.wm.forward(t.source, em, now); err != nil {
				return err
			}
			t.announce(false)
			if err := t.pt.forward(em, now); err != nil {
				return err
			}
			if err := t.maybeMark(em, now); err != nil {
				return err
			}
		case errors.Is(err, io.EOF):
			// A processing-time source ends at its clock (proctime.go).
			if err := t.pt.forward(em, time.Now()); err != nil {
				return err
			}
			if err := t.wm.end(em); err != nil {
				return err
			}
			t.announce(true)
			if t.job.cp == nil {
				return em.broadcast(Element{Kind: KindEnd})
			}
			ended = true
			if !failpoint.Armed(failpoint.HoldAtEnd) {
				t.job.sourceFinished()
			}
		case ctx.Err() != nil:
			return errCanceled
		default:
			return fmt.Errorf("source %s: %w", scanOf(t.op).Table.Name, err)
		}
	}
}

// announce tells the source's alignment group (if any) its watermark, or
// that its input ended (or it stopped).
func (t *subtask) announce(ended bool) {
	if t.align == nil {
		return
	}
	if ended || t.wm == nil {
		t.align.announce(t, maxWatermark, false, true)
		return
	}
	t.align.announce(t, t.wm.emitted, t.wm.idle, false)
}

func (t *subtask) runOperator() (err error) {
	ctx := t.job.ctx
	tc := t.job.newTaskContext(t)
	t.tc = tc
	t.fctx = tc.fctx
	em := t.emitter()
	defer func() {
		if cerr := tc.closeOperator(t.impl); err == nil && cerr != nil {
			err = fmt.Errorf("%s: close: %w", t.name(), cerr)
		}
	}()
	if err := t.impl.open(tc); err != nil {
		return fmt.Errorf("%s: %w", t.name(), err)
	}
	if t.numSenders == 0 {
		// An operator without inputs (VALUES) produces everything at the end
		// of its (empty) input, then takes part in no checkpoint.
		if err := t.impl.endInput(em); err != nil {
			return fmt.Errorf("%s: %w", t.name(), err)
		}
		if t.job.cp != nil {
			t.job.cp.coord.Finished(t.checkpointTask())
		}
		return em.broadcast(Element{Kind: KindEnd})
	}
	al := newAligner(t.numSenders)
	if t.job.cp != nil && t.job.cp.mode == checkpoint.AtLeastOnce {
		al.tracker = newBarrierTracker(t.numSenders)
	}
	// aligned takes the snapshot of checkpoint b and sends its barrier on;
	// output the operator holds back goes first (minibatch.go).
	buffering, _ := t.impl.(bufferingOperator)
	_, commits := t.impl.(committer)
	ordered, _ := t.impl.(*sinkOp)
	aligned := func(b Barrier) error {
		// A sink commits the checkpoints whose completion it was told of
		// before it pre-commits the next one: the transaction it writes
		// then could wait for rows that an earlier one, prepared and not
		// yet committed, holds (connectors/jdbc). The completion and the
		// barrier may both be waiting; the loop below serves either first.
		for commits {
			select {
			case c := <-t.ctl:
				if err := t.handleControl(c); err != nil {
					return err
				}
				continue
			default:
			}
			break
		}
		// An OrderedCommitter waits for the outcome of the checkpoints it
		// pre-committed: the coordinator may trigger this one as soon as
		// the last was acknowledged, before its metadata is written and
		// its completion delivered.
		for ordered != nil && ordered.ordered && ordered.undecided(b.ID) {
			select {
			case c := <-t.ctl:
				if err := t.handleControl(c); err != nil {
					return err
				}
			case <-ctx.Done():
				return errCanceled
			}
		}
		if buffering != nil {
			if err := buffering.flushBuffered(em); err != nil {
				return fmt.Errorf("%s: %w", t.name(), err)
			}
		}
		if err := t.snapshotOperator(b.ID, al.alignment()); err != nil {
			return err
		}
		if err := em.broadcast(Element{Kind: KindBarrier, Barrier: b}); err != nil {
			return err
		}
		al.release()
		return nil
	}
	var done []Barrier
	tm := &opTimer{}
	tm.op, _ = t.impl.(timedOperator)
	_, ownsWM := t.impl.(watermarkOwner)
	defer tm.stop()
	for {
		var el Element
		if q, ok := al.next(); ok {
			el = q
		} else {
			tm.arm()
			select {
			case <-ctx.Done():
				return errCanceled
			case c := <-t.ctl:
				if err := t.handleControl(c); err != nil {
					return err
				}
				continue
			case <-tm.C:
				tm.C = nil
				if err := tm.op.onTimer(em); err != nil {
					return fmt.Errorf("%s: %w", t.name(), err)
				}
				continue
			case el = <-t.inbox:
			}
		}
		if al.hold(el) {
			continue
		}
		switch el.Kind {
		case KindBatch:
			if al.active(el.From) && !ownsWM {
				if err := em.broadcast(Element{Kind: KindWatermark, Watermark: t.outWatermark(al.wm)}); err != nil {
					return err
				}
			}
			t.m.recordsIn.Add(int64(el.Batch.Len()))
			err := t.timedProcess(func() error { return t.impl.process(el.Input, el.Batch, em) })
			el.Batch.Rec.Release()
			if err != nil {
				return fmt.Errorf("%s: %w", t.name(), err)
			}
		case KindWatermark, KindIdle:
			var wm int64
			var advanced, idle bool
			if el.Kind == KindWatermark {
				wm, advanced = al.watermark(el.From, el.Watermark)
			} else {
				wm, advanced, idle = al.idle(el.From)
			}
			if err := t.forwardWatermark(em, wm, advanced, idle); err != nil {
				return err
			}
		case KindLatencyMarker:
			if err := t.onMarker(em, el.Marker); err != nil {
				return err
			}
		case KindBarrier:
			if b, ok := al.barrier(el.From, el.Barrier); ok {
				if err := aligned(b); err != nil {
					return err
				}
			}
		case KindEnd:
			var wm int64
			var advanced, idle, all bool
			wm, advanced, idle, all, done = al.end(el.From, done[:0])
			// The channel no longer counts: checkpoints the others have
			// all delivered the barrier of are aligned now.
			for _, b := range done {
				if err := aligned(b); err != nil {
					return err
				}
			}
			if all {
				t.inWatermark.Store(maxWatermark)
				if err := t.impl.endInput(em); err != nil {
					return fmt.Errorf("%s: %w", t.name(), err)
				}
				return em.broadcast(Element{Kind: KindEnd})
			}
			if err := t.forwardWatermark(em, wm, advanced, idle); err != nil {
				return err
			}
		}
	}
}

// forwardWatermark acts on what the aligner made of a watermark, idleness
// or end element: an advanced combined watermark goes to the operator, then
// downstream; an input that became idle as a whole is forwarded as idle.
func (t *subtask) forwardWatermark(em *emitter, wm int64, advanced, idle bool) error {
	if advanced {
		t.inWatermark.Store(wm)
		if t.fctx != nil {
			t.fctx.Watermark, t.fctx.HasWatermark = wm, true
		}
		if w, ok := t.impl.(watermarkOperator); ok {
			if err := w.watermark(wm, em); err != nil {
				return fmt.Errorf("%s: %w", t.name(), err)
			}
		}
		if _, ok := t.impl.(watermarkOwner); ok {
			return nil
		}
		if err := em.broadcast(Element{Kind: KindWatermark, Watermark: t.outWatermark(wm)}); err != nil {
			return err
		}
	}
	if idle {
		return em.broadcast(Element{Kind: KindIdle})
	}
	return nil
}

// watermarkOwner is an operator that sends watermarks of its own (the
// processing-time clock of PROCTIME(), proctime_attr.go): the subtask
// forwards neither its input's watermarks nor their idleness.
type watermarkOwner interface {
	ownsWatermarks()
}

// watermarkDelayer is an operator whose output runs behind its input in
// event time (an interval join): the watermark it forwards is its input's
// minus watermarkDelay (microseconds, not negative).
type watermarkDelayer interface {
	watermarkDelay() int64
}

// outWatermark is the watermark the subtask forwards for its combined
// input watermark wm.
func (t *subtask) outWatermark(wm int64) int64 {
	d, ok := t.impl.(watermarkDelayer)
	if !ok || wm == maxWatermark {
		return wm
	}
	if wm < minWatermark+d.watermarkDelay() {
		return minWatermark
	}
	return wm - d.watermarkDelay()
}

// aligner implements barrier alignment (exactly-once): once a channel has
// delivered barrier n, what it sends next is held back until every live
// channel has delivered barrier n. In at-least-once mode its tracker counts
// barriers per checkpoint id instead and nothing is held back
// (barrier_tracker.go). It also combines the channels' watermarks: the
// minimum over the channels that are neither ended nor idle, never going
// back.
type aligner struct {
	// tracker is set in at-least-once mode.
	tracker  *barrierTracker
	n        int
	ended    []bool
	nEnded   int
	blocked  []bool
	nBlocked int
	// cur is the barrier being aligned (exactly-once) while nBlocked > 0,
	// since blockedAt (when its first channel delivered it).
	cur       Barrier
	blockedAt time.Time
	held      []Element
	replay    []Element
	wms       []int64
	// idles marks the channels that said they are idle and sent nothing
	// since; allIdle that KindIdle was forwarded and nothing else since.
	idles   []bool
	allIdle bool
	wm      int64
}

func newAligner(n int) *aligner {
	a := &aligner{n: n, ended: make([]bool, n), blocked: make([]bool, n), wms: make([]int64, n), idles: make([]bool, n), wm: minWatermark}
	for i := range a.wms {
		a.wms[i] = minWatermark
	}
	return a
}

const minWatermark = -1 << 63

// next returns a held element that may now be processed.
func (a *aligner) next() (Element, bool) {
	if len(a.replay) == 0 {
		return Element{}, false
	}
	el := a.replay[0]
	a.replay = a.replay[1:]
	return el, true
}

// hold reports whether el must wait for alignment (and keeps it).
func (a *aligner) hold(el Element) bool {
	if a.tracker == nil && a.blocked[el.From] {
		a.held = append(a.held, el)
		return true
	}
	return false
}

// barrier records barrier b from channel from. It returns the barrier whose
// snapshot is due now that every live channel has delivered it (ok).
func (a *aligner) barrier(from int, b Barrier) (_ Barrier, ok bool) {
	if a.tracker != nil {
		return a.tracker.barrier(from, b)
	}
	a.blocked[from] = true
	if a.nBlocked++; a.nBlocked == 1 && a.n-a.nEnded > 1 {
		a.blockedAt = time.Now()
	}
	a.cur = b
	return b, a.nBlocked == a.n-a.nEnded
}

// alignment is how long the barrier due now held channels back: from its
// first channel's barrier to now (0 when there was nothing to hold back:
// at-least-once mode, or a single live channel).
func (a *aligner) alignment() time.Duration {
	if a.tracker != nil || a.blockedAt.IsZero() {
		return 0
	}
	return time.Since(a.blockedAt)
}

// release unblocks every channel after the snapshot; held elements are
// replayed in arrival order.
func (a *aligner) release() {
	for i := range a.blocked {
		a.blocked[i] = false
	}
	a.nBlocked = 0
	a.blockedAt = time.Time{}
	a.replay = append(a.replay, a.held...)
	a.held = a.held[:0:0]
}

// end records the end of channel from. It returns the combined watermark
// and whether it advanced (the ended channel no longer holds it back),
// whether the input became idle as a whole (the channels left are all
// idle), and whether every channel has ended.
//
// It appends to aligned the checkpoints whose snapshot is due now that the
// ended channel no longer counts (the others delivered their barriers).
func (a *aligner) end(from int, aligned []Barrier) (wm int64, advanced, idle, all bool, _ []Barrier) {
	a.ended[from] = true
	a.nEnded++
	switch {
	case a.tracker != nil:
		aligned = a.tracker.end(from, aligned)
	case a.nBlocked > 0 && a.nBlocked == a.n-a.nEnded:
		// A blocked channel's end is held, so from was not blocked.
		aligned = append(aligned, a.cur)
	}
	a.wms[from] = maxWatermark
	a.idles[from] = false
	wm, advanced, allIdle := a.combine()
	if allIdle && !a.allIdle {
		a.allIdle, idle = true, true
	}
	return wm, advanced, idle, a.nEnded == a.n, aligned
}

// active records that channel from sent a batch: an idle channel counts
// again (its last watermark holds until it sends a newer one). It reports
// whether the input stopped being idle as a whole: the receiver then says
// so downstream (Flink's WatermarkStatus.ACTIVE), by sending its watermark.
func (a *aligner) active(from int) (wasIdle bool) {
	if !a.idles[from] {
		return false
	}
	a.idles[from] = false
	wasIdle, a.allIdle = a.allIdle, false
	return wasIdle
}

// watermark records channel from's watermark and returns the combined
// watermark, and whether to forward it: it advanced, or the input was idle
// as a whole until now.
func (a *aligner) watermark(from int, wm int64) (int64, bool) {
	wasIdle := a.active(from)
	if wm > a.wms[from] {
		a.wms[from] = wm
	}
	wm, advanced, _ := a.combine()
	// An input active again after being idle as a whole says so downstream
	// with its watermark, advanced or not.
	return wm, advanced || wasIdle
}

// idle records that channel from is idle. It returns the combined watermark
// and whether it advanced (the idle channel was the one holding it back),
// and whether the input became idle as a whole (every live channel idle):
// the receiver then forwards the idleness.
func (a *aligner) idle(from int) (wm int64, advanced, idle bool) {
	a.idles[from] = true
	wm, advanced, all := a.combine()
	if all && !a.allIdle {
		a.allIdle = true
		return wm, advanced, true
	}
	return wm, advanced, false
}

// combine recomputes the minimum over the live, active channels; all says
// that there is none (every live channel is idle). When every live channel
// is idle, nothing holds the watermark back any more: it moves to the
// largest of theirs, as Flink's StatusWatermarkValve does.
func (a *aligner) combine() (wm int64, advanced, all bool) {
	m, live, active := int64(maxWatermark), 0, 0
	largest := int64(minWatermark)
	for i, w := range a.wms {
		if a.ended[i] {
			continue
		}
		live++
		largest = max(largest, w)
		if a.idles[i] {
			continue
		}
		active++
		m = min(m, w)
	}
	if live > 0 && active == 0 {
		if largest > a.wm {
			a.wm = largest
			return largest, true, true
		}
		return a.wm, false, true
	}
	if m > a.wm {
		a.wm = m
		return m, true, false
	}
	return a.wm, false, false
}
