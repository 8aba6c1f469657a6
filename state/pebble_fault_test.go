package state

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// faultBound bounds how long a store call may take to fail once its disk
// failed. The calls end by construction (the failure or Abort wakes them);
// the bound only turns a hang, the failure mode before, into a test
// failure, and is generous for a busy machine.
const faultBound = 30 * time.Second

// logRecorder is a pebble.Logger that keeps the error lines, and the
// fatal ones (Pebble's Fatalf must not return: it panics after recording).
type logRecorder struct {
	mu    sync.Mutex
	lines []string
	fatal []string
}

func (l *logRecorder) Infof(string, ...any) {}

func (l *logRecorder) Errorf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logRecorder) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.fatal = append(l.fatal, msg)
	l.mu.Unlock()
	panic(msg)
}

// noFatal fails the test if Pebble logged a fatal error (which its default
// logger turns into os.Exit: the whole process would be gone).
func (l *logRecorder) noFatal(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fatal) > 0 {
		t.Fatalf("pebble logged fatal errors: %q", l.fatal)
	}
}

func (l *logRecorder) matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// faultInjector fails or blocks the writes of sstables in one directory
// when told to: Pebble's own, and those a store writes to ingest
// (tableWriter's .sst.tmp).
type faultInjector struct {
	dir string
	// err, when set, is returned by every write of an sstable in dir.
	err atomic.Pointer[error]
	// block, when set, is waited on by every write of an sstable in dir.
	block atomic.Pointer[chan struct{}]
	// hits counts the writes that failed or blocked.
	hits atomic.Int64
}

func (fi *faultInjector) fs() vfs.FS {
	return errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !strings.HasPrefix(op.Path, fi.dir) || !strings.HasSuffix(op.Path, ".sst") && !strings.HasSuffix(op.Path, ".sst.tmp") {
			return nil
		}
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync:
		default:
			return nil
		}
		if p := fi.err.Load(); p != nil {
			fi.hits.Add(1)
			return &os.PathError{Op: "write", Path: op.Path, Err: *p}
		}
		if c := fi.block.Load(); c != nil {
			fi.hits.Add(1)
			<-*c
		}
		return nil
	}))
}

// openFaultStore opens a Pebble store in a new working directory whose
// sstable writes go through a faultInjector.
func openFaultStore(t *testing.T) (*PebbleStore, *faultInjector, *logRecorder, string) {
	t.Helper()
	return openFaultStoreWith(t, PebbleOptions{})
}

// openFaultStoreWith is openFaultStore with options o (their Logger and FS
// replaced).
func openFaultStoreWith(t *testing.T, o PebbleOptions) (*PebbleStore, *faultInjector, *logRecorder, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	fi := &faultInjector{dir: dir}
	log := &logRecorder{}
	o.Logger, o.FS = log, fi.fs()
	s, err := PebbleBackend{Options: o}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*PebbleStore), fi, log, root
}

// within runs fn on a goroutine and returns its error, failing the test if
// it has not returned within faultBound.
func within(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(faultBound):
		t.Fatalf("%s still blocked after %v", what, faultBound)
		return nil
	}
}

