package state

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// TestSweeper: a sweep visits at most its limit of the space's entries,
// resumes after the last one it visited, goes over every key group and
// starts over after the last, never touches another space, and deletes
// exactly the entries reported expired, on both backends.
func TestSweeper(t *testing.T) {
	for _, backend := range []Backend{MemoryBackend{}, PebbleBackend{}} {
		t.Run(backend.Name(), func(t *testing.T) {
			store, err := backend.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			rows := NewKeySpace(store, 1, "rows")
			other := NewKeySpace(store, 2, "other")
			// 10 entries in each of key groups 3..6 (a value: the entry's
			// write time, i*10+kg), and as many in another space.
			var b WriteBatch
			for kg := 3; kg <= 6; kg++ {
				for i := 0; i < 10; i++ {
					key := fmt.Appendf(nil, "k%02d", i)
					rows.Put(&b, kg, key, binary.BigEndian.AppendUint64(nil, uint64(i*10+kg)))
					other.Put(&b, kg, key, []byte("x"))
				}
			}
			if err := store.Apply(&b); err != nil {
				t.Fatal(err)
			}
			s := NewSweeper(rows, 3, 6)
			seen := map[string]int{}
			now := uint64(50) // entries written before 50 expire
			expired := func(kg int, key, value []byte) bool {
				seen[fmt.Sprintf("%d/%s", kg, key)]++
				return binary.BigEndian.Uint64(value) < now
			}
			// 40 entries, 15 per sweep: 3 sweeps visit each once, the
			// third wrapping around to the first 5 again.
			total := 0
			for i, want := range []int{15, 15, 15} {
				v, d, err := s.Sweep(15, expired)
				if err != nil {
					t.Fatal(err)
				}
				if v != want {
					t.Fatalf("sweep %d visited %d, want %d", i, v, want)
				}
				total += d
			}
			if len(seen) != 40 {
				t.Fatalf("visited %d distinct entries, want all 40: %v", len(seen), seen)
			}
			for k, n := range seen {
				if n > 2 || (n == 2 && k[:2] != "3/") {
					t.Errorf("entry %s visited %d times", k, n)
				}
			}
			// Written before 50: i*10+kg < 50, i.e. i <= 4 (kg 3..6 < 10).
			if total != 20 {
				t.Errorf("deleted %d, want 20", total)
			}
			left := map[byte]int{}
			if err := store.Scan(func(kg int, key, value []byte) error { left[key[0]]++; return nil }); err != nil {
				t.Fatal(err)
			}
			if left[1] != 20 || left[2] != 40 {
				t.Errorf("left: %d rows (want 20), %d of the other space (want 40)", left[1], left[2])
			}
			// A limit larger than the space visits every entry once.
			clear(seen)
			if v, _, err := s.Sweep(1000, expired); err != nil || v != 20 {
				t.Errorf("a sweep of up to 1000: visited %d (%v), want 20", v, err)
			}
		})
	}
}
