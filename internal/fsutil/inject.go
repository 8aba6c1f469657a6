package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// OpKind is the kind of an operation of an FS or of a File it created.
type OpKind int

// The operations an injecting FS reports.
const (
	OpCreate OpKind = iota
	OpWrite
	OpSync
	OpClose
	OpMkdirAll
	OpRename
	OpRemove
	OpRemoveAll
	OpSyncDir
)

var opNames = [...]string{"create", "write", "sync", "close", "mkdir", "rename", "remove", "remove-all", "sync-dir"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "op?"
}

// Op is one operation of an injecting FS: its kind and the path it is on
// (for a rename, Path is the new name and From the old one).
type Op struct {
	Kind OpKind
	Path string
	From string
}

// Inject returns fsys with fn called before every operation: an error fn
// returns is the operation's error, and the operation is not done (a write
// writes nothing). fn may be called from several goroutines at once.
func Inject(fsys FS, fn func(Op) error) FS { return &injectFS{fs: fsys, fn: fn} }

type injectFS struct {
	fs FS
	fn func(Op) error
}

func (f *injectFS) check(k OpKind, path string) error {
	err := f.fn(Op{Kind: k, Path: path})
	if err != nil {
		if _, ok := err.(*os.PathError); !ok {
			err = &os.PathError{Op: k.String(), Path: path, Err: err}
		}
	}
	return err
}

func (f *injectFS) Create(name string, excl bool) (File, error) {
	if err := f.check(OpCreate, name); err != nil {
		return nil, err
	}
	file, err := f.fs.Create(name, excl)
	if err != nil {
		return nil, err
	}
	return &injectFile{File: file, fs: f, path: name}, nil
}

func (f *injectFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := f.check(OpMkdirAll, dir); err != nil {
		return err
	}
	return f.fs.MkdirAll(dir, perm)
}

func (f *injectFS) Rename(oldname, newname string) error {
	if err := f.fn(Op{Kind: OpRename, Path: newname, From: oldname}); err != nil {
		if _, ok := err.(*os.LinkError); !ok {
			err = &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
		}
		return err
	}
	return f.fs.Rename(oldname, newname)
}

func (f *injectFS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

func (f *injectFS) RemoveAll(name string) error {
	if err := f.check(OpRemoveAll, name); err != nil {
		return err
	}
	return f.fs.RemoveAll(name)
}

func (f *injectFS) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

type injectFile struct {
	File
	fs   *injectFS
	path string
}

func (f *injectFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite, f.path); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *injectFile) Sync() error {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *injectFile) Close() error {
	if err := f.fs.check(OpClose, f.path); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}

// The installed filesystems, by directory.
var installed struct {
	mu   sync.RWMutex
	dirs map[string]FS
}

// Install makes fsys the FS that For returns for dir and every path under
// it, until the returned function is called. It is for tests: they install
// an injecting FS over their own temporary directory, so that the engine's
// writes there fail as the test says, whatever component makes them.
// Installs over nested directories are allowed; the innermost wins.
func Install(dir string, fsys FS) (uninstall func()) {
	dir = filepath.Clean(dir)
	installed.mu.Lock()
	defer installed.mu.Unlock()
	if installed.dirs == nil {
		installed.dirs = map[string]FS{}
	}
	installed.dirs[dir] = fsys
	return func() {
		installed.mu.Lock()
		defer installed.mu.Unlock()
		delete(installed.dirs, dir)
	}
}

// For returns the FS to write path through: the one installed over the
// innermost directory holding path, or OS.
func For(path string) FS {
	installed.mu.RLock()
	defer installed.mu.RUnlock()
	if len(installed.dirs) == 0 {
		return OS
	}
	p := filepath.Clean(path)
	best, bestLen := OS, -1
	for dir, fsys := range installed.dirs {
		if (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))) && len(dir) > bestLen {
			best, bestLen = fsys, len(dir)
		}
	}
	return best
}
