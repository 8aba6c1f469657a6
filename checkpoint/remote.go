package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/internal/objstore"
)

// ErrDamagedFile is returned (wrapped, naming the object) when a state
// file of a checkpoint or savepoint in an object store is missing, or its
// size or CRC-32C is not what its _metadata lists. A restore falls back
// past such a checkpoint to an older one.
var ErrDamagedFile = errors.New("checkpoint file damaged or missing")

// ErrCheckpointExists is returned (wrapped) when a checkpoint's _metadata
// is already in the object store: another process wrote a checkpoint of
// that id for the same job.
var ErrCheckpointExists = errors.New("checkpoint already exists in the object store")

// ErrUnreachable is matched (errors.Is) by the error of a listing, read
// or download of the checkpoints in an object store that failed for the
// service (down, paused, answering errors), not for what it holds: trying
// again later may succeed.
var ErrUnreachable = errors.New("checkpoint storage unreachable")

// unreachable marks err, a failed call to the object store, as
// ErrUnreachable (unless it is about the job's owner or a damaged object).
func unreachable(err error) error {
	if err == nil || errors.Is(err, ErrFenced) || errors.Is(err, ErrDamagedFile) || errors.Is(err, ErrCorrupt) ||
		errors.Is(err, ErrIncompatibleState) || errors.Is(err, ErrUnreachable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// remoteCallTimeout bounds the object store calls made outside a
// checkpoint (listing and reading on restore, pruning, discarding), which
// have no checkpoint timeout of their own.
const remoteCallTimeout = 2 * time.Minute

// uploadParallelism is how many files a checkpoint uploads or downloads at
// once.
const uploadParallelism = 4

// remote is the object store copy of a Storage's checkpoints. Its layout,
// under the store's root (the checkpoint directory's URI joined with the
// job's folder):
//
//	chk-<n>/_metadata                             the same document as locally
//	shared/<subtask dir>/<file>.<crc32c>.<size>   every state file, once
//
// A state file's object is named by its subtask directory, name, CRC-32C
// (8 hex digits) and size, so a file that an earlier checkpoint uploaded
// (a Pebble sstable or blob file, immutable) is not uploaded again, and a
// file of another content under a reused name (after a restore from an
// older checkpoint) gets an object of its own.
type remote struct {
	store objstore.Store

	mu sync.Mutex
	// known are the shared objects in the store (nil until listed once).
	known map[string]bool
	// owner is this process's claim on the job's checkpoints (Claim;
	// epoch 0: none, nothing is fenced).
	owner Owner
}

func metaKey(id int64) string { return fmt.Sprintf("chk-%d/%s", id, MetadataFile) }

// sharedKey is the object of file f of the subtask directory dir.
func sharedKey(dir string, f FileSum) string {
	return path.Join("shared", filepath.ToSlash(dir), fmt.Sprintf("%s.%08x.%d", f.Name, f.CRC32C, f.Size))
}

// savepointKey is the object of file f of a savepoint: its path in the
// savepoint's directory, as on disk.
func savepointKey(dir string, f FileSum) string { return path.Join(filepath.ToSlash(dir), f.Name) }

var (
	chkKey  = regexp.MustCompile(`^chk-([0-9]+)/`)
	chkName = regexp.MustCompile(`^chk-[0-9]+$`)
)

// ids returns the checkpoint ids with any object in the store, and those
// with a _metadata object, highest first.
func (r *remote) ids(ctx context.Context) (all, withMeta []int64, err error) {
	objs, err := r.store.List(ctx, "chk-")
	if err != nil {
		return nil, nil, err
	}
	seen := map[int64]bool{}
	for _, o := range objs {
		m := chkKey.FindStringSubmatch(o.Key)
		if m == nil {
			continue
		}
		id, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue
		}
		if !seen[id] {
			seen[id] = true
			all = append(all, id)
		}
		if o.Key == metaKey(id) {
			withMeta = append(withMeta, id)
		}
	}
	desc := func(s []int64) { sort.Slice(s, func(i, j int) bool { return s[i] > s[j] }) }
	desc(all)
	desc(withMeta)
	return all, withMeta, nil
}

// readMeta reads and verifies the _metadata object key.
func readMeta(ctx context.Context, store objstore.Store, key string) (*Metadata, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", store, key, err)
	}
	m, err := decodeMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", store, key, err)
	}
	return m, nil
}

