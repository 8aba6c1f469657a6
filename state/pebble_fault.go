package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrFailed is wrapped by every error of a Pebble store after a write to
// its working directory failed (a full disk, a read-only or unwritable
// directory, an I/O error), or after Abort. The error names the first
// failure, which stays reachable by errors.Is (syscall.ENOSPC, say).
//
// A failed store is abandoned, not repaired: Pebble retries a failed flush
// forever and blocks writers and flushes meanwhile, so the store refuses
// every later call, and its Pebble instance writes nothing more to disk
// (what it still writes to its working directory goes to memory, so that
// its retries succeed and it can close). The job fails or restarts from its
// last checkpoint.
var ErrFailed = errors.New("state: store failed")

// Aborter is implemented by stores whose calls may block on the disk (the
// Pebble store: a flush that cannot finish blocks Checkpoint and Apply for
// as long as the disk stays full). Abort may be called from any goroutine,
// concurrently with the store's own: a call blocked in the store returns an
// error wrapping ErrFailed and err, and so does every later call. Close
// then returns at once; the store's resources are released in the
// background once its blocked work ends.
type Aborter interface {
	Abort(err error)
}

// storeFault is the failure state of one Pebble store, shared by its owner
// goroutine, the filesystem under its Pebble instance, its event listener
// and Abort.
type storeFault struct {
	dir    string
	logger pebble.Logger

	mu  sync.Mutex
	err error // the first failure, nil while healthy
	// failed is closed once err is set: a call waiting on the store
	// returns.
	failed chan struct{}
	// abandoned is set with err: from then on the store's Pebble instance
	// writes its working directory into mem, never to disk.
	abandoned atomic.Bool
	mem       vfs.FS

	// suppressed counts the background errors reported after the failure,
	// which are not logged.
	suppressed atomic.Int64
}

func newStoreFault(dir string, l pebble.Logger) *storeFault {
	return &storeFault{dir: filepath.Clean(dir), logger: l, failed: make(chan struct{}), mem: vfs.NewMem()}
}

// fail records the store's first failure, logs it once and abandons the
// store. Later calls do nothing.
func (f *storeFault) fail(err error, logIt bool) {
	f.mu.Lock()
	if f.err != nil {
		f.mu.Unlock()
		return
	}
	f.err = err
	f.abandoned.Store(true)
	close(f.failed)
	f.mu.Unlock()
	if logIt {
		f.logger.Errorf("state: pebble store %s failed: %s (the store is abandoned: its checkpoints fail, the job fails or restarts from its last checkpoint)", f.dir, err)
	}
}

// failure returns an error wrapping ErrFailed and the first failure, or nil.
func (f *storeFault) failure() error {
	f.mu.Lock()
	err := f.err
	f.mu.Unlock()
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: pebble store %s: %w", ErrFailed, f.dir, err)
}

// inDir reports whether path is in the store's working directory.
func (f *storeFault) inDir(path string) bool {
	p := filepath.Clean(path)
	return p == f.dir || strings.HasPrefix(p, f.dir+string(filepath.Separator))
}

// written checks the outcome of a write to path: a failed write to the
// working directory fails the store. Writes elsewhere (into a checkpoint's
// directory) only return their error: the checkpoint fails, the store
// stays usable.
func (f *storeFault) written(path string, err error) error {
	if err != nil && f.inDir(path) && !f.abandoned.Load() {
		f.fail(err, true)
	}
	return err
}

// faultFS is the filesystem of a Pebble store's instance. While the store
// is healthy it is the real one, and a failed write to the working
// directory fails the store. Once the store is abandoned, writes to the
// working directory go to memory and succeed (so that Pebble's retries end
// and its instance can close without touching the disk, which may by then
// belong to the next run's store), and writes elsewhere fail with the
// store's failure.
type faultFS struct {
	vfs.FS
	f *storeFault
}

func (fs *faultFS) Unwrap() vfs.FS { return fs.FS }

// toMem reports whether an operation on path goes to memory.
func (fs *faultFS) toMem(path string) bool { return fs.f.abandoned.Load() && fs.f.inDir(path) }

// refused returns the store's failure for a write outside its working
// directory after it was abandoned.
func (fs *faultFS) refused(path string) error {
	if fs.f.abandoned.Load() && !fs.f.inDir(path) {
		return fs.f.failure()
	}
	return nil
}

func (fs *faultFS) inMem(path string) bool {
	if !fs.f.abandoned.Load() {
		return false
	}
	_, err := fs.f.mem.Stat(path)
	return err == nil
}

