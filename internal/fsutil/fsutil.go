// Package fsutil holds the file operations whose durability the engine
// relies on: writing a file atomically (a reader sees the old content or the
// new, never a mix, even after a crash) and syncing a directory so a rename
// in it survives a crash.
//
// Those operations go through FS, a seam between the engine and the disk:
// checkpoint storage and _metadata, and the filesystem sink, write through
// the FS that For returns for a path, which is the operating system's
// unless a test installed one that injects failures (Inject, Install).
// Reads go to the operating system directly: the seam is for the writes
// whose failures the engine must survive.
package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// File is a file open for writing.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// FS is the writing side of a filesystem: the operations the engine's
// durable writes use.
type FS interface {
	// Create creates name for writing, truncating it if it exists (excl
	// false) or failing with an error wrapping fs.ErrExist (excl true).
	Create(name string, excl bool) (File, error)
	MkdirAll(dir string, perm os.FileMode) error
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory; RemoveAll a tree.
	Remove(name string) error
	RemoveAll(name string) error
	// SyncDir fsyncs a directory, making the creation, rename or removal
	// of its entries durable. File systems that cannot sync a directory
	// are tolerated.
	SyncDir(dir string) error
}

// OS is the operating system's filesystem.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Create(name string, excl bool) (File, error) {
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if excl {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	return os.OpenFile(name, flag, 0o644)
}

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Rename(oldname, newname string) error        { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                 { return os.RemoveAll(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}

// WriteFileAtomic writes data to path through the FS of path (For).
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicFS(For(path), path, data)
}

// WriteFileAtomicFS writes data to path through a temporary file beside it
// (path + ".inprogress"): write, fsync, rename over path, fsync the
// directory. If any step fails, path is as it was (the old content or
// absent) and the temporary file is removed, as far as fsys allows.
func WriteFileAtomicFS(fsys FS, path string, data []byte) error {
	tmp := path + ".inprogress"
	f, err := fsys.Create(tmp, false)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = fsys.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs dir through the FS of dir (For).
func SyncDir(dir string) error { return For(dir).SyncDir(dir) }
