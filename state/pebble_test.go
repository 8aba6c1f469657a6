package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2"
)

// pebbleHarness runs the datadriven files testdata/pebble_*: named stores
// of one PebbleBackend and named checkpoint directories, all under one
// temporary directory whose path is printed as $TMP.
type pebbleHarness struct {
	root    string
	backend PebbleBackend
	stores  map[string]Store
	n       int
	// sums are the file checksums each checkpoint returned, by dir name;
	// waits the asynchronous checkpoints started and not yet waited for.
	sums  map[string][]FileSum
	waits map[string]func() (CheckpointInfo, error)
}

func newPebbleHarness(t *testing.T) *pebbleHarness {
	h := &pebbleHarness{root: t.TempDir(), stores: map[string]Store{}, sums: map[string][]FileSum{},
		waits: map[string]func() (CheckpointInfo, error){}}
	t.Cleanup(func() {
		for _, s := range h.stores {
			_ = s.Close()
		}
	})
	return h
}

func (h *pebbleHarness) ckpt(name string) string { return filepath.Join(h.root, "ckpt", name) }

func (h *pebbleHarness) workDir() string {
	h.n++
	return filepath.Join(h.root, "work", strconv.Itoa(h.n))
}

func (h *pebbleHarness) errString(err error) string {
	s := strings.ReplaceAll(err.Error(), h.root, "$TMP")
	if errors.Is(err, ErrCorrupt) {
		// Pebble's own wording is not ours to pin: keep our prefix, up to
		// the checkpoint directory named.
		if i := strings.Index(s, "$TMP/"); i >= 0 {
			if j := strings.IndexAny(s[i:], ": "); j >= 0 {
				s = s[:i+j]
			}
		}
		return "corrupt: " + s
	}
	return "error: " + s
}

func (h *pebbleHarness) store(t *testing.T, td *datadriven.TestData) Store {
	var name string
	td.ScanArgs(t, "store", &name)
	s, ok := h.stores[name]
	if !ok {
		td.Fatalf(t, "no store %q", name)
	}
	return s
}

