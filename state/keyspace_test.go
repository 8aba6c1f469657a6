package state

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Two key spaces of one store, each with its own cache, and counted sets in
// a third: a checkpoint restored into two stores by key group range (a
// rescale from one subtask to two) gives every space its key groups' keys,
// and a set loaded lazily from a restored store finds its values in order.
func TestKeySpacesRescale(t *testing.T) {
	for _, be := range []Backend{MemoryBackend{}, PebbleBackend{}} {
		t.Run(be.Name(), func(t *testing.T) {
			root := t.TempDir()
			s, err := be.Open(filepath.Join(root, "work"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a := NewSpaceCache[int](NewKeySpace(s, 1, "a"), intCodec{})
			b := NewSpaceCache[int](NewKeySpace(s, 2, "b"), intCodec{})
			sets := NewCountedSets(NewKeySpace(s, 3, "values"), VarintCodec{})
			for kg := 0; kg < 4; kg++ {
				for _, c := range []*Cache[int]{a, b} {
					e, _, err := c.Get(kg, []byte(fmt.Sprint("k", kg)))
					if err != nil {
						t.Fatal(err)
					}
					e.Value = kg*10 + len(c.space.name)
					c.MarkDirty(e)
				}
				var ref SetRef
				set, err := sets.Lookup(&ref, kg, []byte(fmt.Sprint("g", kg)))
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range []string{"m", "c", "x", "c"} {
					if _, err := sets.Add(set, []byte(fmt.Sprint(kg, v)), 1); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, f := range []func() error{a.Flush, b.Flush, sets.Flush} {
				if err := f(); err != nil {
					t.Fatal(err)
				}
			}
			cp := filepath.Join(root, "cp")
			if _, err := s.Checkpoint(cp); err != nil {
				t.Fatal(err)
			}
			for half, r := range [][2]int{{0, 1}, {2, 3}} {
				rs, err := be.Restore(filepath.Join(root, fmt.Sprint("r", half)), []string{cp}, r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				ra := NewSpaceCache[int](NewKeySpace(rs, 1, "a"), intCodec{})
				rsets := NewCountedSets(NewKeySpace(rs, 3, "values"), VarintCodec{})
				for kg := 0; kg < 4; kg++ {
					e, created, err := ra.Get(kg, []byte(fmt.Sprint("k", kg)))
					if err != nil {
						t.Fatal(err)
					}
					mine := kg >= r[0] && kg <= r[1]
					if created == mine || (mine && e.Value != kg*10+1) {
						t.Fatalf("restored [%d,%d]: key group %d: created %v value %d", r[0], r[1], kg, created, e.Value)
					}
					var ref SetRef
					set, err := rsets.Lookup(&ref, kg, []byte(fmt.Sprint("g", kg)))
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					set.Ascend(func(v string, n int64) bool { got = append(got, fmt.Sprintf("%s:%d", v, n)); return true })
					want := ""
					if mine {
						want = fmt.Sprintf("%[1]dc:2 %[1]dm:1 %[1]dx:1", kg)
					}
					if strings.Join(got, " ") != want {
						t.Fatalf("restored [%d,%d]: key group %d: set %v, want %q", r[0], r[1], kg, got, want)
					}
				}
				var spaceB int
				if err := NewKeySpace(rs, 2, "b").Scan(func(kg int, k, v []byte) error { spaceB++; return nil }); err != nil {
					t.Fatal(err)
				}
				if spaceB != 2 {
					t.Fatalf("restored [%d,%d]: space b has %d keys, want 2", r[0], r[1], spaceB)
				}
				rs.Close()
			}
		})
	}
}

// A counted set finds its extremes as values come and go, writes only its
// changed values at Flush, and reloads from the store after Drop.
func TestCountedSets(t *testing.T) {
	s := NewMemory()
	ks := NewKeySpace(s, 5, "values")
	sets := NewCountedSets(ks, VarintCodec{})
	sets.StartsEmpty()
	owner := []byte("o")
	var ref SetRef
	set, _ := sets.Lookup(&ref, 0, owner)
	for i := 0; i < 1000; i++ {
		sets.Add(set, []byte(fmt.Sprintf("%04d", i)), 1)
	}
	if err := sets.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := sets.Add(set, []byte("0999"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := sets.Add(set, []byte("nope"), -1); err == nil {
		t.Fatal("removing a value never added succeeded")
	}
	if max, _ := set.Max(); max != "0998" {
		t.Fatalf("max after removing 0999: %q", max)
	}
	if n := len(set.dirty); n != 1 {
		t.Fatalf("%d dirty values after one change, want 1", n)
	}
	if err := sets.Drop(); err != nil {
		t.Fatal(err)
	}
	set, err := sets.Lookup(&ref, 0, owner)
	if err != nil {
		t.Fatal(err)
	}
	min, _ := set.Min()
	max, _ := set.Max()
	if set.Len() != 999 || min != "0000" || max != "0998" {
		t.Fatalf("reloaded set: %d values in [%q, %q]", set.Len(), min, max)
	}
	// Emptied, the set leaves memory at Flush and the store with it.
	for i := 0; i < 999; i++ {
		if _, err := sets.Add(set, []byte(fmt.Sprintf("%04d", i)), -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := sets.Flush(); err != nil {
		t.Fatal(err)
	}
	n := 0
	ks.Scan(func(int, []byte, []byte) error { n++; return nil })
	if n != 0 || sets.Sets() != 0 {
		t.Fatalf("after emptying: %d keys in the store, %d sets in memory", n, sets.Sets())
	}
}
