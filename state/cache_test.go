package state

import (
	"errors"
	"os"
	"testing"
)

type intCodec struct{}

func (intCodec) Encode(dst []byte, v *int) []byte { return append(dst, byte(*v)) }
func (intCodec) Decode(src []byte, v *int) error  { *v = int(src[0]); return nil }

// TestCacheShrink: a shrunk cache writes its dirty entries back and reads
// them from the store again; nothing is lost.
func TestCacheShrink(t *testing.T) {
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
	if err := c.Shrink(5); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 {
		t.Fatalf("Len after Shrink = %d", c.Len())
	}
	for i := 0; i < 10; i++ {
		e, created, err := c.Get(1, []byte{byte(i)})
		if err != nil || created || e.Value != i*2 {
			t.Fatalf("after Shrink, key %d: value %d created %v err %v", i, e.Value, created, err)
		}
	}
	if err := c.Shrink(100); err != nil || c.Len() != 10 {
		t.Fatalf("Shrink under the limit changed the cache: len %d, %v", c.Len(), err)
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
	if _, err := m.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := (MemoryBackend{}).Restore("", []string{dir}, 0, 127); err != nil {
		t.Fatalf("restore of an intact checkpoint: %v", err)
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
	}
}
