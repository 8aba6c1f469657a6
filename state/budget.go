package state

import (
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Budget is the memory, in bytes, that the state held in memory by every
// stateful operator subtask of a process may take together: the
// write-back caches, a join's rows, window and TopN buffers (Flink's
// managed memory). It is shared by any number of goroutines.
//
// Each stateful subtask takes a Share when it opens and gives it back
// when it closes. A share reports the bytes its subtask holds (Update) and
// asks how many it may hold (Limit): its fair part, Total divided by the
// shares, or more while the other shares hold less than theirs. A subtask
// over its limit writes back and evicts (its Cache.Trim) between batches,
// so the sum of the shares' bytes stays within the budget, give or take
// one batch per subtask; a share that grew into memory the others did not
// use gives it back as they grow, at its next check.
type Budget struct {
	total  int64
	used   atomic.Int64
	shares atomic.Int64
}

// NewBudget returns a budget of total bytes (at least MinBudget).
func NewBudget(total int64) (*Budget, error) {
	if total < MinBudget {
		return nil, fmt.Errorf("state: a memory budget of %d bytes is below the least, %d", total, MinBudget)
	}
	return &Budget{total: total}, nil
}

// MinBudget is the smallest budget NewBudget accepts: 16 MiB.
const MinBudget = 16 << 20

// Total is the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// Used is the bytes the shares hold, as last reported.
func (b *Budget) Used() int64 { return b.used.Load() }

// Shares is the number of open shares.
func (b *Budget) Shares() int { return int(b.shares.Load()) }

// Join opens a share of the budget.
func (b *Budget) Join() *Share {
	b.shares.Add(1)
	return &Share{b: b}
}

// Share is one stateful subtask's part of a Budget. It is used by one
// goroutine (its subtask's); the Budget's totals are atomic.
type Share struct {
	b      *Budget
	held   int64
	closed bool
}

// Update reports that the share's subtask now holds bytes in memory.
func (s *Share) Update(bytes int64) {
	if s == nil || s.closed {
		return
	}
	s.b.used.Add(bytes - s.held)
	s.held = bytes
}

// Held is the bytes last reported by Update.
func (s *Share) Held() int64 {
	if s == nil {
		return 0
	}
	return s.held
}

// Limit is the bytes the share's subtask may hold now: the larger of its
// fair part (Total / shares) and what the other shares leave unused.
func (s *Share) Limit() int64 {
	if s == nil {
		return 1<<63 - 1
	}
	n := max(1, s.b.shares.Load())
	fair := s.b.total / n
	free := s.b.total - (s.b.used.Load() - s.held)
	return max(fair, free)
}

// Over reports whether the share holds more than its limit.
func (s *Share) Over() bool { return s != nil && s.held > s.Limit() }

// Close gives the share back: its bytes no longer count.
func (s *Share) Close() {
	if s == nil || s.closed {
		return
	}
	s.b.used.Add(-s.held)
	s.b.shares.Add(-1)
	s.held, s.closed = 0, true
}

// ManagedMemory is the memory a process gives its keyed state (Flink's
// managed memory), in bytes, split three ways so that the state's RSS
// stays within it however large the state grows:
//
//   - half is the Budget of what operators hold in memory (write-back
//     caches, a join's rows, window, TopN and OVER buffers): the part
//     that decides how much of the state is served without a read of
//     the store;
//   - a quarter is one block cache shared by every Pebble store of the
//     process (the blocks of sstables read, bloom filters included);
//   - a quarter bounds Pebble's memtables: each store's largest memtable
//     is an eighth of it, within 1 and 16 MiB (a store holds up to
//     MemTableStopWritesThreshold of them while flushes run behind).
//
// Close releases the block cache once the stores using it are closed.
type ManagedMemory struct {
	total      int64
	budget     *Budget
	blockCache *pebble.Cache
	memtable   uint64
}

// NewManagedMemory splits total bytes (at least 4 × MinBudget).
func NewManagedMemory(total int64) (*ManagedMemory, error) {
	if total < 4*MinBudget {
		return nil, fmt.Errorf("state: managed memory of %d bytes is below the least, %d", total, 4*MinBudget)
	}
	b, err := NewBudget(total / 2)
	if err != nil {
		return nil, err
	}
	mt := min(max(total/4/8, 1<<20), 16<<20)
	return &ManagedMemory{total: total, budget: b, blockCache: pebble.NewCache(total / 4), memtable: uint64(mt)}, nil
}

// Total is the managed memory's size in bytes.
func (m *ManagedMemory) Total() int64 { return m.total }

// Budget is the operators' part.
func (m *ManagedMemory) Budget() *Budget { return m.budget }

// Pebble returns o with the block cache and memtable size of m.
func (m *ManagedMemory) Pebble(o PebbleOptions) PebbleOptions {
	o.Cache = m.blockCache
	o.MemTableSize = m.memtable
	return o
}

// Close releases m's block cache: stores still open keep it until they
// close.
func (m *ManagedMemory) Close() {
	if m.blockCache != nil {
		m.blockCache.Unref()
		m.blockCache = nil
	}
}
