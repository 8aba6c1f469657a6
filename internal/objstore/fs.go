package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/streamsql/streamsql/internal/fsutil"
)

// FS is a Store in a directory of the local filesystem: the object key is
// the file dir/key. A Put writes a temporary file beside it, syncs it and
// renames it into place, then syncs the directory; PutIfAbsent links the
// temporary file into place (link(2) fails if the name exists). Writes go
// through fsutil.For(dir). Temporary files (".tmp-" names) are not listed.
type FS struct {
	dir string
}

// NewFS returns the store in dir (created on demand).
func NewFS(dir string) *FS { return &FS{dir: dir} }

func (s *FS) String() string { return s.dir }

var tmpSeq atomic.Uint64

// writeTemp writes r into a temporary file in the directory of path,
// synced, and returns its name.
func (s *FS) writeTemp(path string, r io.Reader) (string, error) {
	fsys := fsutil.For(path)
	if err := fsys.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(tmpSeq.Add(1), 10))
	f, err := fsys.Create(tmp, true)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		fsys.Remove(tmp)
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fsys.Remove(tmp)
		return "", err
	}
	if err := f.Close(); err != nil {
		fsys.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// Put implements Store.
func (s *FS) Put(_ context.Context, key string, r io.Reader, _ int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	path := localPath(s.dir, key)
	tmp, err := s.writeTemp(path, r)
	if err != nil {
		return err
	}
	fsys := fsutil.For(path)
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// PutIfAbsent implements Store.
func (s *FS) PutIfAbsent(_ context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	path := localPath(s.dir, key)
	tmp, err := s.writeTemp(path, strings.NewReader(string(data)))
	if err != nil {
		return err
	}
	fsys := fsutil.For(path)
	defer fsys.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// Get implements Store.
func (s *FS) Get(_ context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	f, err := os.Open(localPath(s.dir, key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(s.dir, key)
	}
	return f, err
}

// List implements Store.
func (s *FS) List(_ context.Context, prefix string) ([]Object, error) {
	var out []Object
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Object{Key: key, Size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// Delete implements Store.
func (s *FS) Delete(_ context.Context, keys ...string) error {
	for _, key := range keys {
		if err := checkKey(key); err != nil {
			return err
		}
		path := localPath(s.dir, key)
		if err := fsutil.For(path).Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