func (h *pebbleHarness) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "open":
		// open store=S [ingest-min-ops=N]
		var name string
		td.ScanArgs(t, "store", &name)
		b := h.backend
		if td.HasArg("ingest-min-ops") {
			td.ScanArgs(t, "ingest-min-ops", &b.Options.IngestMinOps)
		}
		s, err := b.Open(h.workDir())
		if err != nil {
			return h.errString(err)
		}
		h.stores[name] = s
		return "ok"

	case "apply":
		s := h.store(t, td)
		b := parseBatch(t, td)
		if err := s.Apply(&b); err != nil {
			return h.errString(err)
		}
		return "ok"

	case "delrange":
		// delrange store=S kg=N start=K [end=K]: without end, to the end
		// of the key group.
		s := h.store(t, td)
		var kg int
		var start string
		td.ScanArgs(t, "kg", &kg)
		td.ScanArgs(t, "start", &start)
		var end []byte
		if td.HasArg("end") {
			var e string
			td.ScanArgs(t, "end", &e)
			end = []byte(e)
		}
		if err := s.DeleteRange(kg, []byte(start), end); err != nil {
			return h.errString(err)
		}
		return "ok"

	case "get":
		s := h.store(t, td)
		var kg int
		var key string
		td.ScanArgs(t, "kg", &kg)
		td.ScanArgs(t, "key", &key)
		v, ok, err := s.Get(kg, []byte(key))
		switch {
		case err != nil:
			return h.errString(err)
		case !ok:
			return "not found"
		}
		return string(v)

	case "get-sorted":
		// get-sorted store=S, then "KG KEY" lines in key group then key
		// order: GetSorted's answer for each.
		var kgs []int
		var keys [][]byte
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			var kg int
			var key string
			if _, err := fmt.Sscan(line, &kg, &key); err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			kgs, keys = append(kgs, kg), append(keys, []byte(key))
		}
		var sb strings.Builder
		err := GetSorted(h.store(t, td), kgs, keys, func(i int, v []byte, ok bool) error {
			if !ok {
				v = []byte("not found")
			}
			fmt.Fprintf(&sb, "%d %s %s\n", kgs[i], keys[i], v)
			return nil
		})
		if err != nil {
			return h.errString(err)
		}
		return strings.TrimSuffix(sb.String(), "\n")

	case "scan":
		out, err := scan(h.store(t, td))
		if err != nil {
			return h.errString(err)
		}
		return out

	case "start-checkpoint":
		// start-checkpoint store=S dir=D, then a batch (as apply's) that
		// its write function applies: the synchronous part of an
		// asynchronous checkpoint; wait-checkpoint dir=D ends it. With
		// split, each line is applied on its own, and a line may also be
		// "delrange KG START [END]".
		s := h.store(t, td)
		var dir string
		td.ScanArgs(t, "dir", &dir)
		write := func() error { b := parseBatch(t, td); return s.Apply(&b) }
		if td.HasArg("split") {
			write = func() error { return applyLines(t, td, s) }
		}
		wait, err := s.(AsyncCheckpointer).StartCheckpoint(h.ckpt(dir), write)
		if err != nil {
			return h.errString(err)
		}
		h.waits[dir] = wait
		return "ok"

	case "checkpoint", "wait-checkpoint":
		var dir string
		td.ScanArgs(t, "dir", &dir)
		var info CheckpointInfo
		var err error
		if td.Cmd == "checkpoint" {
			info, err = h.store(t, td).Checkpoint(h.ckpt(dir))
		} else {
			info, err = h.waits[dir]()
			delete(h.waits, dir)
		}
		if err != nil {
			return h.errString(err)
		}
		if info.Size <= 0 || info.IncrementalSize <= 0 || info.IncrementalSize > info.Size {
			return fmt.Sprintf("bad sizes %+v", info)
		}
		var total int64
		for _, f := range info.Files {
			total += f.Size
		}
		if total != info.Size {
			return fmt.Sprintf("the files' sizes add up to %d, the checkpoint's size is %d", total, info.Size)
		}
		h.sums[dir] = info.Files
		return "ok"

	case "ls":
		var dir string
		td.ScanArgs(t, "dir", &dir)
		var names []string
		for _, f := range h.sums[dir] {
			names = append(names, f.Name)
		}
		return strings.Join(names, " ")

	case "verify":
		var dir string
		td.ScanArgs(t, "dir", &dir)
		if err := VerifyCheckpoint(h.ckpt(dir), h.sums[dir]); err != nil {
			return h.errString(err)
		}
		return "ok"

	case "restore":
		var name string
		td.ScanArgs(t, "store", &name)
		arg, _ := td.Arg("from")
		var from []string
		for _, v := range arg.Vals {
			from = append(from, h.ckpt(v))
		}
		kg, ok := td.Arg("kg")
		if !ok {
			td.Fatalf(t, "restore needs kg=(start, end)")
		}
		lo, hi := kg.TwoVals(t)
		start, _ := strconv.Atoi(lo)
		end, _ := strconv.Atoi(hi)
		be := h.backend
		be.Options.SkipRestoreVerification = td.HasArg("noverify")
		s, err := be.Restore(h.workDir(), from, start, end)
		if err != nil {
			return h.errString(err)
		}
		h.stores[name] = s
		return "ok"

	case "close":
		var name string
		td.ScanArgs(t, "store", &name)
		err := h.store(t, td).Close()
		delete(h.stores, name)
		if err != nil {
			return h.errString(err)
		}
		return "ok"

	case "corrupt":
		var dir, how string
		td.ScanArgs(t, "dir", &dir)
		td.ScanArgs(t, "how", &how)
		if err := corruptCheckpoint(h.ckpt(dir), how); err != nil {
			td.Fatalf(t, "%v", err)
		}
		return "ok"

	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
		return ""
	}
}

