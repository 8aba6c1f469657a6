package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/RaduBerinde/btreemap"
)

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("state: store closed")

// Store is the keyed state of one stateful operator subtask: byte keys
// within key groups. A Store is used by one goroutine (its subtask).
type Store interface {
	// Get returns the value of key in key group kg. The slice is valid
	// until the next call that modifies the store.
	Get(kg int, key []byte) (value []byte, ok bool, err error)
	// Apply writes a batch of puts and deletes atomically.
	Apply(b *WriteBatch) error
	// Scan calls fn for every entry, in key group then key order. fn must
	// not keep key or value.
	Scan(fn func(kg int, key, value []byte) error) error
	// ScanPrefix calls fn, in key order, for every entry of key group kg
	// whose key starts with prefix. fn must not keep key or value.
	ScanPrefix(kg int, prefix []byte, fn func(key, value []byte) error) error
	// ScanRange calls fn, in key order, for every entry of key group kg
	// whose key is in [start, end) (end nil: no upper bound). fn must not
	// keep key or value; an error it returns ends the scan and is returned.
	ScanRange(kg int, start, end []byte, fn func(key, value []byte) error) error
	// DeleteRange deletes every entry of key group kg whose key is in
	// [start, end) (end nil: to the end of the key group), at once and
	// not atomically with any batch: a window's state, say, when the
	// window fires. The Pebble store writes one range tombstone where a
	// delete per key would leave a tombstone each for compactions to
	// carry down the levels.
	DeleteRange(kg int, start, end []byte) error
	// Checkpoint writes a durable copy of everything applied so far into
	// dir, which must not exist yet. Backends may share unchanged files with
	// earlier checkpoints (hard links), which IncrementalSize accounts for.
	Checkpoint(dir string) (CheckpointInfo, error)
	// Close releases the store; its working files may be deleted after.
	Close() error
}

// AsyncCheckpointer is a Store that takes a checkpoint in two parts, as
// Flink's state backends do. StartCheckpoint runs write (the operator's
// write-back of what it holds in memory), fixes what the checkpoint holds
// (everything applied so far, and what write applies) and returns; the
// writes of write are committed, and the checkpoint's files written, on
// another goroutine while the store is used on. wait, called once from any
// goroutine, returns when the files are written. Writes made meanwhile
// are kept out of the checkpoint and seen by reads. A later checkpoint or
// Close waits for the earlier one to end.
type AsyncCheckpointer interface {
	StartCheckpoint(dir string, write func() error) (wait func() (CheckpointInfo, error), err error)
}

// SortedGetter is a Store that reads many keys together faster than
// with one Get each: the Pebble store, with one iterator whose seeks only
// move forward, so that it reuses the levels' positions and blocks.
type SortedGetter interface {
	// GetSorted calls fn(i, value, ok) for keys[i] of key group kgs[i],
	// once for every i, in order but where the store says otherwise (the
	// Pebble store, during a checkpoint: PebbleStore.GetSorted). The keys
	// are in key group then key order, without repeats. value is valid
	// only during the call.
	GetSorted(kgs []int, keys [][]byte, fn func(i int, value []byte, ok bool) error) error
}

// GetSorted reads keys (keys[i] in key group kgs[i], in key group then
// key order, without repeats) from s, together where s is a SortedGetter,
// else one Get each, and calls fn once for each i as SortedGetter.GetSorted
// does.
func GetSorted(s Store, kgs []int, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if g, ok := s.(SortedGetter); ok {
		return g.GetSorted(kgs, keys, fn)
	}
	for i, k := range keys {
		v, ok, err := s.Get(kgs[i], k)
		if err != nil {
			return err
		}
		if err := fn(i, v, ok); err != nil {
			return err
		}
	}
	return nil
}

// CheckpointInfo describes one store checkpoint.
type CheckpointInfo struct {
	// Size is the total size of the checkpoint's files in bytes;
	// IncrementalSize the bytes written for it (not shared with earlier ones).
	Size, IncrementalSize int64
	// Files are the size and checksum of every file of the checkpoint, by
	// name, for VerifyCheckpoint before a Restore from it.
	Files []FileSum
}

// Backend creates the stores of stateful operator subtasks.
type Backend interface {
	// Name is the value of 'state.backend' selecting it.
	Name() string
	// Open creates an empty store whose working files live under dir.
	Open(dir string) (Store, error)
	// Restore creates a store under dir holding the entries of the
	// checkpoints in from (directories written by Store.Checkpoint, possibly
	// of several old subtasks) whose key group lies in [kgStart, kgEnd].
	Restore(dir string, from []string, kgStart, kgEnd int) (Store, error)
}

// WriteBatch collects puts and deletes for Store.Apply. The keys and
// values are copied into one buffer, reused after Reset: a store copies
// what it keeps during Apply.
type WriteBatch struct {
	ops []batchOp
	buf []byte
	// order is Sorted's scratch.
	order []sortOp
}

// sortOp is an operation's place in Sorted's order: its key group, the
// first 16 bytes of its key (big-endian words, zero-padded), its index.
type sortOp struct {
	kg     int
	w0, w1 uint64
	i      int32
}

type batchOp struct {
	kg int
	// key is buf[k:v], the value buf[v:end].
	k, v, end int
	del       bool
}

func (b *WriteBatch) key(op *batchOp) []byte   { return b.buf[op.k:op.v:op.v] }
func (b *WriteBatch) value(op *batchOp) []byte { return b.buf[op.v:op.end:op.end] }