// TestPebbleDiskFullFailsStore: a flush that cannot be written (ENOSPC),
// which Pebble retries for ever, fails the checkpoint that waits for it
// with the cause, and the store, whose later calls all fail; the failure
// is logged once, however many times Pebble retried.
func TestPebbleDiskFullFailsStore(t *testing.T) {
	s, fi, log, root := openFaultStore(t)
	rng := rand.New(rand.NewSource(1))
	putEntries(t, s, rng, 5000, 16, 100)
	if _, err := s.Checkpoint(filepath.Join(root, "chk-1")); err != nil {
		t.Fatalf("checkpoint before the disk filled: %v", err)
	}
	putEntries(t, s, rng, 5000, 16, 100)
	enospc := error(syscall.ENOSPC)
	fi.err.Store(&enospc)

	err := within(t, "Checkpoint on a full disk", func() error {
		_, err := s.Checkpoint(filepath.Join(root, "chk-2"))
		return err
	})
	if !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Checkpoint on a full disk: %v, want an error wrapping ErrFailed and ENOSPC", err)
	}
	if fi.hits.Load() == 0 {
		t.Fatal("no write failed: the test did not fill the disk")
	}
	// Every later call fails with the same cause.
	var b WriteBatch
	b.Put(1, []byte("k"), []byte("v"))
	if err := s.Apply(&b); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Apply after the failure: %v", err)
	}
	if _, _, err := s.Get(1, []byte("k")); !errors.Is(err, ErrFailed) {
		t.Errorf("Get after the failure: %v", err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "chk-3")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a second Checkpoint: %v", err)
	}
	if err := within(t, "Close", s.Close); err != nil {
		t.Errorf("Close of a failed store: %v", err)
	}
	// Pebble's retries of the flush end (they go to memory now) and its
	// instance closes.
	select {
	case <-s.bgClosed:
	case <-time.After(faultBound):
		t.Fatalf("the failed store's instance did not close within %v", faultBound)
	}
	if got := log.matching("no space left on device"); len(got) != 1 || !strings.Contains(got[0], "failed") {
		t.Errorf("want one log line naming the failure, got %d:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestPebbleStuckFlushAbort: a flush blocked in the disk blocks Checkpoint
// and Apply until Abort, which ends both with its cause; Close then returns
// at once, while the flush is still blocked.
func TestPebbleStuckFlushAbort(t *testing.T) {
	s, fi, _, root := openFaultStore(t)
	rng := rand.New(rand.NewSource(2))
	putEntries(t, s, rng, 5000, 16, 100)
	block := make(chan struct{})
	fi.block.Store(&block)

	ckpt := make(chan error, 1)
	go func() {
		_, err := s.Checkpoint(filepath.Join(root, "chk-1"))
		ckpt <- err
	}()
	// The checkpoint's flush reaches the disk and blocks there.
	for fi.hits.Load() == 0 {
		select {
		case err := <-ckpt:
			t.Fatalf("Checkpoint returned (%v) although its flush is blocked", err)
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case err := <-ckpt:
		t.Fatalf("Checkpoint returned (%v) although its flush is blocked", err)
	default:
	}
	cause := errors.New("job canceled")
	s.Abort(cause)
	var err error
	select {
	case err = <-ckpt:
	case <-time.After(faultBound):
		t.Fatalf("Checkpoint still blocked %v after Abort", faultBound)
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, cause) {
		t.Fatalf("Checkpoint after Abort: %v, want ErrFailed and the cause", err)
	}
	if err := within(t, "Close while the flush is blocked", s.Close); err != nil {
		t.Fatalf("Close: %v", err)
	}
	releaseAndWaitClosed(t, s, block)
}

// TestPebbleStuckAsyncCheckpointAbort: while an asynchronous checkpoint's
// flush is blocked in the disk, the store takes writes and reads on (they
// are held), the checkpoint's wait blocks until Abort, which ends it with
// its cause, and Close then returns at once.
func TestPebbleStuckAsyncCheckpointAbort(t *testing.T) {
	s, fi, _, root := openFaultStore(t)
	rng := rand.New(rand.NewSource(3))
	putEntries(t, s, rng, 5000, 16, 100)
	block := make(chan struct{})
	fi.block.Store(&block)

	wait, err := s.StartCheckpoint(filepath.Join(root, "chk-1"), func() error { return nil })
	if err != nil {
		t.Fatalf("StartCheckpoint: %v", err)
	}
	ckpt := make(chan error, 1)
	go func() {
		_, err := wait()
		ckpt <- err
	}()
	for fi.hits.Load() == 0 {
		select {
		case err := <-ckpt:
			t.Fatalf("the checkpoint ended (%v) although its flush is blocked", err)
		case <-time.After(time.Millisecond):
		}
	}
	// The store is usable meanwhile: its writes are held in memory.
	var b WriteBatch
	b.Put(7, []byte("held"), []byte("v"))
	if err := within(t, "Apply under a blocked checkpoint", func() error { return s.Apply(&b) }); err != nil {
		t.Fatalf("Apply under a blocked checkpoint: %v", err)
	}
	if v, ok, err := s.Get(7, []byte("held")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("Get of a held write: %q %v %v", v, ok, err)
	}
	select {
	case err := <-ckpt:
		t.Fatalf("the checkpoint ended (%v) although its flush is blocked", err)
	default:
	}
	cause := errors.New("job canceled")
	s.Abort(cause)
	select {
	case err = <-ckpt:
	case <-time.After(faultBound):
		t.Fatalf("the checkpoint's wait still blocked %v after Abort", faultBound)
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, cause) {
		t.Fatalf("the checkpoint after Abort: %v, want ErrFailed and the cause", err)
	}
	if _, err := s.StartCheckpoint(filepath.Join(root, "chk-2"), func() error { return nil }); !errors.Is(err, cause) {
		t.Fatalf("a checkpoint after Abort: %v, want the cause", err)
	}
	if err := within(t, "Close while the flush is blocked", s.Close); err != nil {
		t.Fatalf("Close: %v", err)
	}
	releaseAndWaitClosed(t, s, block)
}

// TestPebbleAsyncCheckpointDiskFull: an asynchronous checkpoint whose
// flush finds the disk full fails with ENOSPC, and so does the store.
func TestPebbleAsyncCheckpointDiskFull(t *testing.T) {
	s, fi, _, root := openFaultStore(t)
	rng := rand.New(rand.NewSource(4))
	putEntries(t, s, rng, 5000, 16, 100)
	enospc := error(syscall.ENOSPC)
	fi.err.Store(&enospc)
	wait, err := s.StartCheckpoint(filepath.Join(root, "chk-1"), func() error { return nil })
	if err != nil {
		t.Fatalf("StartCheckpoint: %v", err)
	}
	if err := within(t, "the checkpoint on a full disk", func() error { _, err := wait(); return err }); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the checkpoint on a full disk: %v, want ErrFailed and ENOSPC", err)
	}
	var b WriteBatch
	b.Put(1, []byte("k"), []byte("v"))
	if err := s.Apply(&b); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Apply after the failure: %v", err)
	}
	if err := within(t, "Close", s.Close); err != nil {
		t.Errorf("Close of a failed store: %v", err)
	}
	select {
	case <-s.bgClosed:
	case <-time.After(faultBound):
		t.Fatalf("the failed store's instance did not close within %v", faultBound)
	}
}

// TestPebbleIngestedWriteBackDiskFull: a write-back written as sstables
// to ingest (Options.IngestMinOps) on a full disk fails the checkpoint and
// the store, as a flush does.
func TestPebbleIngestedWriteBackDiskFull(t *testing.T) {
	s, fi, _, root := openFaultStoreWith(t, PebbleOptions{IngestMinOps: 1})
	rng := rand.New(rand.NewSource(5))
	putEntries(t, s, rng, 5000, 16, 100)
	if _, err := s.Checkpoint(filepath.Join(root, "chk-0")); err != nil {
		t.Fatal(err)
	}
	enospc := error(syscall.ENOSPC)
	fi.err.Store(&enospc)
	wait, err := s.StartCheckpoint(filepath.Join(root, "chk-1"), func() error {
		var b WriteBatch
		for i := range 1000 {
			b.Put(i%128, fmt.Appendf(nil, "key-%d", i), []byte("value"))
		}
		return s.Apply(&b)
	})
	if err != nil {
		t.Fatalf("StartCheckpoint: %v", err)
	}
	if err := within(t, "the checkpoint on a full disk", func() error { _, err := wait(); return err }); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the checkpoint on a full disk: %v, want ErrFailed and ENOSPC", err)
	} else if !strings.Contains(err.Error(), "writeback-") {
		t.Errorf("the checkpoint on a full disk: %v, want the failed write of the write-back's sstable", err)
	}
	if err := within(t, "Close", s.Close); err != nil {
		t.Errorf("Close of a failed store: %v", err)
	}
	select {
	case <-s.bgClosed:
	case <-time.After(faultBound):
		t.Fatalf("the failed store's instance did not close within %v", faultBound)
	}
	if ents, err := os.ReadDir(s.dir); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".sst.tmp") {
				t.Errorf("%s left in the working directory", e.Name())
			}
		}
	}
}