// completed returns the checkpoints in the store with valid metadata,
// newest first, each with Dir set to dirOf(id) (where Fetch puts its
// files), and a warning for each damaged one it skipped.
//
// A checkpoint that a superseded owner wrote after a later owner's claim
// is left out (claims.valid): it was never committed, and is no state to
// resume. A process whose own claim is superseded gets ErrFenced.
func (r *remote) completed(ctx context.Context, dirOf func(int64) string) ([]*Metadata, []string, error) {
	if err := r.checkOwner(ctx); err != nil {
		return nil, nil, err
	}
	_, ids, err := r.ids(ctx)
	if err != nil {
		return nil, nil, err
	}
	var read []*Metadata
	var warnings []string
	oldest := int64(-1) // the lowest owner epoch of a checkpoint
	for _, id := range ids {
		m, err := readMeta(ctx, r.store, metaKey(id))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Deleted since listed: not a checkpoint.
		case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrIncompatibleState):
			warnings = append(warnings, fmt.Sprintf("skipping checkpoint %d: %v", id, err))
		case err != nil:
			return nil, warnings, err
		default:
			m.Dir = dirOf(id)
			read = append(read, m)
			if oldest < 0 || m.Owner < oldest {
				oldest = m.Owner
			}
		}
	}
	if len(read) == 0 {
		return nil, warnings, nil
	}
	// Only the claims after the oldest owner of a checkpoint rule any out.
	cl, err := claimsIn(ctx, r.store, oldest)
	if err != nil {
		return nil, warnings, err
	}
	var out []*Metadata
	for _, m := range read {
		if cl.valid(m.ID, m.Owner) { // else written by a superseded owner after it was superseded
			out = append(out, m)
		}
	}
	return out, warnings, nil
}

// knownShared returns the shared objects in the store, listing them on
// first use. Called with mu held.
func (r *remote) knownSharedLocked(ctx context.Context) (map[string]bool, error) {
	if r.known != nil {
		return r.known, nil
	}
	objs, err := r.store.List(ctx, "shared/")
	if err != nil {
		return nil, err
	}
	r.known = make(map[string]bool, len(objs))
	for _, o := range objs {
		r.known[o.Key] = true
	}
	return r.known, nil
}

// upload puts the state files of checkpoint m (in m.Dir) that the store
// lacks, then its _metadata, create-if-absent: only then is it in the
// store. It returns the bytes it uploaded.
func (r *remote) upload(ctx context.Context, m *Metadata, data []byte) (int64, error) {
	r.mu.Lock()
	known, err := r.knownSharedLocked(ctx)
	if err != nil {
		r.mu.Unlock()
		return 0, err
	}
	var todo []fileJob
	for _, o := range m.Operators {
		for _, st := range o.Subtasks {
			if st.Dir == "" {
				continue
			}
			for _, f := range st.Files {
				key := sharedKey(st.Dir, f)
				if !known[key] {
					todo = append(todo, fileJob{key: key, local: filepath.Join(m.Dir, st.Dir, f.Name), sum: f})
					known[key] = true // one upload per key, even if listed twice
				}
			}
		}
	}
	r.mu.Unlock()
	n, err := putFiles(ctx, r.store, todo)
	if err != nil {
		r.mu.Lock()
		for _, j := range todo { // not known to be there: try again next time
			delete(r.known, j.key)
		}
		r.mu.Unlock()
		return n, err
	}
	// Fenced before the write: a superseded owner writes nothing more.
	if err := r.checkOwner(ctx); err != nil {
		return n, err
	}
	if err := r.store.PutIfAbsent(ctx, metaKey(m.ID), data); err != nil {
		if errors.Is(err, objstore.ErrExists) {
			if ferr := r.checkOwner(ctx); ferr != nil {
				return n, ferr
			}
			return n, fmt.Errorf("checkpoint %d of job %s: %w (%s): another process writes this job's checkpoints there",
				m.ID, m.Job, ErrCheckpointExists, r.store)
		}
		return n, err
	}
	// And after it: a claim made before this check may have restored
	// from an older checkpoint, so this one must not be committed. One
	// made after it listed this checkpoint (Claim lists after claiming),
	// and its owner resumes from it.
	if err := r.checkOwner(ctx); err != nil {
		return n, err
	}
	return n, nil
}

