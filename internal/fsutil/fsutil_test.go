package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileAtomicFaults: whichever step of an atomic write fails (the
// write, the fsync, the rename), the file keeps its old content, the
// temporary file is gone, and the error is the step's.
func TestWriteFileAtomicFaults(t *testing.T) {
	for _, kind := range []OpKind{OpCreate, OpWrite, OpSync, OpClose, OpRename} {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if err := WriteFileAtomic(path, []byte("old")); err != nil {
				t.Fatal(err)
			}
			hits := 0
			fsys := Inject(OS, func(op Op) error {
				if op.Kind == kind {
					hits++
					return syscall.EIO
				}
				return nil
			})
			defer Install(dir, fsys)()
			err := WriteFileAtomic(path, []byte("new"))
			if !errors.Is(err, syscall.EIO) || hits != 1 {
				t.Fatalf("got %v after %d injected failures, want EIO from one", err, hits)
			}
			if data, err := os.ReadFile(path); err != nil || string(data) != "old" {
				t.Fatalf("after the failed write: %q, %v; want the old content", data, err)
			}
			if _, err := os.Stat(path + ".inprogress"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temporary file left behind: %v", err)
			}
		})
	}
}

// TestInstall: For returns the innermost installed FS over a path, and OS
// outside them and once uninstalled.
func TestInstall(t *testing.T) {
	a := Inject(OS, func(Op) error { return nil })
	b := Inject(OS, func(Op) error { return nil })
	undoA := Install("/x/a", a)
	undoB := Install("/x/a/b", b)
	for path, want := range map[string]FS{"/x/a": a, "/x/a/f": a, "/x/a/b/c/d": b, "/x/ab": OS, "/y": OS} {
		if got := For(path); got != want {
			t.Errorf("For(%s) is not the expected FS", path)
		}
	}
	undoB()
	undoA()
	if For("/x/a/b/c") != OS {
		t.Fatal("uninstalled FS still returned")
	}
}