// releaseAndWaitClosed unblocks the disk and waits until the abandoned
// store's instance has closed, so that nothing writes in the test's
// directory after the test.
func releaseAndWaitClosed(t *testing.T, s *PebbleStore, block chan struct{}) {
	t.Helper()
	close(block)
	select {
	case <-s.bgClosed:
	case <-time.After(faultBound):
		t.Fatalf("the abandoned store's instance did not close within %v of its disk unblocking", faultBound)
	}
}

// TestPebbleStalledApplyAbort: writes that stall behind a blocked flush
// (Pebble's memtables full) end with Abort.
func TestPebbleStalledApplyAbort(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	fi := &faultInjector{dir: dir}
	log := &logRecorder{}
	st, err := PebbleBackend{Options: PebbleOptions{Logger: log, FS: fi.fs(), MemTableSize: 1 << 20, MemTableStopWritesThreshold: 2}}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*PebbleStore)
	block := make(chan struct{})
	fi.block.Store(&block)
	applied := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewSource(3))
		v := make([]byte, 1000)
		for {
			var b WriteBatch
			for i := 0; i < 100; i++ {
				rng.Read(v)
				b.Put(rng.Intn(16), []byte(fmt.Sprintf("key-%08d", rng.Intn(1<<30))), v)
			}
			if err := s.Apply(&b); err != nil {
				applied <- err
				return
			}
		}
	}()
	// Writes go on until a flush blocks, then stall behind it.
	for fi.hits.Load() == 0 {
		select {
		case err := <-applied:
			t.Fatalf("Apply failed before Abort: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	cause := errors.New("job canceled")
	s.Abort(cause)
	select {
	case err = <-applied:
	case <-time.After(faultBound):
		t.Fatalf("Apply still blocked %v after Abort", faultBound)
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, cause) {
		t.Fatalf("Apply after Abort: %v", err)
	}
	if err := within(t, "Close", s.Close); err != nil {
		t.Fatal(err)
	}
	// Another store writes meanwhile: Pebble pools its batches, so one the
	// stalled commit still uses must not be handed out again.
	other, err := PebbleBackend{Options: PebbleOptions{Logger: log}}.Open(filepath.Join(root, "other"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		var b WriteBatch
		for j := 0; j <= i; j++ {
			b.Put(1, []byte(fmt.Sprintf("other-%d-%d", i, j)), []byte("v"))
		}
		if err := other.Apply(&b); err != nil {
			t.Fatal(err)
		}
	}
	releaseAndWaitClosed(t, s, block)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	// The stalled commit went on once the disk unblocked, after Apply had
	// returned: it must still have owned its batch.
	log.noFatal(t)
}

// TestPebbleCheckpointDirFault: a checkpoint that cannot be written where
// it goes (its directory is read-only) fails with the cause, but the store
// itself is sound: it takes the next checkpoint elsewhere.
func TestPebbleCheckpointDirFault(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	bad := filepath.Join(root, "bad")
	var broken atomic.Bool
	broken.Store(true)
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if broken.Load() && strings.HasPrefix(op.Path, bad) && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.EROFS}
		}
		return nil
	}))
	st, err := PebbleBackend{Options: PebbleOptions{Logger: &logRecorder{}, FS: fs}}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	putEntries(t, st, rand.New(rand.NewSource(4)), 2000, 16, 100)
	_, err = st.Checkpoint(filepath.Join(bad, "chk-1"))
	if !errors.Is(err, syscall.EROFS) || errors.Is(err, ErrFailed) {
		t.Fatalf("checkpoint into a read-only directory: %v, want EROFS without failing the store", err)
	}
	info, err := st.Checkpoint(filepath.Join(root, "good", "chk-2"))
	if err != nil || info.Size == 0 {
		t.Fatalf("next checkpoint: %+v, %v", info, err)
	}
	restored, err := PebbleBackend{}.Restore(filepath.Join(root, "restored"), []string{filepath.Join(root, "good", "chk-2")}, 0, 15)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if a, b := entries(t, st), entries(t, restored); !equalEntries(a, b) {
		t.Fatalf("restored %d entries, the store has %d", len(b), len(a))
	}
}

