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
// of size bytes: size plus memLimitOverhead. With cgo, Pebble's half (its
// block cache and memtables) is allocated by C, outside the Go heap, so
// this lets the heap grow past the operators' half; a limit of that half
// plus the overhead kept the RSS of a 4M-key group-by 300 MiB lower, but
// the heap holds more than the operators account for (batches in flight,
// a join's and a window's structures), and Nexmark q7's collector then ran
// without pause: 61K events per CPU second over 4M events against 136K.
func goMemoryLimit(size int64) int64 { return size + memLimitOverhead }

// memLimitOverhead is what the process may take besides its managed
// memory before the Go runtime's soft limit: the batches in flight
// between operators, sources' and sinks' buffers, the runtime itself.
const memLimitOverhead = 256 << 20
