package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCanonicalAcrossBackends writes the stores of 2 subtasks of each
// backend in the canonical format and restores them under each backend
// into 1, 2 and 3 subtasks: every entry lands once, in the store owning
// its key group, and the canonical file of the same entries is the same
// whichever backend wrote it.
func TestCanonicalAcrossBackends(t *testing.T) {
	const maxPar = 128
	backends := []Backend{MemoryBackend{}, PebbleBackend{}}
	var files [][]byte
	for _, wbe := range backends {
		root := t.TempDir()
		rng := rand.New(rand.NewSource(7))
		var all []entry
		var from []string
		for i := 0; i < 2; i++ {
			start, end := KeyGroupRange(i, maxPar, 2)
			s, err := wbe.Open(filepath.Join(root, "old", strconv.Itoa(i)))
			if err != nil {
				t.Fatal(err)
			}
			var b WriteBatch
			for j := 0; j < 3000; j++ {
				b.Put(start+rng.Intn(end-start+1), []byte(fmt.Sprintf("k%d-%d", i, j)), []byte(strconv.Itoa(j)))
			}
			if err := s.Apply(&b); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "sp", strconv.Itoa(i))
			info, err := WriteCanonical(s, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Files) != 1 || info.Files[0].Name != CanonicalFile {
				t.Fatalf("%s: canonical checkpoint lists %v, want only %s", wbe.Name(), info.Files, CanonicalFile)
			}
			if err := VerifyCheckpoint(dir, info.Files); err != nil {
				t.Fatal(err)
			}
			if !IsCanonical(dir) {
				t.Fatalf("%s: IsCanonical(%s) is false", wbe.Name(), dir)
			}
			data, err := os.ReadFile(filepath.Join(dir, CanonicalFile))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				files = append(files, data)
			}
			from = append(from, dir)
			all = append(all, entries(t, s)...)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, rbe := range backends {
			for _, toPar := range []int{1, 2, 3} {
				seen := map[entry]int{}
				for j := 0; j < toPar; j++ {
					start, end := KeyGroupRange(j, maxPar, toPar)
					dir := filepath.Join(root, fmt.Sprintf("%s-%d-%d", rbe.Name(), toPar, j))
					s, err := rbe.Restore(dir, from, start, end)
					if err != nil {
						t.Fatalf("%s -> %s x%d: %v", wbe.Name(), rbe.Name(), toPar, err)
					}
					for _, e := range entries(t, s) {
						if e.kg < start || e.kg > end {
							t.Errorf("%s -> %s x%d: subtask %d [%d, %d] holds key group %d", wbe.Name(), rbe.Name(), toPar, j, start, end, e.kg)
						}
						seen[e]++
					}
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
				}
				for _, e := range all {
					if seen[e] != 1 {
						t.Fatalf("%s -> %s x%d: entry %v restored %d times", wbe.Name(), rbe.Name(), toPar, e, seen[e])
					}
				}
				if len(seen) != len(all) {
					t.Fatalf("%s -> %s x%d: %d entries restored, want %d", wbe.Name(), rbe.Name(), toPar, len(seen), len(all))
				}
			}
		}
	}
	if !slices.Equal(files[0], files[1]) {
		t.Errorf("the canonical files of the same entries differ between the backends (%d and %d bytes)", len(files[0]), len(files[1]))
	}
}

// TestCanonicalRejectsDamage: a canonical file that fails its checksum, or
// whose entries are out of order, is ErrCorrupt under Pebble; a Pebble
// checkpoint given to the hashmap backend is ErrOtherFormat.
func TestCanonicalRejectsDamage(t *testing.T) {
	root := t.TempDir()
	s, err := PebbleBackend{}.Open(filepath.Join(root, "work"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b WriteBatch
	b.Put(1, []byte("a"), []byte("1"))
	b.Put(2, []byte("b"), []byte("2"))
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	native := filepath.Join(root, "native")
	if _, err := s.Checkpoint(native); err != nil {
		t.Fatal(err)
	}
	if _, err := (MemoryBackend{}).Restore("", []string{native}, 0, 127); !errors.Is(err, ErrOtherFormat) {
		t.Errorf("hashmap restore of a Pebble checkpoint: %v, want ErrOtherFormat", err)
	}

	canon := filepath.Join(root, "canon")
	if _, err := WriteCanonical(s, canon); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(canon, CanonicalFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[1] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (PebbleBackend{}).Restore(filepath.Join(root, "r1"), []string{canon}, 0, 127); !errors.Is(err, ErrCorrupt) {
		t.Errorf("pebble restore of a damaged canonical file: %v, want ErrCorrupt", err)
	}

	// Entries out of order (key group 2 before 1), with a valid trailer.
	unsorted := filepath.Join(root, "unsorted")
	m := NewMemory()
	var mb WriteBatch
	mb.Put(2, []byte("b"), []byte("2"))
	if err := m.Apply(&mb); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Checkpoint(unsorted); err != nil {
		t.Fatal(err)
	}
	m2 := NewMemory()
	mb.Reset()
	mb.Put(1, []byte("a"), []byte("1"))
	if err := m2.Apply(&mb); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	if _, err := m2.Checkpoint(other); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, concatEntries(t, filepath.Join(unsorted, CanonicalFile), filepath.Join(other, CanonicalFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (PebbleBackend{}).Restore(filepath.Join(root, "r2"), []string{canon}, 0, 127); !errors.Is(err, ErrCorrupt) {
		t.Errorf("pebble restore of unsorted entries: %v, want ErrCorrupt", err)
	}
}

// concatEntries joins the records of two entries files under a new trailer.
func concatEntries(t *testing.T, a, b string) []byte {
	var recs []byte
	var n uint64
	for _, p := range []string{a, b} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, data[:len(data)-12]...)
		n++
	}
	return appendTrailer(recs, n)
}

// appendTrailer appends the count and checksum trailer of an entries file.
func appendTrailer(recs []byte, n uint64) []byte {
	recs = binary.BigEndian.AppendUint64(recs, n)
	return binary.BigEndian.AppendUint32(recs, crc32.Checksum(recs, castagnoli))
}

// TestCanonicalIngest: Pebble restores a canonical file by ingesting
// sstables (several, with a small table size), leaves none of its
// temporary files behind, and the restored store checkpoints natively and
// restores from that as any other.
func TestCanonicalIngest(t *testing.T) {
	defer func(n int) { ingestTableBytes = n }(ingestTableBytes)
	ingestTableBytes = 8 << 10
	root := t.TempDir()
	m := NewMemory()
	putEntries(t, m, rand.New(rand.NewSource(3)), 5000, 128, 20)
	want := entries(t, m)
	canon := filepath.Join(root, "canon")
	if _, err := WriteCanonical(m, canon); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "restored")
	s, err := PebbleBackend{}.Restore(dir, []string{canon}, 0, 127)
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(t, s); !equalEntries(got, want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
	ps := s.(*PebbleStore)
	if n := ps.db.Metrics().Total().TablesCount; n < 10 {
		t.Errorf("%d sstables after ingesting %d entries in tables of %d bytes: not ingested in several", n, len(want), ingestTableBytes)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in the store", e.Name())
		}
	}
	native := filepath.Join(root, "native")
	if _, err := s.Checkpoint(native); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := PebbleBackend{}.Restore(filepath.Join(root, "again"), []string{native}, 0, 127)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := entries(t, again); !equalEntries(got, want) {
		t.Fatalf("restored from the native checkpoint %d entries, want %d", len(got), len(want))
	}
}
