package session

import (
	"os"
	"runtime/debug"

	"github.com/streamsql/streamsql/state"
)

// managedMemory returns the state memory of the jobs submitted next
// ('taskmanager.memory.managed.size'): one state.ManagedMemory per value
// of the option, shared by every job the session runs with it, as a
// process shares its managed memory among its slots. A new value makes a
// new one; jobs running keep theirs.
//
// Unless GOMEMLIMIT is set in the environment, it also sets the Go
// runtime's soft memory limit (goMemoryLimit), so that the collector works
// harder as the heap nears it instead of letting it grow to twice what is
// live.
func (s *Session) managedMemory() (*state.ManagedMemory, error) {
	size := s.Settings().ManagedMemory
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memory != nil && s.memory.Total() == size {
		return s.memory, nil
	}
	m, err := state.NewManagedMemory(size)
	if err != nil {
		return nil, err
	}
	if s.memory != nil {
		s.memory.Close()
	}
	s.memory = m
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(goMemoryLimit(size))
	}
	return m, nil
}

// goMemoryLimit is the Go runtime's soft memory limit for managed memory
// of size bytes. Without cgo it is size plus memLimitOverhead: Pebble's
// half of the budget (its block cache and memtables) is on the Go heap
// too. With cgo Pebble allocates that half with C's allocator, outside the
// heap, so the heap holds the operators' half (what they account for),
// what the budget does not count (memLimitOverhead), and room for the
// collector: a quarter of size. Without that room the collector ran
// without pause once the live heap neared the limit; with all of
// Pebble's half as its room (the limit size plus the overhead), the heap
// grew to twice what was live and the RSS of Nexmark q9 and q18 over 10M
// events to 950-1000 MiB for 512 MiB of managed memory. With a quarter:
// 767-885 MiB, at 0.9-0.97 of the events per CPU second (bench/STATE.md).
func goMemoryLimit(size int64) int64 {
	if pebbleOffHeap {
		return size/2 + size/4 + memLimitOverhead
	}
	return size + memLimitOverhead
}

// memLimitOverhead is what the process may take besides its managed
// memory before the Go runtime's soft limit: the batches in flight
// between operators, sources' and sinks' buffers, the runtime itself.
const memLimitOverhead = 256 << 20
