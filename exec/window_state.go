package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/state"
)

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