// prune deletes from the store every checkpoint older than newest that
// keep does not hold, and every shared object that no kept checkpoint
// lists.
func (r *remote) prune(ctx context.Context, newest int64, keep []*Metadata) error {
	all, _, err := r.ids(ctx)
	if err != nil {
		return err
	}
	kept := map[int64]bool{}
	used := map[string]bool{}
	for _, m := range keep {
		kept[m.ID] = true
		for _, o := range m.Operators {
			for _, st := range o.Subtasks {
				for _, f := range st.Files {
					used[sharedKey(st.Dir, f)] = true
				}
			}
		}
	}
	for _, id := range all {
		if id < newest && !kept[id] {
			if err := r.discard(ctx, id); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	objs, err := r.store.List(ctx, "shared/")
	if err != nil {
		return err
	}
	// Checked after the listing: an owner that claimed after this check
	// uploaded nothing that the listing holds.
	if err := r.checkOwnerLocked(ctx); err != nil {
		return err
	}
	var drop []string
	for _, o := range objs {
		if !used[o.Key] {
			drop = append(drop, o.Key)
		}
	}
	err = r.store.Delete(ctx, drop...)
	r.known = nil // listed again on the next upload
	return err
}

// discard deletes the objects of checkpoint id (its shared files stay
// until prune finds them unused).
func (r *remote) discard(ctx context.Context, id int64) error {
	objs, err := r.store.List(ctx, fmt.Sprintf("chk-%d/", id))
	if err != nil {
		return err
	}
	// A superseded owner deletes nothing: the id may be its successor's.
	if err := r.checkOwner(ctx); err != nil {
		return err
	}
	// _metadata first: a checkpoint half deleted is no checkpoint.
	var keys []string
	for _, o := range objs {
		if o.Key == metaKey(id) {
			keys = append([]string{o.Key}, keys...)
		} else {
			keys = append(keys, o.Key)
		}
	}
	return r.store.Delete(ctx, keys...)
}

// fileJob is one file to upload or download.
type fileJob struct {
	key, local string
	sum        FileSum
}

// each runs f over jobs, uploadParallelism at a time, and returns the
// first error.
func each(ctx context.Context, jobs []fileJob, f func(context.Context, fileJob) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan fileJob)
	errs := make(chan error, uploadParallelism)
	var wg sync.WaitGroup
	for range min(uploadParallelism, len(jobs)) {
		wg.Go(func() {
			for j := range ch {
				if err := f(ctx, j); err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
				}
			}
		})
	}
send:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break send
		}
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// putFiles uploads each job's local file to its key and returns the bytes
// uploaded.
func putFiles(ctx context.Context, store objstore.Store, jobs []fileJob) (int64, error) {
	var mu sync.Mutex
	var n int64
	err := each(ctx, jobs, func(ctx context.Context, j fileJob) error {
		f, err := os.Open(j.local)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := store.Put(ctx, j.key, f, j.sum.Size); err != nil {
			return err
		}
		mu.Lock()
		n += j.sum.Size
		mu.Unlock()
		return nil
	})
	return n, err
}

