package state

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleFormatPrevious is the format PebbleFormatMajorVersion replaced (or,
// before the first ratchet, the exported format before it). When
// PebbleFormatMajorVersion is bumped, set this to its old value.
const pebbleFormatPrevious = pebble.FormatTableFormatV6

// TestPebbleFormatPinned: a store, and the checkpoints it writes, are at
// the pinned format, whatever pebble.FormatNewest of the dependency is.
func TestPebbleFormatPinned(t *testing.T) {
	if PebbleFormatMajorVersion > pebble.FormatNewest || PebbleFormatMajorVersion < pebble.FormatMinSupported {
		t.Fatalf("PebbleFormatMajorVersion %d is outside what this Pebble supports [%d, %d]",
			PebbleFormatMajorVersion, pebble.FormatMinSupported, pebble.FormatNewest)
	}
	root := t.TempDir()
	st, err := PebbleBackend{}.Open(filepath.Join(root, "work"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*PebbleStore)
	if got := s.db.FormatMajorVersion(); got != PebbleFormatMajorVersion {
		t.Fatalf("store format %d, want the pinned %d", got, PebbleFormatMajorVersion)
	}
	putEntries(t, st, rand.New(rand.NewSource(1)), 500, 8, 32)
	ck := filepath.Join(root, "chk-1")
	if _, err := st.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	db, err := openCheckpoint(ck, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.FormatMajorVersion(); got != PebbleFormatMajorVersion {
		t.Fatalf("checkpoint format %d, want the pinned %d", got, PebbleFormatMajorVersion)
	}
}

// TestPebbleRatchetFormat: a checkpoint written at the previous format
// restores (by links, and by copies from several checkpoints) into a store
// at the pinned format with every entry, and the checkpoint itself is not
// modified (it stays at its format, readable by the build that wrote it).
func TestPebbleRatchetFormat(t *testing.T) {
	if pebbleFormatPrevious >= PebbleFormatMajorVersion {
		t.Fatalf("pebbleFormatPrevious %d must be below PebbleFormatMajorVersion %d", pebbleFormatPrevious, PebbleFormatMajorVersion)
	}
	root := t.TempDir()
	// Two checkpoints of key groups [0, 4) and [4, 8), written by Pebble
	// at the previous format, as an older build would have.
	var want []entry
	var ckpts []string
	for c := 0; c < 2; c++ {
		dir := filepath.Join(root, fmt.Sprintf("old-%d", c))
		db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebbleFormatPrevious, DisableWAL: true, Logger: quietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		for kg := 4 * c; kg < 4*c+4; kg++ {
			for i := 0; i < 50; i++ {
				k := binary.BigEndian.AppendUint16(nil, uint16(kg))
				k = fmt.Appendf(k, "key-%03d", i)
				v := fmt.Appendf(nil, "value-%d-%d", kg, i)
				if err := db.Set(k, v, pebble.NoSync); err != nil {
					t.Fatal(err)
				}
				want = append(want, entry{kg: kg, key: string(k[2:]), value: string(v)})
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		ck := filepath.Join(root, fmt.Sprintf("chk-%d", c))
		if err := db.Checkpoint(ck, pebble.WithFlushedWAL()); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		ckpts = append(ckpts, ck)
	}
	before := dirState(t, ckpts[0])
	check := func(name string, from []string, kgStart, kgEnd int) {
		t.Helper()
		st, err := PebbleBackend{}.Restore(filepath.Join(root, name), from, kgStart, kgEnd)
		if err != nil {
			t.Fatalf("%s: restore of a checkpoint at format %d: %v", name, pebbleFormatPrevious, err)
		}
		defer st.Close()
		if got := st.(*PebbleStore).db.FormatMajorVersion(); got != PebbleFormatMajorVersion {
			t.Fatalf("%s: restored store at format %d, want %d", name, got, PebbleFormatMajorVersion)
		}
		var in []entry
		for _, e := range want {
			if e.kg >= kgStart && e.kg <= kgEnd {
				in = append(in, e)
			}
		}
		if got := entries(t, st); !equalEntries(got, in) {
			t.Fatalf("%s: restored %d entries, want %d", name, len(got), len(in))
		}
	}
	check("linked", ckpts[:1], 0, 3)
	check("copied", ckpts, 0, 7)
	if after := dirState(t, ckpts[0]); after != before {
		t.Fatalf("restoring changed the old checkpoint:\nbefore %s\nafter  %s", before, after)
	}
	db, err := openCheckpoint(ckpts[0], PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.FormatMajorVersion(); got != pebbleFormatPrevious {
		t.Fatalf("the old checkpoint is now at format %d, want %d", got, pebbleFormatPrevious)
	}
}
