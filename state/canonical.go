package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// ErrOtherFormat is returned by a backend's Restore from a checkpoint
// in another backend's native format (a Pebble checkpoint given to the
// hashmap backend, or the other way round). Only the canonical format
// (WriteCanonical) restores under every backend.
var ErrOtherFormat = errors.New("state: checkpoint in another state backend's native format")

// CanonicalFile is the one file of a store checkpoint in the canonical
// format: the logical entries of the store, (key group, key, value), in
// key group then key order, with a count and a CRC-32C in a trailer. It
// is also the hashmap backend's native format. The file's name is its
// layout's version: a later layout gets a name of its own, and this one
// stays readable.
const CanonicalFile = memoryFile

// WriteCanonical writes every entry of s into dir/entries (CanonicalFile),
// creating dir: the canonical format of a savepoint, which the backends
// of every kind restore (Backend.Restore), into any key group range. It
// reads s through its Scan, so whatever the store's backend, the file is
// the same for the same entries.
func WriteCanonical(s Store, dir string) (CheckpointInfo, error) {
	return writeEntries(s, dir)
}

// IsCanonical reports whether the store checkpoint in dir is in the
// canonical format (holds CanonicalFile).
func IsCanonical(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, CanonicalFile))
	return err == nil && fi.Mode().IsRegular()
}

// otherFormatErr is the error of the backend named backend given the
// Pebble checkpoint in dir.
func otherFormatErr(dir, backend string) error {
	return fmt.Errorf("%w: %s holds Pebble files (the native format of the 'pebble' backend), which the '%s' backend cannot read; restore it under 'pebble', or take a savepoint in the canonical format there",
		ErrOtherFormat, dir, backend)
}

// isPebbleCheckpoint reports whether dir holds a Pebble store's files
// (a MANIFEST).
func isPebbleCheckpoint(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "MANIFEST-") {
			return true
		}
	}
	return false
}

// restoreCanonical writes the entries in [kgStart, kgEnd] of the canonical
// checkpoint in src into s, in sorted batches of RestoreBatchBytes. The
// entries must be in key group then key order (as WriteCanonical writes
// them); one out of order is ErrCorrupt.
func (s *PebbleStore) restoreCanonical(src string, kgStart, kgEnd int) error {
	pb := s.db.NewBatch()
	defer func() { pb.Close() }()
	commit := func() error {
		if pb.Empty() {
			return nil
		}
		if err := pb.Commit(pebble.NoSync); err != nil {
			return fmt.Errorf("state: restore pebble store %s: %w", s.dir, err)
		}
		s.dirty = true
		pb.Reset()
		return nil
	}
	path := filepath.Join(src, CanonicalFile)
	var prev, k []byte
	var werr error
	err := readMemoryCheckpoint(path, func(kg int, key, v []byte) {
		if werr != nil {
			return
		}
		if kg < 0 || kg >= maxKeyGroups {
			werr = fmt.Errorf("%w: %s: key group %d out of range", ErrCorrupt, path, kg)
			return
		}
		k = append(append(k[:0], kgPrefix(kg)...), key...)
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			werr = fmt.Errorf("%w: %s: entries out of order", ErrCorrupt, path)
			return
		}
		prev = append(prev[:0], k...)
		if kg < kgStart || kg > kgEnd {
			return
		}
		if werr = pb.Set(k, v, nil); werr != nil {
			return
		}
		if pb.Len() >= s.opts.RestoreBatchBytes {
			werr = commit()
		}
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return commit()
}
