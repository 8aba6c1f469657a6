package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/internal/objstore"
)

// ErrNoCheckpoint is returned when a job has no completed checkpoint.
var ErrNoCheckpoint = errors.New("no completed checkpoint")

// Storage keeps one job's checkpoints under dir, one chk-<n> directory each.
// It is safe for use by one coordinator at a time. Its writes go through
// the filesystem fsutil.For returns for dir (the operating system's, unless
// a test injects failures there).
//
// A Storage with an object store (NewRemoteStorage) makes each checkpoint
// under dir as before, its working copy, and Complete uploads it: the
// store is then where its checkpoints are, which Completed lists, NextID
// numbers after, Retain prunes and Fetch downloads from.
type Storage struct {
	dir    string
	remote *remote
}

// NewStorage returns the storage of checkpoints under dir (created on demand).
func NewStorage(dir string) *Storage { return &Storage{dir: dir} }

// NewRemoteStorage returns the storage of checkpoints made under dir and
// kept in store (the job's own root in it: its checkpoint directory joined
// with its folder).
func NewRemoteStorage(dir string, store objstore.Store) *Storage {
	return &Storage{dir: dir, remote: &remote{store: store}}
}

// Remote is the location of the object store the checkpoints are kept in
// ("" when they are kept in Root only).
func (s *Storage) Remote() string {
	if s.remote == nil {
		return ""
	}
	return s.remote.store.String()
}

// Complete makes checkpoint m complete: with an object store, it uploads
// the state files of m.Dir the store lacks and then m's _metadata
// (create-if-absent: an error wrapping ErrCheckpointExists if another
// process wrote that checkpoint), within ctx, checking this process's
// claim (Claim) before and after that write: a superseded claim is a
// *FencedError (ErrFenced), and the checkpoint must not be committed;
// then it writes m.Dir's
// _metadata (WriteMetadata). Only after it returns is the checkpoint
// complete; if it fails, the caller discards it. It returns the bytes
// uploaded.
func (s *Storage) Complete(ctx context.Context, m *Metadata) (int64, error) {
	var n int64
	if s.remote != nil {
		m.Owner = s.Owner().Epoch
		data, err := encodeForStore(m)
		if err != nil {
			return 0, err
		}
		if n, err = s.remote.upload(ctx, m, data); err != nil {
			return n, fmt.Errorf("uploading to %s: %w", s.remote.store, err)
		}
	}
	return n, WriteMetadata(m.Dir, m)
}

// Root is the directory holding the chk-<n> directories.
func (s *Storage) Root() string { return s.dir }

// Dir is the directory of checkpoint id.
func (s *Storage) Dir(id int64) string { return filepath.Join(s.dir, fmt.Sprintf("chk-%d", id)) }

// Prepare creates the (empty) directory of checkpoint id.
func (s *Storage) Prepare(id int64) (string, error) {
	d := s.Dir(id)
	if err := fsutil.For(d).MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	return d, nil
}

// Discard removes checkpoint id (a failed or expired one), from the
// object store too (within two minutes).
func (s *Storage) Discard(id int64) error { return s.discardWithin(id, remoteCallTimeout) }

// discardWithin is Discard with the object store's part bounded by
// limit: a checkpoint that failed because the store does not answer is
// not held up longer than its own timeout by the cleanup. Objects left
// behind are no checkpoint (no _metadata), and the pruning after the next
// completed checkpoint deletes them.
func (s *Storage) discardWithin(id int64, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), min(limit, remoteCallTimeout))
	defer cancel()
	return s.discard(ctx, id)
}

// discard is Discard with the object store's part within ctx.
func (s *Storage) discard(ctx context.Context, id int64) error {
	d := s.Dir(id)
	err := fsutil.For(d).RemoveAll(d)
	if s.remote != nil {
		err = errors.Join(err, s.remote.discard(ctx, id))
	}
	return err
}