// getFiles downloads each job's object to its local file, verifying its
// size and CRC-32C; a local file that already has them is kept. The file
// is written beside its place and renamed into it, so a file hard-linked
// into another checkpoint is never written through.
func getFiles(ctx context.Context, store objstore.Store, jobs []fileJob) error {
	return each(ctx, jobs, func(ctx context.Context, j fileJob) error {
		if sumOf(j.local) == j.sum {
			return nil
		}
		fsys := fsutil.For(j.local)
		if err := fsys.MkdirAll(filepath.Dir(j.local), 0o755); err != nil {
			return err
		}
		rc, err := store.Get(ctx, j.key)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s/%s: %w", ErrDamagedFile, store, j.key, err)
		}
		if err != nil {
			return err
		}
		defer rc.Close()
		tmp := j.local + ".download"
		out, err := fsys.Create(tmp, false)
		if err != nil {
			return err
		}
		h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
		n, err := io.Copy(io.MultiWriter(out, h), rc)
		if err == nil {
			err = out.Sync()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if errors.Is(err, objstore.ErrCorrupt) {
			err = fmt.Errorf("%w: %s/%s: %w", ErrDamagedFile, store, j.key, err)
		}
		if err == nil && (n != j.sum.Size || h.Sum32() != j.sum.CRC32C) {
			err = fmt.Errorf("%w: %s/%s: %d bytes of CRC-32C %08x, its _metadata lists %d bytes of CRC-32C %08x",
				ErrDamagedFile, store, j.key, n, h.Sum32(), j.sum.Size, j.sum.CRC32C)
		}
		if err != nil {
			fsys.Remove(tmp)
			return err
		}
		return fsys.Rename(tmp, j.local)
	})
}

// sumOf is the FileSum of a local file named by its base name (the zero
// FileSum if it cannot be read).
func sumOf(p string) FileSum {
	f, err := os.Open(p)
	if err != nil {
		return FileSum{}
	}
	defer f.Close()
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	n, err := io.Copy(h, f)
	if err != nil {
		return FileSum{}
	}
	return FileSum{Name: filepath.Base(p), Size: n, CRC32C: h.Sum32()}
}

// fetch downloads the state files of m into m.Dir (keys named by keyOf)
// and writes m's _metadata there, making it a local checkpoint.
func fetch(ctx context.Context, store objstore.Store, m *Metadata, keyOf func(string, FileSum) string) error {
	var jobs []fileJob
	for _, o := range m.Operators {
		for _, st := range o.Subtasks {
			if st.Dir == "" {
				continue
			}
			for _, f := range st.Files {
				if f.Name == "" || filepath.Base(f.Name) != f.Name {
					return fmt.Errorf("%w: bad file name %q in the _metadata of checkpoint %d", ErrCorrupt, f.Name, m.ID)
				}
				jobs = append(jobs, fileJob{key: keyOf(st.Dir, f), local: filepath.Join(m.Dir, st.Dir, f.Name), sum: f})
			}
		}
	}
	if err := getFiles(ctx, store, jobs); err != nil {
		return fmt.Errorf("checkpoint %d of job %s: %w", m.ID, m.Job, err)
	}
	// A checkpoint of stateless subtasks only has no state files.
	if err := fsutil.For(m.Dir).MkdirAll(m.Dir, 0o755); err != nil {
		return err
	}
	return WriteMetadata(m.Dir, m)
}

// Fetch makes checkpoint m, listed by Completed from the object store,
// a local checkpoint in m.Dir: it downloads the state files that m.Dir
// lacks (or holds with another size or checksum), verifying each, and
// writes m's _metadata there. A missing or damaged object is an error
// wrapping ErrDamagedFile: fall back to an older checkpoint; a failure of
// the service, ErrUnreachable. Without an object store it does nothing.
func (s *Storage) Fetch(ctx context.Context, m *Metadata) error {
	if s.remote == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout(m))
	defer cancel()
	return unreachable(fetch(ctx, s.remote.store, m, sharedKey))
}