// TestPebbleReadDuringWriteBack: while an asynchronous checkpoint's
// write-back is being written (its sstable's write blocked here), a read
// of a key the write-back does not change is answered at once from the
// instance, one it changes at once from the write-back's sorted batches,
// and one written again since the barrier (held) waits for the write-back
// and sees the later value.
func TestPebbleReadDuringWriteBack(t *testing.T) {
	s, fi, block, wait := blockedWriteBack(t, func(b *WriteBatch) {
		for i := range 100 {
			b.Put(i%128, fmt.Appendf(nil, "key-%d", i), []byte("before"))
		}
	}, func(b *WriteBatch) {
		for i := range 50 {
			b.Put(i%128, fmt.Appendf(nil, "key-%d", i), []byte("written back"))
		}
		b.Delete(9, []byte("key-9"))
	})
	// Keys 50-99 are not in the write-back: read while it is blocked,
	// from the instance (or, the filter's false positives, from the
	// instance after a look in the write-back).
	var kgs []int
	var keys [][]byte
	for i := 50; i < 100; i++ {
		k := fmt.Appendf(nil, "key-%d", i)
		if !s.async.filter.mayHold(s.key(i%128, k)) {
			kgs, keys = append(kgs, i%128), append(keys, k)
		}
		v, ok, err := s.Get(i%128, k)
		if err != nil || !ok || string(v) != "before" {
			t.Fatalf("key-%d during the write-back: %q %v %v, want \"before\"", i, v, ok, err)
		}
	}
	if len(keys) < 45 {
		t.Fatalf("the write-back's filter holds %d of 50 keys it lacks", 50-len(keys))
	}
	for i := 0; i < 50; i++ {
		if !s.async.filter.mayHold(s.key(i%128, fmt.Appendf(nil, "key-%d", i))) {
			t.Fatalf("the write-back's filter lacks its key-%d", i)
		}
	}
	// Keys 0-49 are in it: read from it at once, key-9 deleted.
	for i := range 50 {
		v, ok, err := s.Get(i%128, fmt.Appendf(nil, "key-%d", i))
		want := "written back"
		if i == 9 {
			want = ""
		}
		if err != nil || ok != (i != 9) || string(v) != want {
			t.Fatalf("key-%d during the write-back: %q %v %v, want %q", i, v, ok, err, want)
		}
	}
	// A GetSorted of one key of each answers both at once.
	other, otherKG := keys[0], kgs[0]
	var sorted []string
	if err := s.GetSorted([]int{7, otherKG}, [][]byte{[]byte("key-7"), other}, func(i int, v []byte, ok bool) error {
		sorted = append(sorted, fmt.Sprintf("%d %s", i, v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(sorted)
	if got, want := strings.Join(sorted, ", "), "0 written back, 1 before"; got != want {
		t.Fatalf("GetSorted during the write-back: %s, want %s", got, want)
	}
	// Key 7 written again since the barrier: its read waits until the
	// write-back is committed, then sees the later value. Key 55, not in
	// the write-back, written since the barrier, is read at once.
	var later WriteBatch
	later.Put(7, []byte("key-7"), []byte("after the barrier"))
	later.Put(55, []byte("key-55"), []byte("after the barrier"))
	if err := s.Apply(&later); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get(55, []byte("key-55")); err != nil || !ok || string(v) != "after the barrier" {
		t.Fatalf("key-55 written since the barrier: %q %v %v", v, ok, err)
	}
	got := make(chan string, 1)
	go func() {
		v, _, err := s.Get(7, []byte("key-7"))
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(v)
	}()
	select {
	case v := <-got:
		t.Fatalf("a read of a key written since the barrier returned %q during the write-back", v)
	case <-time.After(100 * time.Millisecond):
	}
	fi.block.Store(nil)
	close(block)
	if v := <-got; v != "after the barrier" {
		t.Fatalf("key-7 after the write-back: %q", v)
	}
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleGetSortedDuringWriteBack: a GetSorted during a blocked
// write-back answers the keys it can at once, before one it must wait
// for (written since the barrier), which it answers once the write-back
// is committed.
func TestPebbleGetSortedDuringWriteBack(t *testing.T) {
	s, fi, block, wait := blockedWriteBack(t, func(b *WriteBatch) {
		b.Put(7, []byte("key-7"), []byte("before"))
		b.Put(60, []byte("key-60"), []byte("before"))
	}, func(b *WriteBatch) {
		b.Put(7, []byte("key-7"), []byte("written back"))
	})
	var later WriteBatch
	later.Put(7, []byte("key-7"), []byte("after the barrier"))
	if err := s.Apply(&later); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	go func() {
		err := s.GetSorted([]int{7, 60}, [][]byte{[]byte("key-7"), []byte("key-60")}, func(i int, v []byte, ok bool) error {
			got <- fmt.Sprintf("%d %s", i, v)
			return nil
		})
		if err != nil {
			got <- err.Error()
		}
	}()
	if v, w := <-got, "1 before"; v != w {
		t.Fatalf("GetSorted during the write-back: first %q, want %q", v, w)
	}
	select {
	case v := <-got:
		t.Fatalf("GetSorted answered a key written since the barrier during the write-back: %q", v)
	case <-time.After(100 * time.Millisecond):
	}
	fi.block.Store(nil)
	close(block)
	if v, w := <-got, "0 after the barrier"; v != w {
		t.Fatalf("GetSorted after the write-back: %q, want %q", v, w)
	}
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
}

// blockedWriteBack opens a store that ingests every write-back, applies
// before's batch and checkpoints it, then starts an asynchronous
// checkpoint whose write-back is writeBack's batch, its sstable's write
// blocked until block is closed (and fi.block cleared), and returns once
// the write is blocked.
func blockedWriteBack(t *testing.T, before, writeBack func(*WriteBatch)) (s *PebbleStore, fi *faultInjector, block chan struct{}, wait func() (CheckpointInfo, error)) {
	t.Helper()
	s, fi, _, root := openFaultStoreWith(t, PebbleOptions{IngestMinOps: 1})
	var b WriteBatch
	before(&b)
	if err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(filepath.Join(root, "chk-0")); err != nil {
		t.Fatal(err)
	}
	block = make(chan struct{})
	fi.block.Store(&block)
	wait, err := s.StartCheckpoint(filepath.Join(root, "chk-1"), func() error {
		var b WriteBatch
		writeBack(&b)
		return s.Apply(&b)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, fi)
	return s, fi, block, wait
}

// waitBlocked waits until a write reached fi's block.
func waitBlocked(t *testing.T, fi *faultInjector) {
	t.Helper()
	deadline := time.Now().Add(faultBound)
	for fi.hits.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no write reached the block within %v", faultBound)
		}
		time.Sleep(time.Millisecond)
	}
}
