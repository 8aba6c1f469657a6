// Package fsutil holds the file operations whose durability the engine
// relies on: writing a file atomically (a reader sees the old content or the
// new, never a mix, even after a crash) and syncing a directory so a rename
// in it survives a crash.
package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFileAtomic writes data to path through a temporary file beside it:
// write, fsync, rename over path, fsync the directory.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".inprogress"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, making the creation, rename or removal of its
// entries durable. File systems that cannot sync a directory are tolerated.
func SyncDir(dir string) error {
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
