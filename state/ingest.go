package state

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ingestTableBytes is the size (keys and values) at which a tableWriter
// starts another sstable.
var ingestTableBytes = 64 << 20

// tableWriter writes entries, in strictly increasing key order, into
// sstables in a store's directory for the store to ingest: Pebble links
// them into its LSM in one step, with a sequence number above everything
// written before, instead of inserting the entries into its memtable one
// by one and flushing them into sstables much like these. It writes
// through the store's filesystem, so a full disk fails it as it fails a
// flush.
type tableWriter struct {
	s      *PebbleStore
	name   string
	w      *sstable.Writer
	size   int
	tables []string
}

// newTableWriter returns a tableWriter of s whose files are named
// name-NNNNNN.sst.tmp.
func (s *PebbleStore) newTableWriter(name string) *tableWriter {
	return &tableWriter{s: s, name: name}
}

func (t *tableWriter) next() error {
	if t.w != nil && t.size < ingestTableBytes {
		return nil
	}
	if err := t.closeTable(); err != nil {
		return err
	}
	path := filepath.Join(t.s.dir, fmt.Sprintf("%s-%06d.sst.tmp", t.name, len(t.tables)))
	f, err := t.s.fs().Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	t.tables = append(t.tables, path)
	t.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{
		TableFormat: t.s.db.TableFormat(), FilterPolicy: bloom.FilterPolicy(10)})
	t.size = 0
	return nil
}

// Set writes key's value; key must be above every key written before.
func (t *tableWriter) Set(key, value []byte) error {
	if err := t.next(); err != nil {
		return err
	}
	t.size += len(key) + len(value)
	return t.w.Set(key, value)
}

// Delete writes a tombstone of key, which hides its value in the store
// once ingested; key must be above every key written before.
func (t *tableWriter) Delete(key []byte) error {
	if err := t.next(); err != nil {
		return err
	}
	t.size += len(key)
	return t.w.Delete(key)
}

func (t *tableWriter) closeTable() error {
	if t.w == nil {
		return nil
	}
	err := t.w.Close()
	t.w = nil
	return err
}

// Ingest closes the last sstable and has the store ingest them all.
func (t *tableWriter) Ingest() error {
	if err := t.closeTable(); err != nil {
		return err
	}
	if len(t.tables) == 0 {
		return nil
	}
	if err := t.s.db.Ingest(context.Background(), t.tables); err != nil {
		return pebbleError(err)
	}
	return nil
}

// Discard removes the sstables' files (Pebble has links of its own to
// those it ingested).
func (t *tableWriter) Discard() {
	if t.w != nil {
		_ = t.w.Close()
		t.w = nil
	}
	for _, p := range t.tables {
		_ = t.s.fs().Remove(p)
	}
	t.tables = nil
}

// fs is the filesystem of the store's own files: a failed write to its
// working directory fails the store, as one of its Pebble instance does.
func (s *PebbleStore) fs() vfs.FS { return &faultFS{FS: s.opts.FS, f: s.fault} }

// sortedRun returns a copy of b's operations in key group then key order,
// keys and values laid out in that order, with only the last operation
// on each key.
func (b *WriteBatch) sortedRun() *WriteBatch {
	r := &WriteBatch{ops: make([]batchOp, 0, len(b.ops)), buf: make([]byte, 0, len(b.buf))}
	_ = b.sorted(func(op *batchOp) error {
		key := b.key(op)
		if n := len(r.ops); n > 0 {
			if last := &r.ops[n-1]; last.kg == op.kg && bytes.Equal(r.key(last), key) {
				r.buf, r.ops = r.buf[:last.k], r.ops[:n-1]
			}
		}
		if op.del {
			r.Delete(op.kg, key)
		} else {
			r.Put(op.kg, key, b.value(op))
		}
		return nil
	})
	b.order = nil
	return r
}

// runCursor is the next operation of a sorted run (sortedRun) in a merge;
// run is the run's place among the merged ones: of two operations on one
// key, the later run's wins.
type runCursor struct {
	b   *WriteBatch
	i   int
	run int
}

func (c *runCursor) op() *batchOp { return &c.b.ops[c.i] }

func compareCursors(x, y *runCursor) int {
	xo, yo := x.op(), y.op()
	if c := cmp.Compare(xo.kg, yo.kg); c != 0 {
		return c
	}
	if c := bytes.Compare(x.b.key(xo), y.b.key(yo)); c != 0 {
		return c
	}
	return cmp.Compare(x.run, y.run)
}

// runMerge merges sorted runs into one key order with a binary heap of
// their cursors, yielding one operation per key: the last run's.
type runMerge struct {
	h []runCursor
}

func newRunMerge(runs []runCursor) *runMerge {
	m := &runMerge{h: runs}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

func (m *runMerge) down(i int) {
	h := m.h
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && compareCursors(&h[r], &h[l]) < 0 {
			j = r
		}
		if compareCursors(&h[j], &h[i]) >= 0 {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// pop returns the least cursor's operation and advances that cursor.
func (m *runMerge) pop() (*WriteBatch, *batchOp) {
	c := &m.h[0]
	b, op := c.b, c.op()
	if c.i++; c.i == len(c.b.ops) {
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	if len(m.h) > 0 {
		m.down(0)
	}
	return b, op
}

// next returns the next key's operation; ok is false once the runs are
// exhausted.
func (m *runMerge) next() (b *WriteBatch, op *batchOp, ok bool) {
	if len(m.h) == 0 {
		return nil, nil, false
	}
	b, op = m.pop()
	for len(m.h) > 0 {
		top := &m.h[0]
		to := top.op()
		if to.kg != op.kg || !bytes.Equal(top.b.key(to), b.key(op)) {
			break
		}
		b, op = m.pop()
	}
	return b, op, true
}
