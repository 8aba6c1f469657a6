package exec

// barrierTracker decides when an operator takes its snapshot in
// AT_LEAST_ONCE mode, as Flink's CheckpointBarrierTracker does: nothing is
// held back, the operator keeps processing every channel, but the snapshot
// for checkpoint n is taken only once every live channel has delivered
// barrier n. Barriers are tracked per checkpoint id: with several
// checkpoints in flight ('execution.checkpointing.max-concurrent-checkpoints'
// > 1) a channel that delivered barriers n and n+1 says nothing about the
// other channels' barrier n. Were the snapshot taken then, it would miss the
// records the slow channels send before their barrier n, which the sources'
// positions of checkpoint n already cover: they would be lost on restore.
//
// Contract:
//   - A channel delivers barriers in increasing id order (a source sends
//     them in trigger order). It may skip an id: a source whose snapshot
//     failed sends no barrier for it.
//   - When checkpoint n completes alignment, every older pending one is
//     dropped: a channel that delivered n skipped it, so it can never
//     complete (the coordinator subsumes it when n completes).
//   - A barrier for an id not newer than the newest one seen so far, and no
//     longer pending, is ignored (its checkpoint completed or was dropped).
//   - A channel that ended no longer counts: pending checkpoints that every
//     channel still live has delivered complete then, oldest first.
//   - At most maxTrackedBarriers checkpoints are pending; a newer one drops
//     the oldest (a channel that delivers no barrier at all, its source
//     stuck, lets every checkpoint expire; the tracker does not grow).
type barrierTracker struct {
	n     int
	ended []bool
	// pending are the checkpoints some channel delivered a barrier of and
	// not yet every live channel, in increasing id order.
	pending []pendingBarrier
	// latest is the newest id ever tracked (0: none).
	latest int64
	// free keeps the seen slices of completed entries for reuse.
	free [][]bool
}

type pendingBarrier struct {
	b    Barrier
	seen []bool // seen[i]: channel i delivered the barrier
}

// maxTrackedBarriers bounds the pending checkpoints of a tracker (Flink's
// CheckpointBarrierTracker keeps 50).
const maxTrackedBarriers = 50

func newBarrierTracker(n int) *barrierTracker {
	return &barrierTracker{n: n, ended: make([]bool, n)}
}

// barrier records barrier b from channel from. It returns the barrier to
// snapshot and forward when b's checkpoint is now aligned on every live
// channel (ok), which is then b itself.
func (t *barrierTracker) barrier(from int, b Barrier) (Barrier, bool) {
	i := 0
	for i < len(t.pending) && t.pending[i].b.ID < b.ID {
		i++
	}
	if i == len(t.pending) || t.pending[i].b.ID != b.ID {
		if b.ID <= t.latest {
			return Barrier{}, false // completed or dropped already
		}
		t.latest = b.ID
		t.pending = append(t.pending, pendingBarrier{b: b, seen: t.seenSlice()})
		if len(t.pending) > maxTrackedBarriers {
			t.drop(1)
		}
		i = len(t.pending) - 1
	}
	t.pending[i].seen[from] = true
	if !t.aligned(&t.pending[i]) {
		return Barrier{}, false
	}
	done := t.pending[i].b
	t.drop(i + 1)
	return done, true
}

// end records that channel from ended. It returns the checkpoints that
// are aligned now that it no longer counts, oldest first, appended to out;
// older incomplete ones are dropped as in barrier.
func (t *barrierTracker) end(from int, out []Barrier) []Barrier {
	t.ended[from] = true
	for i := len(t.pending) - 1; i >= 0; i-- {
		if !t.aligned(&t.pending[i]) {
			continue
		}
		// The newest aligned one decides: the ones before it are aligned
		// too (a live channel that delivered it delivered them, or skipped
		// them) or can never be.
		for j := 0; j <= i; j++ {
			if t.aligned(&t.pending[j]) {
				out = append(out, t.pending[j].b)
			}
		}
		t.drop(i + 1)
		break
	}
	return out
}

// aligned reports whether every live channel delivered p's barrier.
func (t *barrierTracker) aligned(p *pendingBarrier) bool {
	for c, seen := range p.seen {
		if !seen && !t.ended[c] {
			return false
		}
	}
	return true
}

// drop removes the first k pending checkpoints.
func (t *barrierTracker) drop(k int) {
	for _, p := range t.pending[:k] {
		t.free = append(t.free, p.seen)
	}
	t.pending = append(t.pending[:0], t.pending[k:]...)
}

func (t *barrierTracker) seenSlice() []bool {
	if k := len(t.free); k > 0 {
		s := t.free[k-1]
		t.free = t.free[:k-1]
		clear(s)
		return s
	}
	return make([]bool, t.n)
}
