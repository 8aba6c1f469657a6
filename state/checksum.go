package state

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// FileSum is the size and CRC-32C (Castagnoli) of one file of a store
// checkpoint, named relative to the checkpoint's directory. Store.Checkpoint
// returns one for every file it wrote; the caller keeps them apart from the
// files (in the checkpoint's _metadata) and checks them with
// VerifyCheckpoint before a Restore, so that damage a backend would not
// notice itself (Pebble reads a MANIFEST only up to its first bad record,
// and never reads some files at all) is found before the state is used.
type FileSum struct {
	Name   string
	Size   int64
	CRC32C uint32
}

// sumFile computes the FileSum of path, named name.
func sumFile(path, name string) (FileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return FileSum{}, fmt.Errorf("state: checksum of %s: %w", path, err)
	}
	return FileSum{Name: name, Size: n, CRC32C: h.Sum32()}, nil
}

// VerifyCheckpoint checks that the store checkpoint in dir holds exactly
// the files of sums, each of its size and CRC-32C. It reads every file
// through. Any difference (a file missing, damaged, of another size, or a
// file sums does not list) is an error wrapping ErrCorrupt that names the
// file. An empty sums is an error too: every store checkpoint has files.
func VerifyCheckpoint(dir string, sums []FileSum) error {
	if len(sums) == 0 {
		return fmt.Errorf("%w: %s: no file checksums recorded for it", ErrCorrupt, dir)
	}
	listed := make(map[string]bool, len(sums))
	for _, want := range sums {
		path := filepath.Join(dir, want.Name)
		if want.Name == "" || filepath.Base(want.Name) != want.Name || listed[want.Name] {
			return fmt.Errorf("%w: %s: bad file entry %q in the checksums", ErrCorrupt, dir, want.Name)
		}
		listed[want.Name] = true
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
		if st.Size() != want.Size {
			return fmt.Errorf("%w: %s has %d bytes, the checkpoint recorded %d", ErrCorrupt, path, st.Size(), want.Size)
		}
		got, err := sumFile(path, want.Name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if got.Size != want.Size || got.CRC32C != want.CRC32C {
			return fmt.Errorf("%w: %s fails its checksum (CRC-32C %08x, the checkpoint recorded %08x)", ErrCorrupt, path, got.CRC32C, want.CRC32C)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, dir, err)
	}
	for _, e := range ents {
		if !listed[e.Name()] {
			return fmt.Errorf("%w: %s is not one of the checkpoint's files", ErrCorrupt, filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// sortSums orders sums by name, so that the metadata of a checkpoint does
// not depend on the order of a directory listing.
func sortSums(sums []FileSum) {
	sort.Slice(sums, func(i, j int) bool { return sums[i].Name < sums[j].Name })
}
