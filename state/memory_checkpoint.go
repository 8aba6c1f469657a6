package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrCorrupt is returned when a checkpoint's files cannot be read back.
var ErrCorrupt = errors.New("state: corrupt checkpoint")

const memoryFile = "entries"

// Checkpoint writes every entry to dir/entries: records of uvarint key
// group, key length, key, value length, value; then a trailing count.
func (m *Memory) Checkpoint(dir string) (CheckpointInfo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return CheckpointInfo{}, err
	}
	path := filepath.Join(dir, memoryFile)
	f, err := os.Create(path)
	if err != nil {
		return CheckpointInfo{}, err
	}
	w := bufio.NewWriter(f)
	var n uint64
	var buf []byte
	err = m.Scan(func(kg int, key, value []byte) error {
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
		var tail [8]byte
		binary.BigEndian.PutUint64(tail[:], n)
		_, err = w.Write(tail[:])
	}
	if err == nil {
		err = w.Flush()
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
	return CheckpointInfo{Size: st.Size(), IncrementalSize: st.Size()}, nil
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
		if err := readMemoryCheckpoint(filepath.Join(dir, memoryFile), func(kg int, k, v []byte) {
			if kg >= kgStart && kg <= kgEnd {
				b.Put(kg, k, v)
			}
		}); err != nil {
			return nil, err
		}
	}
	return m, m.Apply(&b)
}

func readMemoryCheckpoint(path string, fn func(kg int, k, v []byte)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) < 8 {
		return fmt.Errorf("%w: %s is truncated", ErrCorrupt, path)
	}
	want := binary.BigEndian.Uint64(data[len(data)-8:])
	data = data[:len(data)-8]
	var n uint64
	for len(data) > 0 {
		kg, k1 := binary.Uvarint(data)
		if k1 <= 0 {
			return fmt.Errorf("%w: %s", ErrCorrupt, path)
		}
		data = data[k1:]
		key, rest, ok := readBytes(data)
		if !ok {
			return fmt.Errorf("%w: %s", ErrCorrupt, path)
		}
		val, rest, ok := readBytes(rest)
		if !ok {
			return fmt.Errorf("%w: %s", ErrCorrupt, path)
		}
		data = rest
		fn(int(kg), key, val)
		n++
	}
	if n != want {
		return fmt.Errorf("%w: %s has %d entries, its trailer says %d", ErrCorrupt, path, n, want)
	}
	return nil
}

func readBytes(b []byte) ([]byte, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
