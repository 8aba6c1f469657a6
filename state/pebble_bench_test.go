package state

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPebbleApply: blind puts of 16-byte keys and values, in
// batches of 1000 (one op is one batch); ops/s counts puts.
func BenchmarkPebbleApply(b *testing.B) {
	s, err := PebbleBackend{}.Open(filepath.Join(b.TempDir(), "w"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewSource(1))
	var wb WriteBatch
	key, val := make([]byte, 16), make([]byte, 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		wb.Reset()
		for j := 0; j < 1000; j++ {
			binary.LittleEndian.PutUint64(key, rng.Uint64())
			binary.LittleEndian.PutUint64(key[8:], rng.Uint64())
			binary.LittleEndian.PutUint64(val, uint64(i))
			wb.Put(j%128, key, val)
		}
		b.StartTimer()
		if err := s.Apply(&wb); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkPebbleGet: point reads of present 16-byte keys in a store of 1M
// entries (what a cache miss costs); ops/s counts reads.
func BenchmarkPebbleGet(b *testing.B) {
	s, err := PebbleBackend{}.Open(filepath.Join(b.TempDir(), "w"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 1 << 20
	keyOf := func(i int, key []byte) {
		binary.BigEndian.PutUint64(key, uint64(i)*0x9E3779B97F4A7C15)
		binary.BigEndian.PutUint64(key[8:], uint64(i))
	}
	var wb WriteBatch
	key := make([]byte, 16)
	for i := 0; i < n; i++ {
		keyOf(i, key)
		wb.Put(i%128, key, key)
		if wb.Len() == 10000 {
			if err := s.Apply(&wb); err != nil {
				b.Fatal(err)
			}
			wb.Reset()
		}
	}
	if err := s.Apply(&wb); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Checkpoint(filepath.Join(b.TempDir(), "ck")); err != nil { // flushes
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := rng.Intn(n)
		keyOf(k, key)
		if _, ok, err := s.Get(k%128, key); err != nil || !ok {
			b.Fatalf("Get: %v %v", ok, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

type int64Codec struct{}

func (int64Codec) Encode(dst []byte, v *int64) []byte { return binary.AppendVarint(dst, *v) }

func (int64Codec) Decode(src []byte, v *int64) error {
	x, n := binary.Varint(src)
	if n <= 0 {
		return errors.New("bad varint")
	}
	*v = x
	return nil
}

// benchmarkCacheFlush counts through a Cache over 10K keys: one op is 100K
// increments then a Flush (a barrier); updates/s counts increments.
func benchmarkCacheFlush(b *testing.B, s Store) {
	const keys, updates = 10000, 100000
	rng := rand.New(rand.NewSource(1))
	ks := make([][]byte, keys)
	kgs := make([]int, keys)
	for i := range ks {
		ks[i] = []byte(fmt.Sprintf("app-%012d", rng.Int63()))
		kgs[i] = KeyGroup(rng.Uint64(), 128)
	}
	seq := make([]int32, updates)
	for i := range seq {
		seq[i] = int32(rng.Intn(keys))
	}
	c := NewCache[int64](s, int64Codec{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, k := range seq {
			e, _, err := c.Get(kgs[k], ks[k])
			if err != nil {
				b.Fatal(err)
			}
			e.Value++
			c.MarkDirty(e)
		}
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*updates/b.Elapsed().Seconds(), "updates/s")
}

func BenchmarkCacheFlushPebble(b *testing.B) {
	s, err := PebbleBackend{}.Open(filepath.Join(b.TempDir(), "w"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchmarkCacheFlush(b, s)
}

func BenchmarkCacheFlushMemory(b *testing.B) {
	s := NewMemory()
	defer s.Close()
	benchmarkCacheFlush(b, s)
}

// BenchmarkPebbleCheckpoint: a checkpoint after 10K new puts into a store
// of 1M entries (flush, hard links, MANIFEST copy).
func BenchmarkPebbleCheckpoint(b *testing.B) {
	root := b.TempDir()
	s, err := PebbleBackend{}.Open(filepath.Join(root, "w"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewSource(1))
	var wb WriteBatch
	key := make([]byte, 16)
	put := func(n int) {
		for i := 0; i < n; i++ {
			rng.Read(key)
			wb.Put(i%128, key, key)
			if wb.Len() == 10000 {
				if err := s.Apply(&wb); err != nil {
					b.Fatal(err)
				}
				wb.Reset()
			}
		}
	}
	put(1 << 20)
	var inc, size int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		put(10000)
		b.StartTimer()
		info, err := s.Checkpoint(filepath.Join(root, fmt.Sprintf("ck%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		inc += info.IncrementalSize
		size += info.Size
	}
	b.ReportMetric(float64(inc)/float64(b.N), "incr-bytes/op")
	b.ReportMetric(float64(size)/float64(b.N), "size-bytes/op")
}

// BenchmarkPebbleRestore restores a checkpoint of 1M entries (16-byte keys
// and values) whole (hard links; with and without reading it through), a
// quarter of its key groups (hard links and range deletions), and from two
// checkpoints (copies); entries/s counts the entries of the restored store.
func BenchmarkPebbleRestore(b *testing.B) {
	root := b.TempDir()
	be := PebbleBackend{}
	s, err := be.Open(filepath.Join(root, "w"))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	var wb WriteBatch
	key := make([]byte, 16)
	const n = 1 << 20
	for i := 0; i < n; i++ {
		rng.Read(key)
		wb.Put(i%128, key, key)
		if wb.Len() == 10000 {
			if err := s.Apply(&wb); err != nil {
				b.Fatal(err)
			}
			wb.Reset()
		}
	}
	if err := s.Apply(&wb); err != nil {
		b.Fatal(err)
	}
	// A store in its steady state (L0 compacted): restoring one with a deep
	// L0 also pays for the compaction Pebble's Open waits for.
	if _, err := s.Checkpoint(filepath.Join(root, "flush")); err != nil {
		b.Fatal(err)
	}
	if err := s.(*PebbleStore).db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff, 0xff}, true); err != nil {
		b.Fatal(err)
	}
	ck := filepath.Join(root, "ck")
	if _, err := s.Checkpoint(ck); err != nil {
		b.Fatal(err)
	}
	_ = s.Close()
	empty, err := be.Open(filepath.Join(root, "e"))
	if err != nil {
		b.Fatal(err)
	}
	eck := filepath.Join(root, "eck")
	if _, err := empty.Checkpoint(eck); err != nil {
		b.Fatal(err)
	}
	_ = empty.Close()
	for _, c := range []struct {
		name       string
		from       []string
		start, end int
		entries    int
		skipVerify bool
	}{
		{"link", []string{ck}, 0, 127, n, false},
		{"link-noverify", []string{ck}, 0, 127, n, true},
		{"clip", []string{ck}, 0, 31, n / 4, false},
		{"copy", []string{ck, eck}, 0, 127, n, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := PebbleBackend{Options: PebbleOptions{SkipRestoreVerification: c.skipVerify}}
			for i := 0; i < b.N; i++ {
				r, err := be.Restore(filepath.Join(root, "r", c.name, fmt.Sprint(i)), c.from, c.start, c.end)
				if err != nil {
					b.Fatal(err)
				}
				_ = r.Close()
			}
			b.ReportMetric(float64(b.N)*float64(c.entries)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkPebbleWriteBack: the asynchronous part of a checkpoint of a
// group aggregation whose every group changed since the last one: a
// store of 1M groups (12-byte keys over 128 key groups, 40-byte values),
// and per op a checkpoint whose write function writes all of them back in
// parts of PartOps in the order a cache meets them (not key order), then
// waits for the checkpoint. cpu-s/op counts the process's CPU. memtable:
// the write-back inserted into the memtable, then flushed; ingest: written
// as sstables and ingested.
func BenchmarkPebbleWriteBack(b *testing.B) {
	for _, mode := range []struct {
		name   string
		minOps int
	}{{"memtable", -1}, {"ingest", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			benchmarkWriteBack(b, PebbleOptions{IngestMinOps: mode.minOps})
		})
	}
}

func benchmarkWriteBack(b *testing.B, o PebbleOptions) {
	const groups = 1 << 20
	root := b.TempDir()
	s, err := PebbleBackend{Options: o}.Open(filepath.Join(root, "w"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ps := s.(*PebbleStore)
	rng := rand.New(rand.NewSource(1))
	order := rng.Perm(groups)
	key, val := make([]byte, 12), make([]byte, 40)
	var wb WriteBatch
	writeBack := func(round int) error {
		for _, g := range order {
			binary.BigEndian.PutUint64(key, uint64(g)*0x9e3779b97f4a7c15)
			binary.BigEndian.PutUint32(key[8:], uint32(g))
			binary.BigEndian.PutUint64(val, uint64(round))
			wb.Put(g%128, key, val)
			if wb.Len() >= PartOps {
				if err := s.Apply(&wb); err != nil {
					return err
				}
				wb.Reset()
			}
		}
		if err := s.Apply(&wb); err != nil {
			return err
		}
		wb.Reset()
		return nil
	}
	if err := writeBack(0); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "ck0")); err != nil {
		b.Fatal(err)
	}
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wait, err := ps.StartCheckpoint(filepath.Join(root, fmt.Sprintf("ck%d", i+1)), func() error { return writeBack(i + 1) })
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// processCPU is the process's CPU time so far (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