// Put records a put of a copy of key and value.
func (b *WriteBatch) Put(kg int, key, value []byte) {
	k := len(b.buf)
	b.buf = append(append(b.buf, key...), value...)
	b.ops = append(b.ops, batchOp{kg: kg, k: k, v: k + len(key), end: len(b.buf)})
}

// Delete records a delete of key.
func (b *WriteBatch) Delete(kg int, key []byte) {
	k := len(b.buf)
	b.buf = append(b.buf, key...)
	b.ops = append(b.ops, batchOp{kg: kg, k: k, v: len(b.buf), end: len(b.buf), del: true})
}

// Len is the number of recorded operations.
func (b *WriteBatch) Len() int { return len(b.ops) }

// Reset empties the batch for reuse.
func (b *WriteBatch) Reset() { b.ops, b.buf = b.ops[:0], b.buf[:0] }

// sorted calls fn for every operation in key group then key order; of two
// operations on one key, the one recorded later comes later (so it wins).
// Applying in key order makes a store's insertions walk its index in
// order (a skiplist cursor, a B-tree's path), each next to the last. It
// allocates nothing once the batch's scratch has grown.
func (b *WriteBatch) sorted(fn func(op *batchOp) error) error {
	b.order = b.order[:0]
	for i := range b.ops {
		k := b.key(&b.ops[i])
		var w [16]byte
		copy(w[:], k)
		b.order = append(b.order, sortOp{kg: b.ops[i].kg, w0: binary.BigEndian.Uint64(w[:8]),
			w1: binary.BigEndian.Uint64(w[8:]), i: int32(i)})
	}
	slices.SortFunc(b.order, func(x, y sortOp) int {
		if c := cmp.Compare(x.kg, y.kg); c != 0 {
			return c
		}
		if c := cmp.Compare(x.w0, y.w0); c != 0 {
			return c
		}
		if c := cmp.Compare(x.w1, y.w1); c != 0 {
			return c
		}
		if c := bytes.Compare(b.key(&b.ops[x.i]), b.key(&b.ops[y.i])); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	for _, o := range b.order {
		if err := fn(&b.ops[o.i]); err != nil {
			return err
		}
	}
	return nil
}

// Memory is the in-memory backend: an ordered tree of keys per key
// group, so that prefix and range scans visit only what they return.
type Memory struct {
	mu     sync.Mutex
	groups map[int]*btreemap.BTreeMap[string, []byte]
	closed bool
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{groups: map[int]*btreemap.BTreeMap[string, []byte]{}} }

// view is b as a string for a lookup that does not keep it.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (m *Memory) Get(kg int, key []byte) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false, ErrClosed
	}
	g := m.groups[kg]
	if g == nil {
		return nil, false, nil
	}
	_, v, ok := g.Get(view(key))
	return v, ok, nil
}

func (m *Memory) Apply(b *WriteBatch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	// In key order, so that consecutive operations walk neighbouring
	// paths of a group's tree. A key already held keeps its string, and
	// its value buffer when the new value fits: rewriting a key that is
	// there allocates nothing.
	var g *btreemap.BTreeMap[string, []byte]
	kg := -1
	return b.sorted(func(op *batchOp) error {
		if op.kg != kg || g == nil {
			kg, g = op.kg, m.groups[op.kg]
			if g == nil {
				g = btreemap.New[string, []byte](32, strings.Compare)
				m.groups[op.kg] = g
			}
		}
		key := b.key(op)
		if op.del {
			g.Delete(view(key))
			return nil
		}
		v := b.value(op)
		if k, old, ok := g.Get(view(key)); ok {
			if cap(old) >= len(v) {
				old = old[:len(v)]
				copy(old, v)
			} else {
				old = append([]byte(nil), v...)
			}
			g.ReplaceOrInsert(k, old)
			return nil
		}
		g.ReplaceOrInsert(string(key), append([]byte(nil), v...))
		return nil
	})
}

func (m *Memory) Scan(fn func(kg int, key, value []byte) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	kgs := make([]int, 0, len(m.groups))
	for kg := range m.groups {
		kgs = append(kgs, kg)
	}
	sort.Ints(kgs)
	for _, kg := range kgs {
		for k, v := range m.groups[kg].Ascend(btreemap.Min[string](), btreemap.Max[string]()) {
			if err := fn(kg, []byte(k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Memory) ScanPrefix(kg int, prefix []byte, fn func(key, value []byte) error) error {
	return m.ScanRange(kg, prefix, PrefixEnd(prefix), fn)
}

func (m *Memory) ScanRange(kg int, start, end []byte, fn func(key, value []byte) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for k, v := range m.span(kg, start, end) {
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// span is the entries of key group kg in [start, end) (end nil: to the end
// of the key group), in key order. The caller holds m.mu.
func (m *Memory) span(kg int, start, end []byte) iter.Seq2[string, []byte] {
	g := m.groups[kg]
	if g == nil {
		return func(func(string, []byte) bool) {}
	}
	hi := btreemap.Max[string]()
	if end != nil {
		hi = btreemap.LT(string(end))
	}
	return g.Ascend(btreemap.GE(string(start)), hi)
}

func (m *Memory) DeleteRange(kg int, start, end []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	var keys []string
	for k := range m.span(kg, start, end) {
		keys = append(keys, k)
	}
	for _, k := range keys {
		m.groups[kg].Delete(k)
	}
	return nil
}

func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.groups = nil
	return nil
}