func (fs *faultFS) memCreate(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.f.mem.MkdirAll(fs.f.mem.PathDir(name), 0o755); err != nil {
		return nil, err
	}
	return fs.f.mem.Create(name, cat)
}

func (fs *faultFS) wrap(f vfs.File, path string) vfs.File {
	return &faultFile{File: f, fs: fs, path: path}
}

func (fs *faultFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.toMem(name) {
		return fs.memCreate(name, cat)
	}
	if err := fs.refused(name); err != nil {
		return nil, err
	}
	f, err := fs.FS.Create(name, cat)
	if fs.f.written(name, err) != nil {
		return nil, err
	}
	return fs.wrap(f, name), nil
}

func (fs *faultFS) Link(oldname, newname string) error {
	if fs.toMem(newname) {
		if fs.inMem(oldname) {
			return fs.f.mem.Link(oldname, newname)
		}
		return nil
	}
	if err := fs.refused(newname); err != nil {
		return err
	}
	return fs.f.written(newname, fs.FS.Link(oldname, newname))
}

func (fs *faultFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if fs.inMem(name) {
		return fs.f.mem.Open(name, opts...)
	}
	f, err := fs.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	return fs.wrap(f, name), nil
}

func (fs *faultFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if fs.toMem(name) {
		if fs.inMem(name) {
			return fs.f.mem.OpenReadWrite(name, cat, opts...)
		}
		return fs.memCreate(name, cat)
	}
	if err := fs.refused(name); err != nil {
		return nil, err
	}
	f, err := fs.FS.OpenReadWrite(name, cat, opts...)
	if fs.f.written(name, err) != nil {
		return nil, err
	}
	return fs.wrap(f, name), nil
}

func (fs *faultFS) OpenDir(name string) (vfs.File, error) {
	if fs.toMem(name) {
		if err := fs.f.mem.MkdirAll(name, 0o755); err != nil {
			return nil, err
		}
		return fs.f.mem.OpenDir(name)
	}
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return fs.wrap(f, name), nil
}

func (fs *faultFS) Remove(name string) error {
	if fs.toMem(name) {
		if fs.inMem(name) {
			return fs.f.mem.Remove(name)
		}
		return nil // on disk: no longer ours to change
	}
	if err := fs.refused(name); err != nil {
		return err
	}
	return fs.FS.Remove(name)
}

func (fs *faultFS) RemoveAll(name string) error {
	if fs.toMem(name) {
		return fs.f.mem.RemoveAll(name)
	}
	if err := fs.refused(name); err != nil {
		return err
	}
	return fs.FS.RemoveAll(name)
}

func (fs *faultFS) Rename(oldname, newname string) error {
	if fs.toMem(newname) {
		if fs.inMem(oldname) {
			return fs.f.mem.Rename(oldname, newname)
		}
		return nil
	}
	if err := fs.refused(newname); err != nil {
		return err
	}
	return fs.f.written(newname, fs.FS.Rename(oldname, newname))
}

func (fs *faultFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.toMem(newname) {
		return fs.memCreate(newname, cat)
	}
	if err := fs.refused(newname); err != nil {
		return nil, err
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname, cat)
	if fs.f.written(newname, err) != nil {
		return nil, err
	}
	return fs.wrap(f, newname), nil
}

func (fs *faultFS) MkdirAll(dir string, perm os.FileMode) error {
	if fs.toMem(dir) {
		return fs.f.mem.MkdirAll(dir, perm)
	}
	if err := fs.refused(dir); err != nil {
		return err
	}
	return fs.f.written(dir, fs.FS.MkdirAll(dir, perm))
}

func (fs *faultFS) List(dir string) ([]string, error) {
	names, err := fs.FS.List(dir)
	if fs.f.abandoned.Load() && fs.f.inDir(dir) {
		if m, merr := fs.f.mem.List(dir); merr == nil {
			return append(names, m...), nil
		}
	}
	return names, err
}

func (fs *faultFS) Stat(name string) (vfs.FileInfo, error) {
	if fs.inMem(name) {
		return fs.f.mem.Stat(name)
	}
	return fs.FS.Stat(name)
}

// faultFile is a file of the real filesystem opened through a faultFS:
// its writes fail the store as the faultFS's do, and once the store is
// abandoned its writes to the working directory are dropped (Pebble's
// MANIFEST, open since before the failure) and those elsewhere refused.
type faultFile struct {
	vfs.File
	fs   *faultFS
	path string
}

