package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/state"
)

// stateDecl is what a stateful operator declares of its keyed state, once,
// when it opens (taskContext.declareState). The runtime does the rest:
// it checks a restored store against Layout and restores Watermark when
// the operator opens, and at every checkpoint barrier it expires what is
// past its TTL (Expire), writes back every declared key space (in the
// order they were declared), records Layout and Watermark in every key
// group of the subtask, and checkpoints the store. No operator writes a
// snapshot of its own.
type stateDecl struct {
	// Owner names the operator in state errors (stateOwner).
	Owner string
	// Layout describes the state's format: what the operator computes and
	// how its values are encoded. A store restored from state of another
	// layout is refused with checkpoint.ErrIncompatibleState naming both.
	Layout string
	// Watermark is the operator's event-time clock when it is part of the
	// state (windows, interval joins, OVER): the largest one recorded in
	// the restored key groups is restored into it (never lowering it), and
	// it is recorded with every checkpoint. Nil: not kept.
	Watermark *int64
	// Expire drops what a state TTL has expired, before the key spaces are
	// written back (nil: no TTL).
	Expire func() error
}

// keyedState is a stateful operator subtask's declared state: its key
// spaces in the subtask's store, each with what writes it back.
type keyedState struct {
	t      *taskContext
	decl   stateDecl
	meta   *state.KeySpace
	maxPar int
	// ids are the declared key spaces' ids; flushes write back what the
	// operator holds in memory, in declaration order.
	ids     map[byte]string
	flushes []func() error
}

// declareState declares the operator's keyed state and, when the subtask
// restores, checks the restored store's layout and restores the
// watermark. The runtime snapshots it at every checkpoint barrier.
func (t *taskContext) declareState(d stateDecl) (*keyedState, error) {
	s := &keyedState{t: t, decl: d, maxPar: t.job.graph.MaxParallelism, ids: map[byte]string{spaceMeta: "metadata"}}
	s.meta = state.NewKeySpace(t.store, spaceMeta, "metadata")
	t.keyed = s
	if t.restored == nil {
		return s, nil
	}
	if err := checkLayout(t, s.meta, s.maxPar, d.Owner, d.Layout); err != nil {
		return nil, err
	}
	if d.Watermark != nil {
		*d.Watermark = max(*d.Watermark, restoredWatermark(t))
	}
	return s, nil
}

// space declares key space id of the operator's state, called name in
// errors. Ids are part of the state format: an operator gives each of
// its spaces a fixed id, and declaring one twice is a programming error.
func (s *keyedState) space(id byte, name string) *state.KeySpace {
	if prev, ok := s.ids[id]; ok {
		panic(fmt.Sprintf("exec: key space %d declared as %q and %q", id, prev, name))
	}
	s.ids[id] = name
	return state.NewKeySpace(s.t.store, id, name)
}

// flushWith adds fn to what a checkpoint writes back before the store is
// checkpointed: state the operator keeps in memory outside a declared
// cache (a join side's rows, the windows of a window join).
func (s *keyedState) flushWith(fn func() error) { s.flushes = append(s.flushes, fn) }

// declareCache declares key space id and a write-back cache over it: the
// cache is flushed at every checkpoint. The store of a subtask that
// restored nothing starts empty (its working directory is made anew), so
// the cache needs no store read for a new key.
func declareCache[V any](s *keyedState, id byte, name string, codec state.Codec[V]) *state.Cache[V] {
	return declareKeyedCache[V](s, id, name, state.Unkeyed[V](codec))
}

// declareKeyedCache is declareCache with a codec given each entry's key.
func declareKeyedCache[V any](s *keyedState, id byte, name string, codec state.KeyedCodec[V]) *state.Cache[V] {
	c := state.NewKeyedSpaceCache[V](s.space(id, name), codec)
	if s.t.restored == nil {
		c.StartsEmpty()
	}
	s.flushWith(c.Flush)
	return c
}

