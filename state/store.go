package state

import (
	"errors"
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
	// Checkpoint writes a durable copy of everything applied so far into
	// dir, which must not exist yet. Backends may share unchanged files with
	// earlier checkpoints (hard links), which IncrementalSize accounts for.
	Checkpoint(dir string) (CheckpointInfo, error)
	// Close releases the store; its working files may be deleted after.
	Close() error
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
	for i := range b.ops {
		op := &b.ops[i]
		g := m.groups[op.kg]
		if g == nil {
			g = btreemap.New[string, []byte](32, strings.Compare)
			m.groups[op.kg] = g
		}
		if op.del {
			g.Delete(view(b.key(op)))
		} else {
			g.ReplaceOrInsert(string(b.key(op)), append([]byte(nil), b.value(op)...))
		}
	}
	return nil
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
	g := m.groups[kg]
	if g == nil {
		return nil
	}
	hi := btreemap.Max[string]()
	if end != nil {
		hi = btreemap.LT(string(end))
	}
	for k, v := range g.Ascend(btreemap.GE(string(start)), hi) {
		if err := fn([]byte(k), v); err != nil {
			return err
		}
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