// corruptCheckpoint damages the checkpoint in dir.
func corruptCheckpoint(dir, how string) error {
	files := func(pred func(string) bool) ([]string, error) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			if pred(e.Name()) {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: no file to corrupt for %s", dir, how)
		}
		return out, nil
	}
	isSST := func(n string) bool { return strings.HasSuffix(n, ".sst") }
	isManifest := func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }
	switch how {
	case "remove-dir":
		return os.RemoveAll(dir)
	case "empty-dir":
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return os.MkdirAll(dir, 0o755)
	case "truncate-sst", "garbage-sst", "garbage-middle-sst":
		ssts, err := files(isSST)
		if err != nil {
			return err
		}
		if how == "garbage-middle-sst" {
			// Of four or more, the second: neither the first nor the last
			// two, which reading the first and last keys opens (Pebble's
			// reverse iteration looks at the entry before the last).
			if len(ssts) < 4 {
				return fmt.Errorf("%s: %d sstables, want 4 or more", dir, len(ssts))
			}
			ssts = ssts[1:2]
		}
		for _, p := range ssts {
			// Replace rather than write in place: the file is a hard link
			// shared with the store that wrote it.
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if how == "truncate-sst" {
				data = data[:len(data)/2]
			} else {
				for i := range data {
					data[i] ^= 0x5a
				}
			}
			if err := os.Remove(p); err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
		return nil
	case "flip-manifest-tail", "flip-sst-in-place":
		// One bit, in place (a hard-linked file changes wherever it is
		// linked, as on a real disk): the last byte of the MANIFEST, or the
		// middle byte of the first sstable.
		ps, err := files(isManifest)
		if how == "flip-sst-in-place" {
			ps, err = files(isSST)
		}
		if err != nil {
			return err
		}
		f, err := os.OpenFile(ps[0], os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		off := st.Size() - 1
		if how == "flip-sst-in-place" {
			off = st.Size() / 2
		}
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err != nil {
			return err
		}
		b[0] ^= 1
		_, err = f.WriteAt(b, off)
		return err
	case "add-file":
		return os.WriteFile(filepath.Join(dir, "000999.sst"), []byte("not pebble's"), 0o644)
	case "remove-sst":
		ssts, err := files(isSST)
		if err != nil {
			return err
		}
		return os.Remove(ssts[0])
	case "garbage-manifest", "truncate-manifest", "remove-manifest":
		ms, err := files(isManifest)
		if err != nil {
			return err
		}
		for _, p := range ms {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			switch how {
			case "remove-manifest":
				err = os.Remove(p)
			case "truncate-manifest":
				err = os.WriteFile(p, data[:len(data)/3], 0o644)
			default:
				for i := range data {
					data[i] ^= 0x5a
				}
				err = os.WriteFile(p, data, 0o644)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown corruption %q", how)
}

func scan(s Store) (string, error) {
	var sb strings.Builder
	err := s.Scan(func(kg int, key, value []byte) error {
		fmt.Fprintf(&sb, "%d %s %s\n", kg, key, value)
		return nil
	})
	if err != nil {
		return "", err
	}
	if sb.Len() == 0 {
		return "empty", nil
	}
	return strings.TrimSuffix(sb.String(), "\n"), nil
}

func scanString(t testing.TB, s Store) string {
	t.Helper()
	out, err := scan(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parseBatch reads a batch from td's input: "put KG KEY VALUE" and
// "del KG KEY" lines.
func parseBatch(t *testing.T, td *datadriven.TestData) WriteBatch {
	var b WriteBatch
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		kg, err := strconv.Atoi(f[1])
		if err != nil {
			td.Fatalf(t, "%s: %v", line, err)
		}
		switch {
		case f[0] == "put" && len(f) == 4:
			b.Put(kg, []byte(f[2]), []byte(f[3]))
		case f[0] == "del" && len(f) == 3:
			b.Delete(kg, []byte(f[2]))
		default:
			td.Fatalf(t, "bad batch line %q", line)
		}
	}
	return b
}

// applyLines applies each line of td's input on its own: a put or a del
// as a batch of one, "delrange KG START [END]" as a DeleteRange.
func applyLines(t *testing.T, td *datadriven.TestData, s Store) error {
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "delrange" {
			kg, err := strconv.Atoi(f[1])
			if err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			var end []byte
			if len(f) == 4 {
				end = []byte(f[3])
			}
			if err := s.DeleteRange(kg, []byte(f[2]), end); err != nil {
				return err
			}
			continue
		}
		b := parseBatch(t, &datadriven.TestData{Pos: td.Pos, Input: line})
		if err := s.Apply(&b); err != nil {
			return err
		}
	}
	return nil
}

func TestPebbleDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/pebble", func(t *testing.T, path string) {
		h := newPebbleHarness(t)
		datadriven.RunTest(t, path, h.run)
	})
}

// TestPebbleCheckpointNeedsFlush checks the premise of Checkpoint's flush:
// with the WAL off, a Pebble checkpoint misses what is in the memtable.
func TestPebbleCheckpointNeedsFlush(t *testing.T) {
	dir := t.TempDir()
	opts := PebbleOptions{Logger: quietLogger{}}.pebbleOptions(newPebbleEvents(quietLogger{}))
	db, err := pebble.Open(filepath.Join(dir, "db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set([]byte("k"), []byte("v"), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	if err := db.Checkpoint(ck, pebble.WithFlushedWAL()); err != nil {
		t.Fatal(err)
	}
	ro, err := openCheckpoint(ck, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, _, err := ro.Get([]byte("k")); !errors.Is(err, pebble.ErrNotFound) {
		t.Fatalf("a checkpoint of an unflushed memtable without WAL holds the key (err %v): Checkpoint's flush may be unneeded", err)
	}
}

func putEntries(t testing.TB, s Store, rng *rand.Rand, n, kgs int, valueSize int) {
	var b WriteBatch
	v := make([]byte, valueSize)
	for i := 0; i < n; i++ {
		rng.Read(v)
		b.Put(rng.Intn(kgs), []byte(fmt.Sprintf("key-%08d", rng.Intn(1<<30))), v)
		if b.Len() == 1000 {
			if err := s.Apply(&b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
}

type entry struct {
	kg         int
	key, value string
}

func entries(t testing.TB, s Store) []entry {
	var out []entry
	if err := s.Scan(func(kg int, k, v []byte) error {
		out = append(out, entry{kg, string(k), string(v)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPebbleRescale checkpoints the stores of 2 subtasks and restores them
// into 3, then back into 2: every entry lands in exactly one store, the one
// owning its key group.
func TestPebbleRescale(t *testing.T) {
	const maxPar = 128
	root := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	be := PebbleBackend{}
	var all []entry
	var ckpts []string
	for i := 0; i < 2; i++ {
		start, end := KeyGroupRange(i, maxPar, 2)
		s, err := be.Open(filepath.Join(root, "old", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		var b WriteBatch
		for j := 0; j < 5000; j++ {
			kg := start + rng.Intn(end-start+1)
			b.Put(kg, []byte(fmt.Sprintf("k%d-%d", i, j)), []byte(strconv.Itoa(j)))
		}
		if err := s.Apply(&b); err != nil {
			t.Fatal(err)
		}
		ck := filepath.Join(root, "chk-1", strconv.Itoa(i))
		if _, err := s.Checkpoint(ck); err != nil {
			t.Fatal(err)
		}
		ckpts = append(ckpts, ck)
		all = append(all, entries(t, s)...)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(all) != 10000 {
		t.Fatalf("%d entries written, want 10000", len(all))
	}

	rescale := func(gen string, from []string, fromPar, toPar int) []string {
		var next []string
		seen := map[entry]int{}
		for j := 0; j < toPar; j++ {
			start, end := KeyGroupRange(j, maxPar, toPar)
			var src []string
			for i := 0; i < fromPar; i++ {
				s, e := KeyGroupRange(i, maxPar, fromPar)
				if s <= end && e >= start {
					src = append(src, from[i])
				}
			}
			s, err := be.Restore(filepath.Join(root, gen, strconv.Itoa(j)), src, start, end)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries(t, s) {
				if e.kg < start || e.kg > end {
					t.Errorf("%s subtask %d [%d, %d] holds key group %d", gen, j, start, end, e.kg)
				}
				seen[e]++
			}
			ck := filepath.Join(root, gen+"-chk", strconv.Itoa(j))
			if _, err := s.Checkpoint(ck); err != nil {
				t.Fatal(err)
			}
			next = append(next, ck)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range all {
			if seen[e] != 1 {
				t.Errorf("%s: entry %v restored %d times", gen, e, seen[e])
			}
		}
		if len(seen) != len(all) {
			t.Errorf("%s: %d entries restored, want %d", gen, len(seen), len(all))
		}
		return next
	}
	three := rescale("par3", ckpts, 2, 3)
	two := rescale("par2", three, 3, 2)
	rescale("par1", two, 2, 1)
}

// TestPebbleIncrementalSize: a second checkpoint after few changes shares
// the first one's sstables, so its incremental size is a small part of its
// size; so is the first checkpoint of a store restored by hard links.
func TestPebbleIncrementalSize(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewSource(2))
	be := PebbleBackend{}
	s, err := be.Open(filepath.Join(root, "work"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putEntries(t, s, rng, 50000, 128, 100)
	c1, err := s.Checkpoint(filepath.Join(root, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if c1.IncrementalSize != c1.Size || c1.Size < 50000*100/2 {
		t.Fatalf("first checkpoint %+v: want all of it incremental, and at least 2.5 MB", c1)
	}
	putEntries(t, s, rng, 10, 128, 100)
	c2, err := s.Checkpoint(filepath.Join(root, "c2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint 1 %+v, checkpoint 2 %+v", c1, c2)
	if c2.Size < c1.Size || c2.IncrementalSize*20 > c2.Size {
		t.Fatalf("second checkpoint %+v after 10 puts: want an incremental size under 5%% of its size", c2)
	}
	// Nothing changed but a compaction: the compacted files are new, then
	// a checkpoint shares them all and copies only the small metadata files.
	if err := s.(*PebbleStore).db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "c2b")); err != nil {
		t.Fatal(err)
	}
	c3, err := s.Checkpoint(filepath.Join(root, "c3"))
	if err != nil {
		t.Fatal(err)
	}
	if c3.IncrementalSize*100 > c3.Size {
		t.Fatalf("third checkpoint %+v after no change: want an incremental size under 1%%", c3)
	}

	r, err := be.Restore(filepath.Join(root, "restored"), []string{filepath.Join(root, "c3")}, 0, 127)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	putEntries(t, r, rng, 10, 128, 100)
	c4, err := r.Checkpoint(filepath.Join(root, "c4"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint after restore %+v", c4)
	if c4.IncrementalSize*20 > c4.Size {
		t.Fatalf("checkpoint %+v of a store restored by hard links: want an incremental size under 5%%", c4)
	}
}

// TestPebbleCheckpointSurvivesStore: a checkpoint holds its own links to
// the sstables, so closing and deleting the store (which the runtime does)
// and compactions of later writes leave it intact.
func TestPebbleCheckpointSurvivesStore(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewSource(3))
	be := PebbleBackend{}
	work := filepath.Join(root, "work")
	s, err := be.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	putEntries(t, s, rng, 20000, 128, 50)
	want := entries(t, s)
	if _, err := s.Checkpoint(filepath.Join(root, "c1")); err != nil {
		t.Fatal(err)
	}
	// Overwrite and delete everything, with checkpoints (flushes) between.
	for i := 0; i < 6; i++ {
		var b WriteBatch
		for _, e := range want {
			if i%2 == 0 {
				b.Put(e.kg, []byte(e.key), []byte("x"))
			} else {
				b.Delete(e.kg, []byte(e.key))
			}
		}
		if err := s.Apply(&b); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Checkpoint(filepath.Join(root, fmt.Sprintf("c%d", i+2))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.(*PebbleStore).db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	for _, kgs := range [][2]int{{0, 127}, {0, 50}, {51, 127}} {
		r, err := be.Restore(filepath.Join(root, fmt.Sprintf("r%d", kgs[0])), []string{filepath.Join(root, "c1")}, kgs[0], kgs[1])
		if err != nil {
			t.Fatal(err)
		}
		var w []entry
		for _, e := range want {
			if e.kg >= kgs[0] && e.kg <= kgs[1] {
				w = append(w, e)
			}
		}
		if got := entries(t, r); !equalEntries(got, w) {
			t.Fatalf("restore of key groups %v: %d entries, want %d", kgs, len(got), len(w))
		}
		_ = r.Close()
	}
}

func equalEntries(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPebbleRestoreReadsOnly: restores, several at once from the same
// checkpoint as when a job is rescaled, neither fail on Pebble's directory
// lock nor change the checkpoint's files.
func TestPebbleRestoreReadsOnly(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewSource(4))
	be := PebbleBackend{}
	s, err := be.Open(filepath.Join(root, "work"))
	if err != nil {
		t.Fatal(err)
	}
	putEntries(t, s, rng, 20000, 128, 20)
	ck := filepath.Join(root, "ck")
	if _, err := s.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	before := dirState(t, ck)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Alternate the linked (whole range, part of it) and copied paths.
			from := []string{ck}
			if i%3 == 2 {
				from = []string{ck, ck}
			}
			start, end := KeyGroupRange(i%4, 128, 4)
			if i%3 == 0 {
				start, end = 0, 127
			}
			r, err := be.Restore(filepath.Join(root, "r", strconv.Itoa(i)), from, start, end)
			if err != nil {
				errs <- err
				return
			}
			errs <- r.Close()
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if after := dirState(t, ck); after != before {
		t.Fatalf("restores changed the checkpoint:\n%s\nthen\n%s", before, after)
	}
}

func dirState(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "%s %d %v %x\n", e.Name(), fi.Size(), fi.ModTime(), data[:min(len(data), 16)])
	}
	return sb.String()
}

// TestPebbleLargeBatch: a WriteBatch larger than the memtable (Pebble
// keeps it as a flushable batch) is in the next checkpoint too.
func TestPebbleLargeBatch(t *testing.T) {
	root := t.TempDir()
	be := PebbleBackend{Options: PebbleOptions{MemTableSize: 1 << 20}}
	s, err := be.Open(filepath.Join(root, "work"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewSource(5))
	var b WriteBatch
	v := make([]byte, 100)
	for i := 0; i < 40000; i++ { // about 5 MB
		rng.Read(v)
		b.Put(i%128, []byte(fmt.Sprintf("k%06d", i)), v)
	}
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	want := entries(t, s)
	if len(want) != 40000 {
		t.Fatalf("%d entries, want 40000", len(want))
	}
	ck := filepath.Join(root, "ck")
	if _, err := s.Checkpoint(ck); err != nil {
		t.Fatal(err)
	}
	r, err := be.Restore(filepath.Join(root, "r"), []string{ck}, 0, 127)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := entries(t, r); !equalEntries(got, want) {
		t.Fatalf("restored %d entries, want %d", len(got), len(want))
	}
}

// TestPebbleWorkingDir: Open clears the Pebble files a crashed run left in
// its working directory, refuses a directory holding anything else, and a
// closed store answers ErrClosed.
func TestPebbleWorkingDir(t *testing.T) {
	root := t.TempDir()
	be := PebbleBackend{}
	work := filepath.Join(root, "work")
	s, err := be.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	var b WriteBatch
	b.Put(1, []byte("k"), []byte("v"))
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "ck")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := s.Get(1, []byte("k")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := s.Apply(&b); !errors.Is(err, ErrClosed) {
		t.Fatalf("Apply after Close: %v", err)
	}
	if err := s.Scan(func(int, []byte, []byte) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Scan after Close: %v", err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "ck2")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Checkpoint after Close: %v", err)
	}

	// The working directory still holds the closed store's files.
	s, err = be.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	if got := scanString(t, s); got != "empty" {
		t.Fatalf("store opened over leftovers holds %s", got)
	}
	_ = s.Close()
	// Restoring over leftovers gives the checkpoint, not the leftovers,
	// among them an sstable written to ingest (tableWriter) when the
	// process died.
	if err := os.WriteFile(filepath.Join(work, "writeback-000000.sst.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = be.Restore(work, []string{filepath.Join(root, "ck")}, 0, 127)
	if err != nil {
		t.Fatal(err)
	}
	if got := scanString(t, s); got != "1 k v" {
		t.Fatalf("restored over leftovers: %s", got)
	}

	// The working directory of a store still open is not leftovers.
	if _, err := be.Open(work); err == nil {
		t.Fatal("Open of the working directory of an open store succeeded")
	}
	if got := scanString(t, s); got != "1 k v" {
		t.Fatalf("store whose directory was opened again: %s", got)
	}
	_ = s.Close()

	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := be.Open(other); err == nil {
		t.Fatal("Open of a directory with a foreign file succeeded")
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err != nil {
		t.Fatalf("foreign file: %v", err)
	}

	// Key groups beyond the 2-byte prefix are refused, and nothing of the
	// batch is applied.
	s, err = be.Open(filepath.Join(root, "w2"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b.Reset()
	b.Put(3, []byte("a"), []byte("1"))
	b.Put(1<<16, []byte("b"), []byte("2"))
	if err := s.Apply(&b); err == nil {
		t.Fatal("Apply with key group 65536 succeeded")
	}
	if got := scanString(t, s); got != "empty" {
		t.Fatalf("after a refused batch: %s", got)
	}
}

// TestPebbleGetValueStable: a value returned by Get stays valid across
// other Gets (the Store contract: until the next modification).
func TestPebbleGetValueStable(t *testing.T) {
	s, err := PebbleBackend{}.Open(filepath.Join(t.TempDir(), "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b WriteBatch
	for i := 0; i < 100; i++ {
		b.Put(i%7, []byte(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, i))
	}
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	vals := make([][]byte, 100)
	for i := range vals {
		v, ok, err := s.Get(i%7, []byte(fmt.Sprint(i)))
		if err != nil || !ok {
			t.Fatalf("Get %d: %v %v", i, ok, err)
		}
		vals[i] = v
	}
	for i, v := range vals {
		if !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, i)) {
			t.Fatalf("value %d changed to %x", i, v)
		}
	}
}

// TestPebbleMemoryCrossCheck applies the same random WriteBatches to the
// in-memory and Pebble backends and, at random points, checkpoints both and
// restores them, whole or split into key-group ranges (rescaling): Scans
// must agree at every step.
func TestPebbleMemoryCrossCheck(t *testing.T) {
	seeds := []int64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { crossCheck(t, seed) })
	}
}

func crossCheck(t *testing.T, seed int64) {
	const maxPar = 64
	root := t.TempDir()
	rng := rand.New(rand.NewSource(seed))
	backends := []Backend{MemoryBackend{}, PebbleBackend{Options: PebbleOptions{MemTableSize: 256 << 10}}}
	n := 0
	next := func() string { n++; return strconv.Itoa(n) }

	// stores[b][i] is subtask i of backend b at the current parallelism.
	par := 1
	stores := make([][]Store, len(backends))
	for bi, be := range backends {
		s, err := be.Open(filepath.Join(root, "w", next()))
		if err != nil {
			t.Fatal(err)
		}
		stores[bi] = []Store{s}
	}
	defer func() {
		for _, ss := range stores {
			for _, s := range ss {
				_ = s.Close()
			}
		}
	}()
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("%x", rng.Int63n(1<<40))
		if i%17 == 0 {
			keys[i] = "" // empty keys are keys too
		}
	}
	check := func(step string) {
		for i := 0; i < par; i++ {
			a, b := scanString(t, stores[0][i]), scanString(t, stores[1][i])
			if a != b {
				t.Fatalf("%s: subtask %d of %d: memory\n%s\npebble\n%s", step, i, par, a, b)
			}
		}
	}
	for step := 0; step < 60; step++ {
		switch op := rng.Intn(10); {
		case op < 7:
			// A batch for each subtask, with puts, overwrites and deletes
			// (also of missing keys) in its key groups.
			for i := 0; i < par; i++ {
				start, end := KeyGroupRange(i, maxPar, par)
				var b WriteBatch
				for j, m := 0, rng.Intn(400); j < m; j++ {
					k := keys[rng.Intn(len(keys))]
					kg := start + rng.Intn(end-start+1)
					if rng.Intn(4) == 0 {
						b.Delete(kg, []byte(k))
					} else {
						v := make([]byte, rng.Intn(40))
						rng.Read(v)
						b.Put(kg, []byte(k), v)
					}
				}
				for bi := range backends {
					if err := stores[bi][i].Apply(&b); err != nil {
						t.Fatal(err)
					}
				}
				// Now and then a range of a key group deleted at once
				// (to the end of the key group, or an empty range).
				if rng.Intn(3) == 0 {
					kg := start + rng.Intn(end-start+1)
					lo, hi := []byte(keys[rng.Intn(len(keys))]), []byte(keys[rng.Intn(len(keys))])
					if rng.Intn(4) == 0 {
						hi = nil
					}
					for bi := range backends {
						if err := stores[bi][i].DeleteRange(kg, lo, hi); err != nil {
							t.Fatal(err)
						}
					}
				}
				// Point reads agree too, present keys or not.
				for j := 0; j < 50; j++ {
					k := []byte(keys[rng.Intn(len(keys))])
					kg := start + rng.Intn(end-start+1)
					v0, ok0, err0 := stores[0][i].Get(kg, k)
					v1, ok1, err1 := stores[1][i].Get(kg, k)
					if err0 != nil || err1 != nil || ok0 != ok1 || !bytes.Equal(v0, v1) {
						t.Fatalf("step %d: Get(%d, %q): memory %x %v %v, pebble %x %v %v", step, kg, k, v0, ok0, err0, v1, ok1, err1)
					}
				}
				// Reads of many keys together (in key order, without
				// repeats) agree with one Get each.
				type kk struct {
					kg int
					k  string
				}
				var want []kk
				seen := map[kk]bool{}
				for j := 0; j < 60; j++ {
					x := kk{start + rng.Intn(end-start+1), keys[rng.Intn(len(keys))]}
					if !seen[x] {
						seen[x] = true
						want = append(want, x)
					}
				}
				sort.Slice(want, func(a, b int) bool {
					if want[a].kg != want[b].kg {
						return want[a].kg < want[b].kg
					}
					return want[a].k < want[b].k
				})
				kgs, ks := make([]int, len(want)), make([][]byte, len(want))
				for j, x := range want {
					kgs[j], ks[j] = x.kg, []byte(x.k)
				}
				var got [2]strings.Builder
				for bi := range backends {
					err := GetSorted(stores[bi][i], kgs, ks, func(j int, v []byte, ok bool) error {
						fmt.Fprintf(&got[bi], "%d %q %v %x\n", kgs[j], ks[j], ok, v)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if got[0].String() != got[1].String() {
					t.Fatalf("step %d: GetSorted: memory\n%s\npebble\n%s", step, got[0].String(), got[1].String())
				}
			}
			check(fmt.Sprintf("step %d apply", step))
		default:
			// Checkpoint every subtask, then restore at a new parallelism.
			newPar := 1 + rng.Intn(4)
			id := next()
			for bi, be := range backends {
				var ckpts []string
				for i, s := range stores[bi] {
					ck := filepath.Join(root, "ck", id, be.Name(), strconv.Itoa(i))
					if _, err := s.Checkpoint(ck); err != nil {
						t.Fatal(err)
					}
					ckpts = append(ckpts, ck)
					// Writes after the checkpoint must not reach it.
					var b WriteBatch
					b.Put(0, []byte("after"), []byte("checkpoint"))
					if err := s.Apply(&b); err != nil {
						t.Fatal(err)
					}
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
				}
				var restored []Store
				for j := 0; j < newPar; j++ {
					start, end := KeyGroupRange(j, maxPar, newPar)
					var from []string
					for i := 0; i < par; i++ {
						s, e := KeyGroupRange(i, maxPar, par)
						if s <= end && e >= start {
							from = append(from, ckpts[i])
						}
					}
					r, err := be.Restore(filepath.Join(root, "w", next()), from, start, end)
					if err != nil {
						t.Fatal(err)
					}
					restored = append(restored, r)
				}
				stores[bi] = restored
			}
			par = newPar
			check(fmt.Sprintf("step %d restore at parallelism %d", step, par))
		}
	}
	// Both hold the same, and nothing was lost on the way: compare sorted
	// unions too.
	var all [2][]string
	for bi := range backends {
		for _, s := range stores[bi] {
			all[bi] = append(all[bi], strings.Split(scanString(t, s), "\n")...)
		}
		sort.Strings(all[bi])
	}
	if strings.Join(all[0], "\n") != strings.Join(all[1], "\n") {
		t.Fatal("final states differ")
	}
}

// TestPebbleSeparatesLargeValues: values of SeparateValuesFrom bytes and
// more live in blob files, which a checkpoint keeps beside its sstables
// and a restore reads back; with -1 every value stays in the sstables.
func TestPebbleSeparatesLargeValues(t *testing.T) {
	for _, tc := range []struct {
		from  int
		blobs bool
	}{{0, true}, {-1, false}} {
		t.Run(fmt.Sprint(tc.from), func(t *testing.T) {
			root := t.TempDir()
			be := PebbleBackend{Options: PebbleOptions{SeparateValuesFrom: tc.from}}
			s, err := be.Open(filepath.Join(root, "work"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewSource(7))
			putEntries(t, s, rng, 20000, 128, 200) // above the default 64 bytes
			putEntries(t, s, rng, 20000, 128, 16)  // below
			want := entries(t, s)
			ck := filepath.Join(root, "ck")
			if _, err := s.Checkpoint(ck); err != nil {
				t.Fatal(err)
			}
			blobs, _ := filepath.Glob(filepath.Join(ck, "*.blob"))
			if (len(blobs) > 0) != tc.blobs {
				t.Fatalf("checkpoint holds %d blob files, want some: %v", len(blobs), tc.blobs)
			}
			r, err := be.Restore(filepath.Join(root, "r"), []string{ck}, 0, 127)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := entries(t, r); !equalEntries(got, want) {
				t.Fatalf("restored %d entries, want %d", len(got), len(want))
			}
		})
	}
}