// dropped reports that a write is to be dropped (abandoned, working
// directory) or refused (abandoned, elsewhere: err).
func (f *faultFile) dropped() (bool, error) {
	if !f.fs.f.abandoned.Load() {
		return false, nil
	}
	if f.fs.f.inDir(f.path) {
		return true, nil
	}
	return true, f.fs.f.failure()
}

func (f *faultFile) Write(p []byte) (int, error) {
	if drop, err := f.dropped(); drop {
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n, err := f.File.Write(p)
	return n, f.fs.f.written(f.path, err)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if drop, err := f.dropped(); drop {
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n, err := f.File.WriteAt(p, off)
	return n, f.fs.f.written(f.path, err)
}

func (f *faultFile) Sync() error {
	if drop, err := f.dropped(); drop {
		return err
	}
	return f.fs.f.written(f.path, f.File.Sync())
}

func (f *faultFile) SyncData() error {
	if drop, err := f.dropped(); drop {
		return err
	}
	return f.fs.f.written(f.path, f.File.SyncData())
}

func (f *faultFile) SyncTo(length int64) (bool, error) {
	if drop, err := f.dropped(); drop {
		return true, err
	}
	full, err := f.File.SyncTo(length)
	return full, f.fs.f.written(f.path, err)
}

func (f *faultFile) Preallocate(off, length int64) error {
	if drop, err := f.dropped(); drop {
		return err
	}
	return f.File.Preallocate(off, length)
}

// call runs fn, a Pebble call that may block on the disk (a flush, a
// commit stalled behind one, a checkpoint), on a goroutine of its own and
// waits until it returns or the store fails or is aborted, whichever comes
// first. In the second case fn may still be running: the store keeps it as
// its pending call, and Close closes the instance once fn returns.
func (s *PebbleStore) call(fn func() error) error {
	if err := s.usable(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("state: pebble store %s: %v", s.dir, r)
			}
			close(done)
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		// The store may have failed meanwhile: then fn's success does not
		// count (what it wrote may have gone to memory).
		if ferr := s.fault.failure(); ferr != nil {
			return ferr
		}
		return err
	case <-s.fault.failed:
		s.pending = done
		return s.fault.failure()
	}
}

// Abort fails the store with err (see Aborter): a call blocked in it
// returns, later calls fail. It may be called from any goroutine.
func (s *PebbleStore) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	s.fault.fail(fmt.Errorf("aborted: %w", err), false)
}

// closeAbandoned closes the Pebble instance of a failed store in the
// background, once its pending call (if any) returned: a pending call
// holds Pebble's commit lock, which Close needs.
func (s *PebbleStore) closeAbandoned() {
	db, pending, closed, async := s.db, s.pending, s.bgClosed, s.async
	closing.Store(s.dir, closed)
	go func() {
		defer close(closed)
		defer closing.CompareAndDelete(s.dir, closed)
		defer func() { _ = recover() }()
		if pending != nil {
			<-pending
		}
		if async != nil {
			<-async.done
		}
		_ = db.Close()
	}()
}

// closing holds, by working directory, the channel an abandoned store's
// instance closes once it is closed (closeAbandoned).
var closing sync.Map

// AwaitClosed returns once no abandoned store's instance in dir is still
// closing in the background (a job stopped, its stores aborted, and
// restarted at once into the same working directories), or with ctx's
// error: Pebble refuses to open a directory an instance of the process
// still holds, and its files must not be removed from under it.
func AwaitClosed(ctx context.Context, dir string) error {
	ch, ok := closing.Load(dir)
	if !ok {
		return nil
	}
	select {
	case <-ch.(chan struct{}):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("state: waiting for the store in %s to close: %w", dir, ctx.Err())
	}
}

// onBackgroundError handles a background error of the store's Pebble
// instance: after the store failed, it is only counted (Pebble reports
// every retry of a failed flush); before, it is logged, each kind once, at
// most maxLoggedKinds kinds per store. (A flush that cannot be written has
// failed the store already: the failed write went through its faultFS.)
func (e *pebbleEvents) onBackgroundError(err error) {
	if f := e.fault; f != nil {
		if f.abandoned.Load() {
			f.suppressed.Add(1)
			return
		}
	}
	e.logOnce("pebble: background error: %s", pebbleError(err).Error())
}

// maxLoggedKinds bounds the kinds of background errors logged per store.
const maxLoggedKinds = 10

// errorKind is a message with its digits dropped, so that one error
// repeated for each new file (000123.sst, 000124.sst, ...) is one kind.
func errorKind(msg string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, msg)
}
