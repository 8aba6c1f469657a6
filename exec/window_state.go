package exec

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/state"
)

// checkpointWindowState is the snapshot of the window and session
// aggregates: the cache's dirty entries go to the store (flush), the
// subtask's watermark is written under windowWatermarkKey in every key group
// it owns (so it moves with them on a rescale), and the store is
// checkpointed into the checkpoint's directory.
func checkpointWindowState(t *taskContext, flush func() error, meta *state.KeySpace, layout string, wm int64, maxPar int, cp *snapshotContext) (checkpoint.SubtaskState, error) {
	if err := flush(); err != nil {
		return checkpoint.SubtaskState{}, err
	}
	if err := writeLayout(t, meta, maxPar, layout); err != nil {
		return checkpoint.SubtaskState{}, err
	}
	if wm > minWatermark {
		var wb state.WriteBatch
		v := binary.BigEndian.AppendUint64(checkpoint.AppendStateHeader(nil, stateVersion), uint64(wm))
		lo, hi := state.KeyGroupRange(t.subtask, maxPar, t.op.Parallelism)
		for kg := lo; kg <= hi && kg < maxPar; kg++ {
			wb.Put(kg, windowWatermarkKey, v)
		}
		if err := t.store.Apply(&wb); err != nil {
			return checkpoint.SubtaskState{}, err
		}
	}
	return storeState(t.store, cp)
}

// restoredWatermark is the largest watermark recorded in t's restored
// store (minWatermark: none).
func restoredWatermark(t *taskContext) int64 {
	wm := int64(minWatermark)
	meta := state.NewKeySpace(t.store, spaceMeta, "metadata")
	lo, hi := state.KeyGroupRange(t.subtask, t.job.graph.MaxParallelism, t.op.Parallelism)
	for kg := lo; kg <= hi; kg++ {
		v, ok, err := meta.Get(kg, windowWatermarkKey[1:])
		if err != nil || !ok {
			continue
		}
		if _, rest, err := checkpoint.ReadStateHeader(v, stateOwner(t), stateVersion, stateVersion); err == nil && len(rest) == 8 {
			wm = max(wm, int64(binary.BigEndian.Uint64(rest)))
		}
	}
	return wm
}

// emitColumns finishes the builders into one batch of rows rows (with the
// changelog ops, nil for inserts only) and emits it. It releases the
// builders.
func emitColumns(schema *arrow.Schema, bs []array.Builder, rows int, ops []RowKind, out *emitter) error {
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(schema, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	if rows == 0 {
		rec.Release()
		return nil
	}
	return out.emit(Batch{Rec: rec, Ops: ops})
}

// closeStore closes a stateful subtask's store.
func closeStore(t *taskContext) error {
	if t == nil {
		return nil
	}
	t.share.Close()
	if t.store != nil {
		return t.store.Close()
	}
	return nil
}

// trimCache bounds the memory of c, a cache of t's state: it reports c's
// bytes and other (what else the subtask holds in memory) to the
// subtask's share of the state memory budget, and trims c past that
// share or past 'state.backend.cache.max-entries' (Cache.Trim). It
// reports whether c dropped entries.
func trimCache[V any](t *taskContext, c *state.Cache[V], other int64) (bool, error) {
	t.reportState(c.Bytes()+other, c.Len())
	dropped, err := c.Trim(t.share.Limit()-other, t.job.opts.StateCacheEntries)
	if dropped {
		t.reportState(c.Bytes()+other, c.Len())
	}
	return dropped, err
}

// newCache returns the write-back cache over t's store. The store of a
// subtask that restored nothing starts empty (its working directory is made
// anew), so the cache needs no store read for a new key.
func newCache[V any](t *taskContext, codec state.Codec[V]) *state.Cache[V] {
	c := state.NewCache[V](t.store, codec)
	if t.restored == nil {
		c.StartsEmpty()
	}
	return c
}

// newSpaceCache is newCache over key space ks of t's store.
func newSpaceCache[V any](t *taskContext, ks *state.KeySpace, codec state.Codec[V]) *state.Cache[V] {
	c := state.NewSpaceCache[V](ks, codec)
	if t.restored == nil {
		c.StartsEmpty()
	}
	return c
}
