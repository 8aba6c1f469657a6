package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// ErrCorrupt is returned when a checkpoint's files cannot be read back.
var ErrCorrupt = errors.New("state: corrupt checkpoint")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const memoryFile = "entries"

// Checkpoint writes every entry to dir/entries: records of uvarint key
// group, key length, key, value length, value; then a trailer of the entry
// count (8 bytes) and the CRC-32C of everything before it (4 bytes), so a
// truncated or damaged file is detected on restore.
func (m *Memory) Checkpoint(dir string) (CheckpointInfo, error) {
	return writeEntries(m, dir)
}

// writeEntries writes every entry of s to dir/entries (Memory.Checkpoint).
func writeEntries(s Store, dir string) (CheckpointInfo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return CheckpointInfo{}, err
	}
	path := filepath.Join(dir, memoryFile)
	f, err := os.Create(path)
	if err != nil {
		return CheckpointInfo{}, err
	}
	crc := crc32.New(castagnoli)   // of the records and the count: the trailer
	whole := crc32.New(castagnoli) // of the file: for the checkpoint's metadata
	w := bufio.NewWriter(io.MultiWriter(f, crc, whole))
	var n uint64
	var buf []byte
	err = s.Scan(func(kg int, key, value []byte) error {
		buf = binary.AppendUvarint(buf[:0], uint64(kg))
		buf = binary.AppendUvarint(buf, uint64(len(key)))
		buf = append(buf, key...)
		buf = binary.AppendUvarint(buf, uint64(len(value)))
		buf = append(buf, value...)
		n++
		_, err := w.Write(buf)
		return err
	})
	if err == nil {
		var count [8]byte
		binary.BigEndian.PutUint64(count[:], n)
		_, err = w.Write(count[:])
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc.Sum32())
		_, err = io.MultiWriter(f, whole).Write(sum[:])
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return CheckpointInfo{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return CheckpointInfo{}, err
	}
	return CheckpointInfo{Size: st.Size(), IncrementalSize: st.Size(),
		Files: []FileSum{{Name: memoryFile, Size: st.Size(), CRC32C: whole.Sum32()}}}, nil
}

// MemoryBackend is the 'hashmap' state backend: stores are Go maps,
// checkpointed whole.
type MemoryBackend struct{}

func (MemoryBackend) Name() string { return "hashmap" }

func (MemoryBackend) Open(string) (Store, error) { return NewMemory(), nil }

func (MemoryBackend) Restore(_ string, from []string, kgStart, kgEnd int) (Store, error) {
	m := NewMemory()
	var b WriteBatch
	for _, dir := range from {
		if !IsCanonical(dir) && isPebbleCheckpoint(dir) {
			return nil, otherFormatErr(dir, "hashmap")
		}
		if err := scanEntries(filepath.Join(dir, memoryFile), func(kg int, k, v []byte) error {
			if kg >= kgStart && kg <= kgEnd {
				b.Put(kg, k, v)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return m, m.Apply(&b)
}
