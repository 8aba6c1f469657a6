package exec

import "time"

// Mini-batches: an operator may hold back output it has computed and emit
// it later, in one go (the group aggregate with 'table.exec.mini-batch.*',
// which emits a group updated a hundred times in a mini-batch once). Two
// optional interfaces let the subtask drive it.

// bufferingOperator holds output back. The subtask calls flushBuffered
// before it snapshots the operator for a checkpoint, so that every change
// of the rows before the barrier goes downstream before the barrier does
// (exactly-once: a transactional sink commits them with the checkpoint).
// endInput flushes too (the operator's own business).
type bufferingOperator interface {
	flushBuffered(out *emitter) error
}

// timedOperator wants to act at a processing time although no element
// arrives: the subtask waits for the deadline while it waits for its inbox
// and calls onTimer once it has passed. deadline is asked again after
// every element and call; ok false: none.
type timedOperator interface {
	deadline() (at time.Time, ok bool)
	onTimer(out *emitter) error
}

// opTimer is the subtask's timer for a timedOperator: C is nil while the
// operator has no deadline.
type opTimer struct {
	op    timedOperator
	timer *time.Timer
	at    time.Time
	C     <-chan time.Time
}

// arm points the timer at the operator's current deadline.
func (t *opTimer) arm() {
	if t.op == nil {
		return
	}
	at, ok := t.op.deadline()
	switch {
	case !ok:
		if t.timer != nil {
			t.timer.Stop()
		}
		t.C, t.at = nil, time.Time{}
	case t.C == nil || !at.Equal(t.at):
		d := time.Until(at)
		if t.timer == nil {
			t.timer = time.NewTimer(d)
		} else {
			t.timer.Reset(d) // Go 1.23 timers: no stale value after Reset
		}
		t.C, t.at = t.timer.C, at
	}
}

func (t *opTimer) stop() {
	if t.timer != nil {
		t.timer.Stop()
	}
}