// ids returns the ids of the chk-<n> directories present, highest first.
func (s *Storage) ids() ([]int64, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "chk-"); ok && e.IsDir() {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil {
				out = append(out, id)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	return out, nil
}

// NextID is the id to use for the next checkpoint: above every id on disk
// (and in the object store: its failure is ErrUnreachable), so ids keep
// increasing across restarts.
func (s *Storage) NextID() (int64, error) {
	ids, err := s.ids()
	if err != nil {
		return 1, err
	}
	if s.remote != nil {
		ctx, cancel := context.WithTimeout(context.Background(), remoteCallTimeout)
		defer cancel()
		all, _, err := s.remote.ids(ctx)
		if err != nil {
			return 1, unreachable(err)
		}
		ids = append(ids, all...)
		sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	}
	if len(ids) == 0 {
		return 1, nil
	}
	return ids[0] + 1, nil
}

// Completed returns the checkpoints with valid metadata, newest first, and
// a warning for each damaged one it skipped. With an object store they are
// those of the store, and each one's Dir is where Fetch puts its files; a
// failure of the service is ErrUnreachable, a superseded claim ErrFenced.
func (s *Storage) Completed() ([]*Metadata, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteCallTimeout)
	defer cancel()
	return s.completed(ctx)
}

// completed is Completed with the object store's calls within ctx.
func (s *Storage) completed(ctx context.Context) ([]*Metadata, []string, error) {
	if s.remote != nil {
		done, warnings, err := s.remote.completed(ctx, s.Dir)
		return done, warnings, unreachable(err)
	}
	ids, err := s.ids()
	if err != nil {
		return nil, nil, err
	}
	var out []*Metadata
	var warnings []string
	for _, id := range ids {
		m, err := ReadMetadata(s.Dir(id))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Never completed (crashed before _metadata): not a checkpoint.
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("skipping checkpoint %d: %v", id, err))
		default:
			out = append(out, m)
		}
	}
	return out, warnings, nil
}

// Retain deletes all but the n newest completed checkpoints, and every
// incomplete directory older than the newest completed one. With an object
// store it does so there too, and deletes the shared objects no retained
// checkpoint lists.
func (s *Storage) Retain(n int) error { return s.retainWithin(n, remoteCallTimeout) }

// retainWithin is Retain with the object store's calls bounded by limit
// in all: the pruning after a checkpoint, which holds up the completion of
// the next, takes no longer than a checkpoint may. What it leaves, the
// next one deletes.
func (s *Storage) retainWithin(n int, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), min(limit, remoteCallTimeout))
	defer cancel()
	done, _, err := s.completed(ctx)
	if err != nil || len(done) == 0 {
		return err
	}
	keep := map[int64]bool{}
	for i, m := range done {
		if i < n {
			keep[m.ID] = true
		}
	}
	if s.remote != nil {
		if err := s.remote.prune(ctx, done[0].ID, done[:min(n, len(done))]); err != nil {
			return err
		}
	}
	ids, err := s.ids()
	if err != nil {
		return err
	}
	newest := done[0].ID
	for _, id := range ids {
		if id < newest && !keep[id] {
			if err := s.discard(ctx, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// Load reads the checkpoint or savepoint at path: its directory or its
// _metadata file.
func Load(path string) (*Metadata, error) {
	if filepath.Base(path) == MetadataFile {
		path = filepath.Dir(path)
	}
	return ReadMetadata(path)
}

// WriteSavepoint copies completed checkpoint m into a new self-contained
// directory under root (files copied, never linked, so it outlives the job's
// checkpoints) and returns its path. The files and their directories are
// synced before _metadata is written (atomically, last). If any step
// fails, the directory is removed: no partial savepoint is left behind.
func WriteSavepoint(m *Metadata, root string) (string, error) {
	dst := filepath.Join(root, fmt.Sprintf("savepoint-%s-%d-%d", sanitize(m.Job), m.ID, m.Triggered.UnixMilli()))
	fsys := fsutil.For(dst)
	if err := writeSavepoint(fsys, m, dst); err != nil {
		_ = fsys.RemoveAll(dst)
		return "", fmt.Errorf("savepoint %s: %w", dst, err)
	}
	return dst, nil
}

func writeSavepoint(fsys fsutil.FS, m *Metadata, dst string) error {
	if err := fsys.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, o := range m.Operators {
		for _, st := range o.Subtasks {
			if st.Dir == "" {
				continue
			}
			if err := copyTree(fsys, filepath.Join(m.Dir, st.Dir), filepath.Join(dst, st.Dir)); err != nil {
				return err
			}
		}
	}
	sp := *m
	sp.Savepoint = true
	if err := WriteMetadata(dst, &sp); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(dst)) // dst's own entry
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ',' {
			return '_'
		}
		return r
	}, s)
}

// copyTree copies the files under src into dst, syncing each file and
// then each directory it made.
func copyTree(fsys fsutil.FS, src, dst string) error {
	var dirs []string
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			dirs = append(dirs, target)
			return fsys.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := fsys.Create(target, false)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}
