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
// Unless GOMEMLIMIT is set in the environment, it also makes the Go
// runtime's soft memory limit the managed memory plus memLimitOverhead, so
// that the collector works harder as the heap nears it instead of letting
// it grow to twice what is live.
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
		debug.SetMemoryLimit(size + memLimitOverhead)
	}
	return m, nil
}

// memLimitOverhead is what the process may take besides its managed
// memory before the Go runtime's soft limit: the batches in flight
// between operators, sources' and sinks' buffers, the runtime itself.
const memLimitOverhead = 256 << 20
