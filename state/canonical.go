package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// restoreCanonical puts the entries in [kgStart, kgEnd] of the canonical
// checkpoint in src into s: it streams them into sstables of about
// ingestTableBytes in the store's directory and, once the whole file was
// read and its trailer's count and checksum hold, ingests them (Pebble
// links them into the LSM), so nothing is written entry by entry and a
// damaged file ingests nothing. The entries must be in key group then key
// order, as WriteCanonical writes them; one out of order is ErrCorrupt.
func (s *PebbleStore) restoreCanonical(src string, kgStart, kgEnd int) error {
	path := filepath.Join(src, CanonicalFile)
	t := s.newTableWriter("restore")
	defer t.Discard()
	var prev, k []byte
	err := scanEntries(path, func(kg int, key, v []byte) error {
		if kg < 0 || kg >= maxKeyGroups {
			return fmt.Errorf("%w: %s: key group %d out of range", ErrCorrupt, path, kg)
		}
		k = append(append(k[:0], kgPrefix(kg)...), key...)
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("%w: %s: entries out of order", ErrCorrupt, path)
		}
		prev = append(prev[:0], k...)
		if kg < kgStart || kg > kgEnd {
			return nil
		}
		return t.Set(k, v)
	})
	if err != nil {
		return err
	}
	if err := t.Ingest(); err != nil {
		return fmt.Errorf("state: restore pebble store %s: ingest %s: %w", s.dir, path, err)
	}
	return nil
}

// scanEntries calls fn for every record of the entries file at path,
// reading it as a stream, then checks the trailer's count and checksum: a
// caller makes nothing of what fn got durable before it returns nil. An
// error of fn ends the scan and is returned; a damaged file is ErrCorrupt.
func scanEntries(path string, fn func(kg int, key, value []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size < 12 {
		return fmt.Errorf("%w: %s is truncated", ErrCorrupt, path)
	}
	crc := crc32.New(castagnoli)
	r := bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, size-12), crc), 1<<20)
	corrupt := func() error { return fmt.Errorf("%w: %s", ErrCorrupt, path) }
	chunk := func(buf []byte) ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(size) {
			return nil, corrupt()
		}
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, corrupt()
		}
		return buf, nil
	}
	var key, val []byte
	var n uint64
	for {
		kg, err := binary.ReadUvarint(r)
		if err == io.EOF {
			break
		}
		if err != nil || kg >= maxKeyGroups {
			return corrupt()
		}
		if key, err = chunk(key); err != nil {
			return err
		}
		if val, err = chunk(val); err != nil {
			return err
		}
		n++
		if err := fn(int(kg), key, val); err != nil {
			return err
		}
	}
	var tr [12]byte
	if _, err := io.ReadFull(f, tr[:]); err != nil {
		return corrupt()
	}
	crc.Write(tr[:8])
	if crc.Sum32() != binary.BigEndian.Uint32(tr[8:]) {
		return fmt.Errorf("%w: %s fails its checksum", ErrCorrupt, path)
	}
	if want := binary.BigEndian.Uint64(tr[:8]); n != want {
		return fmt.Errorf("%w: %s has %d entries, its trailer says %d", ErrCorrupt, path, n, want)
	}
	return nil
}