// fetchTimeout bounds the download of checkpoint m: remoteCallTimeout,
// plus a second per MiB of its state files (a stalled server fails a
// restore rather than hang it; a large state is not cut short).
func fetchTimeout(m *Metadata) time.Duration {
	var total int64
	for _, o := range m.Operators {
		for _, st := range o.Subtasks {
			for _, f := range st.Files {
				total += f.Size
			}
		}
	}
	return remoteCallTimeout + time.Duration(total>>20)*time.Second
}

// WriteSavepointTo writes completed checkpoint m as a self-contained
// savepoint under root, a local directory (WriteSavepoint) or an object
// store location (s3://bucket/prefix, reached with o), and returns its
// location. In an object store its files are put under
// savepoint-<job>-<id>-<ms>/ as on disk, and its _metadata last,
// create-if-absent; a failed savepoint's objects are deleted.
func WriteSavepointTo(ctx context.Context, m *Metadata, root string, o objstore.S3Options) (string, error) {
	if !objstore.IsRemote(root) {
		loc, err := objstore.ParseURI(root)
		if err != nil {
			return "", err
		}
		return WriteSavepoint(m, loc.Dir)
	}
	name := fmt.Sprintf("savepoint-%s-%d-%d", sanitize(m.Job), m.ID, m.Triggered.UnixMilli())
	uri := strings.TrimSuffix(root, "/") + "/" + name
	store, err := objstore.Open(ctx, uri, o)
	if err != nil {
		return "", err
	}
	var jobs []fileJob
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, f := range st.Files {
				jobs = append(jobs, fileJob{key: savepointKey(st.Dir, f), local: filepath.Join(m.Dir, st.Dir, f.Name), sum: f})
			}
		}
	}
	sp := *m
	sp.Savepoint = true
	sp.Version = metadataVersion
	data, err := encodeMetadata(&sp)
	if err == nil {
		_, err = putFiles(ctx, store, jobs)
	}
	if err == nil {
		err = store.PutIfAbsent(ctx, MetadataFile, data)
	}
	if err != nil {
		if objs, lerr := store.List(ctx, ""); lerr == nil {
			keys := make([]string, len(objs))
			for i, o := range objs {
				keys[i] = o.Key
			}
			_ = store.Delete(ctx, keys...)
		}
		return "", fmt.Errorf("savepoint %s: %w", uri, err)
	}
	return uri, nil
}

// LoadFrom reads the checkpoint or savepoint at path (its directory or
// its _metadata): a local one as Load does; one in an object store
// (s3://..., reached with o) is downloaded into a directory under
// workDir, every file verified, and its Metadata's Dir is that
// directory. A checkpoint is named by its chk-<n> directory in a job's
// checkpoint directory; anything else is read as a savepoint.
func LoadFrom(ctx context.Context, path string, o objstore.S3Options, workDir string) (*Metadata, error) {
	if !objstore.IsRemote(path) {
		loc, err := objstore.ParseURI(path)
		if err != nil {
			return nil, err
		}
		return Load(loc.Dir)
	}
	mctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
	defer cancel()
	uri := strings.TrimSuffix(strings.TrimSuffix(path, "/"+MetadataFile), "/")
	loc, err := objstore.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	base := loc.Prefix[strings.LastIndex(loc.Prefix, "/")+1:]
	if base == "" {
		return nil, fmt.Errorf("%w: %q names a bucket, not a checkpoint or savepoint", objstore.ErrBadURI, path)
	}
	var store objstore.Store
	metaKey, keyOf := MetadataFile, savepointKey
	if chkName.MatchString(base) {
		// A checkpoint: its files are in the job's shared/ beside it.
		if store, err = objstore.Open(mctx, strings.TrimSuffix(uri, "/"+base), o); err != nil {
			return nil, err
		}
		metaKey, keyOf = base+"/"+MetadataFile, sharedKey
	} else if store, err = objstore.Open(mctx, uri, o); err != nil {
		return nil, err
	}
	m, err := readMeta(mctx, store, metaKey)
	if err != nil {
		return nil, err
	}
	m.Dir = filepath.Join(workDir, base)
	fctx, fcancel := context.WithTimeout(ctx, fetchTimeout(m))
	defer fcancel()
	if err := fetch(fctx, store, m, keyOf); err != nil {
		return nil, err
	}
	return m, nil
}