// snapshot takes the subtask's part of checkpoint cp: expire, write back,
// record the layout and watermark, checkpoint the store. A store that
// checkpoints asynchronously (state.AsyncCheckpointer) takes the
// write-back for the checkpoint's goroutine to commit, and the snapshot
// returns with the rest to wait for (storeState).
func (s *keyedState) snapshot(cp *snapshotContext) (checkpoint.SubtaskState, asyncState, error) {
	write := func() error {
		if s.decl.Expire != nil {
			if err := s.decl.Expire(); err != nil {
				return err
			}
		}
		for _, flush := range s.flushes {
			if err := flush(); err != nil {
				return err
			}
		}
		return s.writeMeta()
	}
	return storeState(s.t.store, cp, write)
}

// writeMeta records the layout and the watermark in every key group of
// the subtask.
func (s *keyedState) writeMeta() error {
	t := s.t
	var wb state.WriteBatch
	layout := binary.AppendUvarint(checkpoint.AppendStateHeader(nil, stateVersion), uint64(len(s.decl.Layout)))
	layout = append(layout, s.decl.Layout...)
	var wm []byte
	if s.decl.Watermark != nil && *s.decl.Watermark > minWatermark {
		wm = binary.BigEndian.AppendUint64(checkpoint.AppendStateHeader(nil, stateVersion), uint64(*s.decl.Watermark))
	}
	lo, hi := state.KeyGroupRange(t.subtask, s.maxPar, t.op.Parallelism)
	for kg := lo; kg <= hi && kg < s.maxPar; kg++ {
		s.meta.Put(&wb, kg, layoutKey, layout)
		if wm != nil {
			s.meta.Put(&wb, kg, watermarkKey, wm)
		}
	}
	return t.store.Apply(&wb)
}

// The keys, in spaceMeta of every key group, of the state's layout and of
// the operator's watermark.
var (
	layoutKey    = []byte("layout")
	watermarkKey = []byte("wm")
)

// checkLayout compares the layout recorded in a restored store with the
// operator's: another layout is ErrIncompatibleState naming what differs.
func checkLayout(t *taskContext, meta *state.KeySpace, maxPar int, owner, layout string) error {
	got, ok, err := storedLayout(t, meta, maxPar, owner)
	if err != nil || !ok {
		return err
	}
	if got != layout {
		return fmt.Errorf("%w: %s: the state was written by %s; the query computes %s", checkpoint.ErrIncompatibleState, owner, got, layout)
	}
	return nil
}

// storedLayout is the layout recorded in a restored store; ok false: none
// (the subtask's key groups hold no state).
func storedLayout(t *taskContext, meta *state.KeySpace, maxPar int, owner string) (string, bool, error) {
	lo, hi := state.KeyGroupRange(t.subtask, maxPar, t.op.Parallelism)
	for kg := lo; kg <= hi && kg < maxPar; kg++ {
		raw, ok, err := meta.Get(kg, layoutKey)
		if err != nil {
			return "", false, err
		}
		if !ok {
			continue
		}
		d, err := newStateDecoder(raw, owner)
		if err != nil {
			return "", false, err
		}
		got := string(d.bytes())
		d.end()
		if d.err != nil {
			return "", false, d.err
		}
		return got, true, nil
	}
	return "", false, nil
}

// restoredWatermark is the largest watermark recorded in t's restored
// store (minWatermark: none).
func restoredWatermark(t *taskContext) int64 {
	wm := int64(minWatermark)
	meta := state.NewKeySpace(t.store, spaceMeta, "metadata")
	lo, hi := state.KeyGroupRange(t.subtask, t.job.graph.MaxParallelism, t.op.Parallelism)
	for kg := lo; kg <= hi; kg++ {
		v, ok, err := meta.Get(kg, watermarkKey)
		if err != nil || !ok {
			continue
		}
		if _, rest, err := checkpoint.ReadStateHeader(v, stateOwner(t), stateVersion, stateVersion); err == nil && len(rest) == 8 {
			wm = max(wm, int64(binary.BigEndian.Uint64(rest)))
		}
	}
	return wm
}
