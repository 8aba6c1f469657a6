package checkpoint

import (
	"fmt"
	"strings"
)

// Format is the format of a savepoint's state files, as Flink's
// SavepointFormatType.
type Format string

const (
	// FormatCanonical is the state of every store as its logical entries
	// (state.WriteCanonical), which every state backend restores: the
	// default of a savepoint.
	FormatCanonical Format = "CANONICAL"
	// FormatNative is the state backend's own files (Pebble's sstables,
	// the hashmap backend's entries): faster to take, restored only under
	// the backend that wrote it. Checkpoints are always native.
	FormatNative Format = "NATIVE"
)

// ParseFormat reads a savepoint format, CANONICAL or NATIVE in any case;
// "" is the default, CANONICAL. Anything else is an error naming the
// formats there are.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return FormatCanonical, nil
	case FormatCanonical, FormatNative:
		return f, nil
	}
	return "", fmt.Errorf("unknown savepoint format '%s' (CANONICAL or NATIVE)", s)
}

// StateFormat is the format of the metadata's state files: Format, or
// NATIVE for metadata that records none (a checkpoint, or anything
// written before version 4).
func (m *Metadata) StateFormat() Format {
	if m.Format == "" {
		return FormatNative
	}
	return m.Format
}

// CheckBackend returns an error wrapping ErrIncompatibleState when m
// holds store state (a subtask's Dir) in the native format of a backend
// other than backend (a state.backend value): only a canonical savepoint
// restores under another backend. Metadata that does not name its backend
// (before version 4) passes; the backend finds what it cannot read itself.
// So does metadata without store state (only sources' and sinks' inline
// state, which no backend holds).
func (m *Metadata) CheckBackend(backend string) error {
	if m.StateFormat() == FormatCanonical || m.Backend == "" || m.Backend == backend || !m.hasStoreState() {
		return nil
	}
	what := fmt.Sprintf("checkpoint %d", m.ID)
	if m.Savepoint {
		what = fmt.Sprintf("savepoint %d", m.ID)
	}
	return fmt.Errorf("%w: %s at %s is in the native format of the '%s' state backend and cannot be restored under '%s': restore it with 'state.backend' = '%s', or take a canonical savepoint there (STOP JOB '<id>' WITH SAVEPOINT, whose default format is CANONICAL) and restore that",
		ErrIncompatibleState, what, m.Dir, m.Backend, backend, m.Backend)
}

// hasStoreState reports whether a subtask of m has a store checkpoint.
func (m *Metadata) hasStoreState() bool {
	for _, o := range m.Operators {
		for _, st := range o.Subtasks {
			if st.Dir != "" {
				return true
			}
		}
	}
	return false
}