// encodeForStore encodes m as WriteMetadata writes it.
func encodeForStore(m *Metadata) ([]byte, error) {
	m.Version = metadataVersion
	return encodeMetadata(m)
}

// IsRemote reports whether a checkpoint or savepoint location names an
// object store (s3://...) rather than a local directory.
func IsRemote(location string) bool { return objstore.IsRemote(location) }

// OpenStorage returns the storage of the checkpoints of the job whose
// folder is folder, as o.Dir says: "" keeps them in localDir (the job's
// folder in the data directory), a local path or file:// URI in its
// folder there; an object store location keeps them in its folder there,
// with localDir as the working copy.
func OpenStorage(ctx context.Context, o Options, localDir, folder string) (*Storage, error) {
	if o.Dir == "" {
		return NewStorage(localDir), nil
	}
	if !objstore.IsRemote(o.Dir) {
		loc, err := objstore.ParseURI(o.Dir)
		if err != nil {
			return nil, err
		}
		return NewStorage(filepath.Join(loc.Dir, folder)), nil
	}
	store, err := objstore.Open(ctx, strings.TrimSuffix(o.Dir, "/")+"/"+folder, o.S3)
	if err != nil {
		return nil, err
	}
	return NewRemoteStorage(localDir, store), nil
}

// Clear deletes every checkpoint of the storage: its directory, and its
// objects in the object store. The owners' claims (Claim) go too when this
// process holds the newest (a stopped job's cleanup); without a claim of
// its own (--fresh, before the job claims) they stay, so that the next
// claim still supersedes an earlier owner that may be running. A
// superseded owner deletes nothing there (ErrFenced).
func (s *Storage) Clear() error {
	err := fsutil.For(s.dir).RemoveAll(s.dir)
	if s.remote != nil {
		ctx, cancel := context.WithTimeout(context.Background(), remoteCallTimeout)
		defer cancel()
		objs, lerr := s.remote.store.List(ctx, "")
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		// A superseded owner leaves the bucket to its successor.
		if ferr := s.remote.checkOwner(ctx); ferr != nil {
			return errors.Join(err, ferr)
		}
		// _metadata objects first: a checkpoint half deleted is none.
		sort.SliceStable(objs, func(i, j int) bool {
			return path.Base(objs[i].Key) == MetadataFile && path.Base(objs[j].Key) != MetadataFile
		})
		claimed := s.Owner().Epoch > 0
		var keys []string
		for _, o := range objs {
			if claimed || !strings.HasPrefix(o.Key, "owner/") {
				keys = append(keys, o.Key)
			}
		}
		err = errors.Join(err, s.remote.store.Delete(ctx, keys...))
		s.remote.mu.Lock()
		s.remote.known = nil
		s.remote.mu.Unlock()
	}
	return err
}

// RemoteUnder reports whether the object store location path lies under
// the location dir: the same bucket, and dir's prefix a leading run of
// the elements of path's (s3:// and s3a:// are one scheme). A location
// objstore.ParseURI refuses (a prefix with a ".." element) is an error.
func RemoteUnder(path, dir string) (bool, error) {
	p, err := objstore.ParseURI(path)
	if err != nil {
		return false, err
	}
	d, err := objstore.ParseURI(dir)
	if err != nil {
		return false, err
	}
	if p.Scheme != "s3" || d.Scheme != "s3" || p.Bucket != d.Bucket {
		return false, nil
	}
	return d.Prefix == "" || p.Prefix == d.Prefix || strings.HasPrefix(p.Prefix, d.Prefix+"/"), nil
}
