package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type intCodec struct{}

func (intCodec) Encode(dst []byte, v *int) []byte { return append(dst, byte(*v)) }
func (intCodec) Decode(src []byte, v *int) error  { *v = int(src[0]); return nil }

// TestCacheTrim: a trimmed cache writes its dirty entries back, drops
// entries down to three quarters of its bounds (keys or bytes), first
// those not used since its last pass, and reads the dropped ones from the
// store again; nothing is lost.
func TestCacheTrim(t *testing.T) {
	s := NewMemory()
	c := NewCache[int](s, intCodec{})
	for i := 0; i < 10; i++ {
		e, created, err := c.Get(1, []byte{byte(i)})
		if err != nil || !created {
			t.Fatalf("Get(%d) = %v %v", i, created, err)
		}
		e.Value = i * 2
		c.MarkDirty(e)
	}
	if dropped, err := c.Trim(1<<40, 10); err != nil || dropped || c.Len() != 10 {
		t.Fatalf("Trim within its bounds: dropped %v, len %d, %v", dropped, c.Len(), err)
	}
	if dropped, err := c.Trim(1<<40, 8); err != nil || !dropped {
		t.Fatalf("Trim past its bounds: dropped %v, %v", dropped, err)
	}
	if c.Len() != 6 {
		t.Fatalf("Len after Trim to 8 keys = %d, want 6", c.Len())
	}
	stored := func() (n int) {
		t.Helper()
		if err := s.Scan(func(int, []byte, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := stored(); n != 4 {
		t.Fatalf("entries in the store after Trim: %d, want the 4 dropped (the kept stay dirty)", n)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := stored(); n != 10 {
		t.Fatalf("entries in the store after Flush: %d, want 10", n)
	}
	for i := 0; i < 10; i++ {
		e, _, err := c.Get(1, []byte{byte(i)})
		if err != nil || e.Value != i*2 {
			t.Fatalf("after Trim, key %d: value %d err %v", i, e.Value, err)
		}
	}
	// A pass clears every entry's mark; keys 0 and 1 are used again, so
	// the next Trim drops the others first.
	if _, err := c.Trim(1<<40, 9); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, _, err := c.Get(1, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Trim(1<<40, 2); err != nil {
		t.Fatal(err)
	}
	_, has0 := c.entries["\x00"]
	_, has1 := c.entries["\x01"]
	if c.Len() != 2 || !has0 || !has1 {
		t.Fatalf("after Trim to 2 keys: %d keys, 0 kept %v, 1 kept %v; want keys 0 and 1", c.Len(), has0, has1)
	}
	// By bytes.
	for i := 0; i < 10; i++ {
		if _, _, err := c.Get(1, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := c.Bytes()
	if before <= 0 {
		t.Fatalf("Bytes of 10 entries = %d", before)
	}
	if _, err := c.Trim(before/2, 100); err != nil {
		t.Fatal(err)
	}
	if c.Bytes() > before/2-before/8 {
		t.Fatalf("Bytes after Trim to %d = %d, want at most three quarters", before/2, c.Bytes())
	}
}

// TestMemoryCheckpointDamage: a flipped byte or a truncation in a hashmap
// checkpoint is reported as ErrCorrupt, never restored as wrong state.
func TestMemoryCheckpointDamage(t *testing.T) {
	m := NewMemory()
	var b WriteBatch
	for i := 0; i < 100; i++ {
		b.Put(i%7, []byte{byte(i)}, []byte("value"))
	}
	if err := m.Apply(&b); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/chk"
	info, err := m.Checkpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (MemoryBackend{}).Restore("", []string{dir}, 0, 127); err != nil {
		t.Fatalf("restore of an intact checkpoint: %v", err)
	}
	if len(info.Files) != 1 || info.Files[0].Name != memoryFile || info.Files[0].Size != info.Size {
		t.Fatalf("checkpoint files %+v, want one %q of %d bytes", info.Files, memoryFile, info.Size)
	}
	if err := VerifyCheckpoint(dir, info.Files); err != nil {
		t.Fatalf("verify an intact checkpoint: %v", err)
	}
	path := dir + "/" + memoryFile
	data, _ := os.ReadFile(path)
	for _, damage := range []func([]byte) []byte{
		func(d []byte) []byte { d = append([]byte(nil), d...); d[len(d)/2] ^= 0x10; return d },
		func(d []byte) []byte { return d[:len(d)-5] },
	} {
		os.WriteFile(path, damage(data), 0o644)
		if _, err := (MemoryBackend{}).Restore("", []string{dir}, 0, 127); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("restore of a damaged checkpoint: %v, want ErrCorrupt", err)
		}
		if err := VerifyCheckpoint(dir, info.Files); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("verify a damaged checkpoint: %v, want ErrCorrupt naming %s", err, path)
		}
	}
}

func storeKeys(t *testing.T, s Store) map[byte]byte {
	t.Helper()
	out := map[byte]byte{}
	if err := s.Scan(func(_ int, k, v []byte) error { out[k[0]] = v[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCacheEvict: Evict drops deleted entries from the cache and deletes
// from the store only the keys it holds; live dirty entries stay dirty, and
// reach the store at the next Flush, also after many Evicts compacted the
// dirty list; a deleted key read again starts afresh.
func TestCacheEvict(t *testing.T) {
	s := NewMemory()
	c := NewCache[int](s, intCodec{})
	set := func(k byte, v int) {
		e, _, err := c.Get(1, []byte{k})
		if err != nil {
			t.Fatal(err)
		}
		e.Value = v
		c.MarkDirty(e)
	}
	del := func(k byte) {
		e, created, err := c.Get(1, []byte{k})
		if err != nil || created {
			t.Fatalf("Get(%d) to delete: created %v, %v", k, created, err)
		}
		c.Delete(e)
	}
	set(1, 10)
	set(2, 20)
	if err := c.Flush(); err != nil { // 1 and 2 are in the store
		t.Fatal(err)
	}
	for k := byte(3); k < 100; k++ {
		set(k, int(k))
	}
	del(2)  // stored: the store must drop it
	del(50) // never stored
	set(60, 61)
	del(60)
	set(60, 62) // deleted, then made anew before Evict
	if err := c.Evict(); err != nil {
		t.Fatal(err)
	}
	if got := storeKeys(t, s); len(got) != 1 || got[1] != 10 {
		t.Fatalf("store after Evict = %v, want only 1:10 (live entries are written by Flush)", got)
	}
	if c.Len() != 97 { // 1, 3..99 without 50
		t.Fatalf("Len after Evict = %d, want 97", c.Len())
	}
	// Many rounds of create and delete: the dirty list is compacted; the
	// live entries 3..99 stay dirty.
	for round := 0; round < 50; round++ {
		for k := byte(100); k < 200; k++ {
			set(k, round)
		}
		for k := byte(100); k < 200; k++ {
			del(k)
		}
		if err := c.Evict(); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 97 || len(c.dirty) > 2*97+1 {
		t.Fatalf("after the rounds: Len %d, dirty list %d", c.Len(), len(c.dirty))
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	got := storeKeys(t, s)
	if len(got) != 97 || got[60] != 62 || got[99] != 99 || got[1] != 10 {
		t.Fatalf("store after Flush has %d keys (60: %d, 99: %d, 1: %d), want 97 with 60:62 99:99 1:10", len(got), got[60], got[99], got[1])
	}
	if _, ok := got[50]; ok {
		t.Fatal("deleted key 50 reached the store")
	}
	e, created, err := c.Get(1, []byte{2})
	if err != nil || !created || e.Value != 0 {
		t.Fatalf("deleted key 2 read again: created %v value %d, %v", created, e.Value, err)
	}
}

// TestCacheDiscard: a discarded entry leaves the cache as a deleted one
// does, but the cache writes nothing for it; the caller's range delete
// removes the store's copy, and a later Get finds the key gone.
func TestCacheDiscard(t *testing.T) {
	s := NewMemory()
	ks := NewKeySpace(s, 1, "test")
	c := NewSpaceCache[int](ks, intCodec{})
	for k := byte(1); k <= 4; k++ {
		e, _, err := c.Get(7, []byte{'w', k})
		if err != nil {
			t.Fatal(err)
		}
		e.Value = int(k)
		c.MarkDirty(e)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for k := byte(1); k <= 3; k++ {
		e, _, err := c.Get(7, []byte{'w', k})
		if err != nil {
			t.Fatal(err)
		}
		c.Discard(e)
	}
	if err := c.Evict(); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := scanString(t, s); len(strings.Split(strings.TrimSpace(got), "\n")) != 4 {
		t.Fatalf("store after discarding 3 keys:\n%s\nthe cache wrote deletes (want all 4 kept)", got)
	}
	if err := ks.DeleteRange(7, []byte{'w', 1}, []byte{'w', 4}); err != nil {
		t.Fatal(err)
	}
	for k := byte(1); k <= 4; k++ {
		e, created, err := c.Get(7, []byte{'w', k})
		if err != nil {
			t.Fatal(err)
		}
		if want := k < 4; created != want || (!created && e.Value != int(k)) {
			t.Fatalf("Get(w%d) after the range delete: created %v value %d, want created %v", k, created, e.Value, want)
		}
	}
}

// countingStore counts the Gets that reach the store.
type countingStore struct {
	Store
	gets int
}

func (s *countingStore) Get(kg int, key []byte) ([]byte, bool, error) {
	s.gets++
	return s.Store.Get(kg, key)
}

// TestCacheStartsEmpty: over a store known to start empty, new keys cost
// no store read, yet nothing is lost: once Trim drops entries, Gets read
// the store again and find what was written back.
func TestCacheStartsEmpty(t *testing.T) {
	s := &countingStore{Store: NewMemory()}
	c := NewCache[int](s, intCodec{})
	c.StartsEmpty()
	for i := 0; i < 10; i++ {
		e, created, err := c.Get(1, []byte{byte(i)})
		if err != nil || !created {
			t.Fatalf("Get(%d) = %v %v", i, created, err)
		}
		e.Value = i + 1
		c.MarkDirty(e)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if e, created, err := c.Get(1, []byte{3}); err != nil || created || e.Value != 4 {
		t.Fatalf("after Flush, key 3: value %d created %v err %v", e.Value, created, err)
	}
	if s.gets != 0 {
		t.Fatalf("%d Gets reached a store known to be empty", s.gets)
	}
	if _, err := c.Trim(1<<40, 5); err != nil {
		t.Fatal(err)
	}
	kept := c.Len()
	for i := 0; i < 12; i++ {
		e, created, err := c.Get(1, []byte{byte(i)})
		if err != nil || created != (i >= 10) || !created && e.Value != i+1 {
			t.Fatalf("after Trim, key %d: value %d created %v err %v", i, e.Value, created, err)
		}
	}
	if s.gets != 12-kept {
		t.Fatalf("after Trim kept %d keys, %d Gets reached the store, want %d", kept, s.gets, 12-kept)
	}
}

// TestCachePrefetch: Prefetch reads the keys a cache lacks from the store
// together (repeated keys once, cached keys not at all), and the Gets
// that follow see exactly what one Get each would have: a stored key's
// value, a missing key created, a cached key's changed value.
func TestCachePrefetch(t *testing.T) {
	s, err := PebbleBackend{}.Open(filepath.Join(t.TempDir(), "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ks := NewKeySpace(s, 1, "values")
	var b WriteBatch
	for i := 0; i < 100; i += 2 {
		ks.Put(&b, i%7, []byte{byte(i)}, []byte{byte(i + 1)})
	}
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	c := NewSpaceCache[int](ks, intCodec{})
	// A cached key changed since it was read: Prefetch must not reread it.
	e, created, err := c.Get(4%7, []byte{4})
	if err != nil || created || e.Value != 5 {
		t.Fatalf("Get(4) = %d created %v, %v", e.Value, created, err)
	}
	e.Value = 50
	c.MarkDirty(e)
	var kgs []int
	var keys [][]byte
	for _, i := range []int{9, 4, 10, 3, 10, 2, 9, 99} {
		kgs, keys = append(kgs, i%7), append(keys, []byte{byte(i)})
	}
	if err := c.Prefetch(kgs, keys); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 6 {
		t.Fatalf("cached keys after Prefetch: %d, want 6 (one each)", c.Len())
	}
	var got []string
	for i := range keys {
		e, created, err := c.Get(kgs[i], keys[i])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d/%v", keys[i][0], e.Value, created))
		if created {
			e.Value = 1000
		}
	}
	want := "9:0/true 4:50/false 10:11/false 3:0/true 10:11/false 2:3/false 9:1000/false 99:0/true"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("Gets after Prefetch:\n got %s\nwant %s", g, want)
	}
	// A complete cache reads nothing: every key it lacks is new.
	d := NewSpaceCache[int](ks, intCodec{})
	d.StartsEmpty()
	if err := d.Prefetch([]int{2 % 7}, [][]byte{{2}}); err != nil || d.Len() != 0 {
		t.Fatalf("Prefetch of a complete cache: len %d, %v", d.Len(), err)
	}
}

// keySumCodec encodes a value that does not hold its key: the encoding
// is the key's first byte plus the value, which decoding subtracts.
type keySumCodec struct{}

func (keySumCodec) EncodeKeyed(dst []byte, key string, v *int) []byte {
	return append(dst, key[0]+byte(*v))
}

func (keySumCodec) DecodeKeyed(src []byte, key string, v *int) error {
	*v = int(src[0] - key[0])
	return nil
}

// TestKeyedCodec: a keyed codec is handed each entry's key when the cache
// writes it back (Trim, Flush) and reads it (Get, Prefetch); the user's
// Mark is cleared with the value when an entry is dropped or revived.
func TestKeyedCodec(t *testing.T) {
	s := NewMemory()
	c := NewKeyedSpaceCache[int](&KeySpace{store: s}, keySumCodec{})
	for i := 0; i < 8; i++ {
		e, _, err := c.Get(1, []byte{byte(10 * i)})
		if err != nil {
			t.Fatal(err)
		}
		e.Value, e.Mark = i, true
		c.MarkDirty(e)
	}
	if dropped, err := c.Trim(1<<40, 4); err != nil || !dropped {
		t.Fatalf("Trim: dropped %v, %v", dropped, err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	err := s.Scan(func(_ int, k, v []byte) error {
		key := k[len(k)-1]
		if v[0] != key+key/10 {
			return fmt.Errorf("key %d stored as %d, want %d", key, v[0], key+key/10)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c = NewKeyedSpaceCache[int](&KeySpace{store: s}, keySumCodec{})
	if err := c.Prefetch([]int{1, 1}, [][]byte{{0}, {70}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		e, created, err := c.Get(1, []byte{byte(10 * i)})
		if err != nil || created || e.Value != i || e.Mark {
			t.Fatalf("key %d read back: value %d, created %v, mark %v, %v", 10*i, e.Value, created, e.Mark, err)
		}
		if i == 3 {
			e.Mark = true
			c.Delete(e)
			if e, created, _ := c.Get(1, []byte{30}); !created || e.Value != 0 || e.Mark {
				t.Fatalf("a deleted entry revived: created %v, value %d, mark %v", created, e.Value, e.Mark)
			}
		}
	}
}

// TestCacheResized: a value that grows while dirty is counted at its new
// size once its user says so (Resized), not only when it became dirty.
func TestCacheResized(t *testing.T) {
	c := NewCache[int](NewMemory(), intCodec{})
	c.SetSizer(func(v *int) int { return *v })
	e, _, err := c.Get(1, []byte{1})
	if err != nil {
		t.Fatal(err)
	}
	e.Value = 100
	c.MarkDirty(e)
	base := c.Bytes()
	e.Value = 1100 // grows while dirty
	c.MarkDirty(e)
	if c.Bytes() != base {
		t.Fatalf("MarkDirty of a dirty entry recounted: %d bytes, want %d", c.Bytes(), base)
	}
	c.Resized(e)
	if got := c.Bytes(); got != base+1000 {
		t.Fatalf("after Resized: %d bytes, want %d", got, base+1000)
	}
	e.Value = 1150
	c.Grew(e, 50) // a known growth, without a walk of the value
	if got := c.Bytes(); got != base+1050 {
		t.Fatalf("after Grew: %d bytes, want %d", got, base+1050)
	}
	c.Delete(e)
	c.Resized(e) // a deleted entry is not counted again
	if err := c.Evict(); err != nil {
		t.Fatal(err)
	}
	if c.Bytes() != 0 {
		t.Fatalf("after Evict: %d bytes, want 0", c.Bytes())
	}
}
