package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streamsql/streamsql/internal/fsutil"
)

// MetadataFile is the name of a checkpoint's metadata file. A checkpoint
// directory without a valid one is not a checkpoint.
const MetadataFile = "_metadata"

// ErrCorrupt is returned for metadata that is truncated or damaged.
var ErrCorrupt = errors.New("checkpoint metadata is damaged")

// ErrUnsupportedVersion is returned for metadata of a format version this
// build does not read (written by a newer streamsql). The error wraps
// ErrIncompatibleState too, as does metadata with a field this build does
// not know or of another type.
var ErrUnsupportedVersion = errors.New("checkpoint metadata of an unsupported version")

// FileSum is the size and CRC-32C (Castagnoli) of one file of a subtask's
// state store checkpoint, named relative to the subtask's Dir.
type FileSum struct {
	Name   string
	Size   int64
	CRC32C uint32
}

// SubtaskState is what one subtask contributed to a checkpoint.
type SubtaskState struct {
	Subtask int
	// Inline holds small state kept in the metadata itself: a source's
	// position, a sink's pending-commit handle.
	Inline []byte `json:",omitempty"`
	// Dir is the directory of the subtask's state store checkpoint, relative
	// to the checkpoint directory ("" when it has none).
	Dir                   string `json:",omitempty"`
	Size, IncrementalSize int64  `json:",omitempty"`
	// Files are every file under Dir with its size and checksum, verified
	// before a restore uses them (from version 2 on; see HasFileSums).
	Files []FileSum `json:",omitempty"`
	// Alignment is how long the subtask held input channels back for the
	// checkpoint's barrier (Record.Alignment); it is not stored.
	Alignment time.Duration `json:"-"`
}

// OperatorState is every subtask's state of one operator.
type OperatorState struct {
	ID          string
	Name        string
	Parallelism int
	Subtasks    []SubtaskState
}

// Metadata describes a completed checkpoint or savepoint.
type Metadata struct {
	Version   int
	Job       string
	ID        int64
	Savepoint bool `json:",omitempty"`
	Triggered time.Time
	// Duration is from the trigger to the last subtask's acknowledgement
	// (Record.Acked): the metadata is written after it.
	Duration       time.Duration
	MaxParallelism int
	// Owner is the owner epoch of the process that completed the
	// checkpoint in an object store (Storage.Claim; from version 3 on, 0
	// for a checkpoint kept only on disk).
	Owner int64 `json:",omitempty"`
	// Format is the format of the state files (from version 4 on; ""
	// before, which is FormatNative): a checkpoint's are native, a
	// savepoint's canonical unless asked otherwise.
	Format Format `json:",omitempty"`
	// Backend is the 'state.backend' of the job that wrote the state
	// (from version 4 on), which alone restores native state.
	Backend   string `json:",omitempty"`
	Operators []*OperatorState
	// Dir is the directory the metadata was read from (not stored).
	Dir string `json:"-"`
}

// Size is the total size of the checkpoint's state.
func (m *Metadata) Size() (total, incremental int64) {
	for _, o := range m.Operators {
		for _, s := range o.Subtasks {
			total += s.Size + int64(len(s.Inline))
			incremental += s.IncrementalSize + int64(len(s.Inline))
		}
	}
	return total, incremental
}

// Operator returns the state of the operator with the given id.
func (m *Metadata) Operator(id string) *OperatorState {
	for _, o := range m.Operators {
		if o.ID == id {
			return o
		}
	}
	return nil
}

// HasFileSums reports whether the metadata lists the size and checksum of
// every state file (version 2 on). Version 1 metadata did not; its state
// is restored with only the backend's own checks.
func (m *Metadata) HasFileSums() bool { return m.Version >= 2 }

// The versions of the metadata format: 1, the first; 2 adds
// SubtaskState.Files; 3 adds Owner; 4 adds Format and Backend. Versions from minMetadataVersion to
// metadataVersion are read; WriteMetadata writes metadataVersion.
const (
	minMetadataVersion = 1
	metadataVersion    = 4
)

// The file is the JSON document followed by a line "sha256 <hex>" of it, so
// a torn or damaged write is detected on read.
func encodeMetadata(m *Metadata) ([]byte, error) {
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return append(append(body, "\nsha256 "...), hex.EncodeToString(sum[:])+"\n"...), nil
}

func decodeMetadata(data []byte) (*Metadata, error) {
	i := bytes.LastIndex(data, []byte("\nsha256 "))
	if i < 0 {
		return nil, fmt.Errorf("%w: no checksum (truncated?)", ErrCorrupt)
	}
	body, tail := data[:i], bytes.TrimSpace(data[i+len("\nsha256 "):])
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != string(tail) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	// The version first, so that a newer build's metadata is refused for
	// its version rather than for the fields it added.
	var v struct{ Version int }
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if v.Version < minMetadataVersion || v.Version > metadataVersion {
		return nil, fmt.Errorf("%w: %w: version %d (this streamsql reads versions %d to %d; a newer one wrote it?)",
			ErrIncompatibleState, ErrUnsupportedVersion, v.Version, minMetadataVersion, metadataVersion)
	}
	// A field this build does not know, or of another type, is a layout it
	// does not read: never dropped or left zero.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m Metadata
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: checkpoint metadata version %d: %v", ErrIncompatibleState, v.Version, err)
	}
	return &m, nil
}

// WriteMetadata writes dir/_metadata atomically: a temporary file, fsync,
// rename, fsync of the directory (through fsutil.For(dir)). Only after it
// returns is the checkpoint complete; if it fails, dir holds no _metadata
// (or, if only the directory's sync failed, one that may not survive a
// crash), and the caller discards the checkpoint.
func WriteMetadata(dir string, m *Metadata) error {
	m.Version = metadataVersion
	data, err := encodeMetadata(m)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, MetadataFile), data)
}

// ReadMetadata reads and verifies dir/_metadata.
func ReadMetadata(dir string) (*Metadata, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, err
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, MetadataFile), err)
	}
	m.Dir = dir
	return m, nil
}
