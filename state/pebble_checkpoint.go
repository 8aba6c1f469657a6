package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Checkpoint writes a Pebble checkpoint of everything applied so far into
// dir, which must not exist. The memtable is flushed first: with the WAL
// off, a Pebble checkpoint holds only sstables, so anything still in the
// memtable would be missing from it. The sstables are hard links to the
// store's own immutable files, so IncrementalSize counts only the files
// that are not the same files as in the previous checkpoint of this store
// (or, right after a Restore by hard links, the checkpoint restored from),
// plus the small MANIFEST, OPTIONS and marker files copied each time.
func (s *PebbleStore) Checkpoint(dir string) (CheckpointInfo, error) {
	if err := s.land(true); err != nil {
		return CheckpointInfo{}, err
	}
	if err := s.usable(); err != nil {
		return CheckpointInfo{}, err
	}
	var info CheckpointInfo
	var files map[string]sharedFile
	// Both the flush and the checkpoint may block on the disk (Pebble
	// retries a flush it cannot write for ever): they run so that the
	// store's failure (the flush's write error) or Abort ends the wait.
	err := s.call(func() error {
		var err error
		info, files, err = s.writeCheckpoint(dir, s.dirty, s.prevFiles)
		return err
	})
	if err != nil {
		return CheckpointInfo{}, err
	}
	s.dirty, s.prevFiles = false, files
	return info, nil
}

// StartCheckpoint takes the synchronous part of a checkpoint into dir
// (AsyncCheckpointer): it runs write, whose writes (the operator's
// write-back) are queued rather than committed, and returns. Another
// goroutine then commits them, flushes the memtable and writes the
// checkpoint's files and checksums. Meanwhile new writes are held in an
// indexed batch that reads see over the instance, so that none reaches
// the instance before the checkpoint has its files, and reads wait until
// the queued writes are committed. The held writes are applied at the
// first use of the store after the checkpoint ended (a later checkpoint
// or Close waits for it). wait may be called from any goroutine, once;
// it returns early with the store's failure if the store fails or is
// aborted. If write fails, what it queued is committed and its error
// returned, with no checkpoint started.
func (s *PebbleStore) StartCheckpoint(dir string, write func() error) (wait func() (CheckpointInfo, error), err error) {
	if err := s.land(true); err != nil {
		return nil, err
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	s.deferring = true
	err = write()
	s.deferring = false
	if err != nil {
		if qerr := s.commitQueue(); qerr != nil {
			return nil, qerr
		}
		return nil, err
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	a := &asyncCheckpoint{done: make(chan struct{}), applied: make(chan struct{}), published: make(chan struct{}), queue: s.queue,
		filter: newWriteBackFilter(s.queue), heldKeys: newFilterBits(heldFilterBits)}
	s.queue = nil
	flush, prev := s.dirty || len(a.queue) > 0, s.prevFiles
	go func() {
		defer close(a.done)
		defer func() {
			if r := recover(); r != nil {
				a.err = fmt.Errorf("state: pebble store %s: %v", s.dir, r)
			}
		}()
		defer a.endPublish()
		publish := func(runs []*WriteBatch) {
			if len(a.filter.ranges) == 0 {
				a.runs.Store(&runs)
			}
			a.endPublish()
		}
		a.err = s.commitWrites(a.queue, publish)
		a.endPublish()
		if a.err != nil {
			return
		}
		a.queue = nil
		// The reads go to the store from here on: the sorted runs are
		// garbage once the readers that hold them are done.
		a.runs.Store(nil)
		close(a.applied)
		a.info, a.files, a.err = s.writeCheckpoint(dir, flush, prev)
	}()
	s.async, s.held, s.dirty = a, s.db.NewIndexedBatch(), false
	fault := s.fault
	return func() (CheckpointInfo, error) {
		select {
		case <-a.done:
		case <-fault.failed:
			return CheckpointInfo{}, fault.failure()
		}
		if err := fault.failure(); err != nil {
			return CheckpointInfo{}, err
		}
		return a.info, a.err
	}, nil
}

// asyncCheckpoint is a checkpoint being written on another goroutine
// (StartCheckpoint): applied is closed once its queued writes are
// committed, done once info, files and err are set; filter tells the
// keys the queued writes cannot change.
type asyncCheckpoint struct {
	done, applied chan struct{}
	queue         []queuedWrite
	filter        *writeBackFilter
	// runs are the write-back's batches in key order (sortedRun), once
	// its goroutine has made them, when the write-back is ingested and
	// holds no range deletion: the keys it may change are read from them
	// until it is committed. heldKeys tells the keys written since the
	// barrier (the held batch), which hide the runs' and are read after
	// the write-back is committed.
	runs     atomic.Pointer[[]*WriteBatch]
	heldKeys *writeBackFilter
	// published is closed once runs are set, or once they will not be
	// (the write-back is not ingested whole, or has ended).
	published   chan struct{}
	publishOnce sync.Once
	info        CheckpointInfo
	files       map[string]sharedFile
	err         error
}

// endPublish closes published, once.
func (a *asyncCheckpoint) endPublish() { a.publishOnce.Do(func() { close(a.published) }) }

// commitWrites commits queued writes in order, without syncing, and
// drops each from q once committed, so that its memory is freed while the
// rest commit. A run of batches between range deletions that holds at
// least Options.IngestMinOps operations (a write-back of many groups) is written
// as sstables and ingested (ingestBatches) rather than inserted into the
// memtable. It touches no field of s that the store's goroutine writes,
// so that it may run on a checkpoint's goroutine.
//
// publish, if not nil, is given the sorted runs of an ingested run of
// batches that is all of q, before their merge.
func (s *PebbleStore) commitWrites(q []queuedWrite, publish func([]*WriteBatch)) error {
	for i := 0; i < len(q); {
		if q[i].batch == nil {
			lo, hi := q[i].lo, q[i].hi
			q[i] = queuedWrite{}
			i++
			if err := s.checkCommit(s.db.DeleteRange(lo, hi, pebble.NoSync)); err != nil {
				return err
			}
			continue
		}
		j, ops := i, 0
		for ; j < len(q) && q[j].batch != nil; j++ {
			ops += q[j].batch.Len()
		}
		if min := s.opts.IngestMinOps; min > 0 && ops >= min {
			if i > 0 || j < len(q) {
				publish = nil
			}
			if err := s.checkCommit(s.ingestBatches(q[i:j], publish)); err != nil {
				return err
			}
			i = j
			continue
		}
		for ; i < j; i++ {
			w := q[i]
			q[i] = queuedWrite{}
			pb := s.db.NewBatch()
			err := fillBatch(pb, w.batch)
			if err == nil {
				err = pb.Commit(pebble.NoSync)
			}
			_ = pb.Close()
			if err := s.checkCommit(err); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCommit returns the store's failure, else err of a commit, wrapped.
func (s *PebbleStore) checkCommit(err error) error {
	if herr := s.healthy(); herr != nil {
		return herr
	}
	if err != nil {
		return fmt.Errorf("state: pebble store %s: %w", s.dir, err)
	}
	return nil
}

// ingestBatches writes the operations of q's batches, in key order, the
// later of two on one key winning, into sstables that the store ingests,
// and drops each batch from q once written. Each batch is first copied in
// its own key order (sortedRun), so that the merge of the copies reads
// each one front to back: a write-back of a million groups spans a
// hundred megabytes, which reads in key order across all batches at once
// would visit at random, a cache and TLB miss each.
func (s *PebbleStore) ingestBatches(q []queuedWrite, publish func([]*WriteBatch)) error {
	runs := make([]runCursor, 0, len(q))
	sorted := make([]*WriteBatch, 0, len(q))
	for i := range q {
		r := q[i].batch.sortedRun()
		q[i] = queuedWrite{}
		if r.Len() > 0 {
			runs = append(runs, runCursor{b: r, run: i})
			sorted = append(sorted, r)
		}
	}
	if publish != nil {
		publish(sorted)
	}
	t := s.newTableWriter("writeback")
	defer t.Discard()
	m := newRunMerge(runs)
	var k []byte
	for b, op, ok := m.next(); ok; b, op, ok = m.next() {
		k = append(binary.BigEndian.AppendUint16(k[:0], uint16(op.kg)), b.key(op)...)
		var err error
		if op.del {
			err = t.Delete(k)
		} else {
			err = t.Set(k, b.value(op))
		}
		if err != nil {
			return err
		}
	}
	return t.Ingest()
}

// commitQueue commits the writes queued by StartCheckpoint's write
// function now, on the store's goroutine: a read inside write, or write's
// failure.
func (s *PebbleStore) commitQueue() error {
	if len(s.queue) == 0 {
		return nil
	}
	q := s.queue
	s.queue = nil
	if err := s.call(func() error { return s.commitWrites(q, nil) }); err != nil {
		return err
	}
	s.dirty = true
	return nil
}

// readableKey prepares the store for a read of key (a store key): as
// readable, but a key the asynchronous checkpoint's queued writes cannot
// change (its writeBackFilter) is read at once.
func (s *PebbleStore) readableKey(key []byte) error {
	if a := s.async; a != nil && !s.deferring && !a.filter.mayHold(key) {
		return nil
	}
	return s.readable()
}

// writeBackKeys reports whether the running asynchronous checkpoint's
// queued writes are not committed yet (pending) and returns the indexes
// of the keys of a GetSorted they may change, in order.
func (s *PebbleStore) writeBackKeys(kgs []int, keys [][]byte) (late []int, pending bool) {
	a := s.async
	if a == nil || s.deferring {
		return nil, false
	}
	select {
	case <-a.applied:
		return nil, false
	default:
	}
	for i := range keys {
		if a.filter.mayHold(s.key(kgs[i], keys[i])) {
			late = append(late, i)
		}
	}
	return late, true
}

// heldFilterBits is the size of the filter of the keys written during an
// asynchronous checkpoint (asyncCheckpoint.heldKeys): 8 Mi bits (1 MiB),
// about 1% false positives at 800K keys.
const heldFilterBits = 8 << 20

// readWriteBack reads key of key group kg (k: the store key) while the
// running asynchronous checkpoint's write-back, which may change it, is
// not committed: from the write-back's sorted runs, else (the filter's
// false positive) as any other read, from the held writes over the
// instance. ok is false if it cannot: the runs are not made yet, or the
// write-back has range deletions, or it holds the key and the key may
// have been written again since the barrier; the caller waits
// (readable). value is valid until the write-back is committed, or the
// next write.
func (s *PebbleStore) readWriteBack(kg int, key, k []byte) (value []byte, found, ok bool, err error) {
	a := s.async
	rp := a.runs.Load()
	if rp == nil {
		// The runs are being made: wait for them (a fraction of the
		// write-back's commit) rather than for the whole commit.
		select {
		case <-a.published:
		case <-s.fault.failed:
			return nil, false, false, s.fault.failure()
		}
		rp = a.runs.Load()
	}
	if rp == nil {
		return nil, false, false, nil
	}
	if v, deleted, in := lookupRuns(*rp, kg, key); in {
		if a.heldKeys.mayHold(k) {
			return nil, false, false, nil
		}
		return v, !deleted, true, nil
	}
	v, closer, err := s.reader().Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, true, nil
	}
	if err != nil {
		return nil, false, false, s.readErr(err)
	}
	v = append([]byte(nil), v...)
	_ = closer.Close()
	return v, true, true, nil
}

// pendingWriteBack returns the running asynchronous checkpoint whose
// queued writes may change key k and are not committed yet, or nil.
func (s *PebbleStore) pendingWriteBack(k []byte) *asyncCheckpoint {
	a := s.async
	if a == nil || s.deferring || !a.filter.mayHold(k) {
		return nil
	}
	select {
	case <-a.applied:
		return nil
	default:
		return a
	}
}

// readable prepares the store for a read: the writes queued inside
// StartCheckpoint's write function are committed, and those an
// asynchronous checkpoint commits have been (the read waits for them);
// a checkpoint that ended is landed.
func (s *PebbleStore) readable() error {
	if s.deferring {
		return s.commitQueue()
	}
	a := s.async
	if a == nil {
		return nil
	}
	select {
	case <-a.applied:
	case <-a.done:
	case <-s.fault.failed:
		return s.fault.failure()
	}
	return s.land(false)
}

// land ends the store's asynchronous checkpoint, if any, once it ended
// (wait: waiting for it; else only if it has): it applies the writes held
// meanwhile to the instance and keeps the checkpoint's files for the next
// one to share. A checkpoint whose queued writes failed to commit fails
// the store: they are lost to it.
func (s *PebbleStore) land(wait bool) error {
	a := s.async
	if a == nil {
		return nil
	}
	if wait {
		select {
		case <-a.done:
		case <-s.fault.failed:
			return s.fault.failure()
		}
	} else {
		select {
		case <-a.done:
		default:
			return nil
		}
	}
	held := s.held
	s.async, s.held = nil, nil
	if a.queue != nil {
		_ = held.Close()
		s.fault.fail(fmt.Errorf("the write-back of a checkpoint failed: %w", a.err), true)
		return s.fault.failure()
	}
	if a.err == nil {
		s.prevFiles = a.files
	}
	if held.Empty() {
		_ = held.Close()
		return nil
	}
	if err := s.call(func() error { defer held.Close(); return held.Commit(pebble.NoSync) }); err != nil {
		if errors.Is(err, ErrFailed) {
			return err
		}
		return fmt.Errorf("state: pebble store %s: %w", s.dir, err)
	}
	s.dirty = true
	return nil
}

// writeCheckpoint flushes the memtable (flush: it holds writes) and
// writes the checkpoint into dir; prev are the previous checkpoint's
// files (checkpointSizes). It touches no field of s that its goroutine
// owns, so that it may run on another (StartCheckpoint).
func (s *PebbleStore) writeCheckpoint(dir string, flush bool, prev map[string]sharedFile) (CheckpointInfo, map[string]sharedFile, error) {
	if flush {
		flushed, err := s.db.AsyncFlush()
		if err == nil {
			<-flushed
		}
		if err := s.healthy(); err != nil {
			return CheckpointInfo{}, nil, err
		}
		if err != nil {
			return CheckpointInfo{}, nil, fmt.Errorf("state: flush pebble store %s: %w", s.dir, err)
		}
	}
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		if herr := s.healthy(); herr != nil {
			return CheckpointInfo{}, nil, herr
		}
		return CheckpointInfo{}, nil, fmt.Errorf("state: checkpoint pebble store %s into %s: %w", s.dir, dir, err)
	}
	if err := s.healthy(); err != nil {
		// Found while flushing: the checkpoint may hold the damaged file.
		_ = os.RemoveAll(dir)
		return CheckpointInfo{}, nil, err
	}
	return checkpointSizes(dir, prev)
}

// isImmutablePebbleFile reports whether Pebble never changes the named file
// after creating it, so that checkpoints and stores may share it by hard
// links. Everything else (MANIFEST, OPTIONS, markers) is copied.
func isImmutablePebbleFile(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// sharedFile is an immutable file of a checkpoint, which the next one may
// share by a hard link, and its checksum (Name "" until computed).
type sharedFile struct {
	fi  os.FileInfo
	sum FileSum
}

// checkpointSizes sums the sizes of the files in dir and of those that are
// not the same files (by name and inode) as in prev, and computes the
// checksum of every file, reusing prev's for the files it shares; it
// returns the immutable files of dir for the next call.
func checkpointSizes(dir string, prev map[string]sharedFile) (CheckpointInfo, map[string]sharedFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return CheckpointInfo{}, nil, err
	}
	var info CheckpointInfo
	files := make(map[string]sharedFile)
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return CheckpointInfo{}, nil, fmt.Errorf("state: checkpoint %s: unexpected non-regular file %s", dir, e.Name())
		}
		fi, err := e.Info()
		if err != nil {
			return CheckpointInfo{}, nil, err
		}
		info.Size += fi.Size()
		shared := false
		var sum FileSum
		if p, ok := prev[e.Name()]; ok && os.SameFile(p.fi, fi) {
			shared = true
			sum = p.sum
		}
		if sum.Name == "" {
			if sum, err = sumFile(filepath.Join(dir, e.Name()), e.Name()); err != nil {
				return CheckpointInfo{}, nil, err
			}
		}
		info.Files = append(info.Files, sum)
		if isImmutablePebbleFile(e.Name()) {
			files[e.Name()] = sharedFile{fi: fi, sum: sum}
			if shared {
				continue
			}
		}
		info.IncrementalSize += fi.Size()
	}
	sortSums(info.Files)
	return info, files, nil
}

// Restore creates a store in dir holding the entries of the checkpoints in
// from whose key group lies in [kgStart, kgEnd]. dir must be absent, empty
// or hold only a crashed run's Pebble files (see Open). The checkpoints
// are only read: their files are never modified or deleted, and several
// Restores may read the same checkpoint at once. A checkpoint directory
// that is missing or cannot be read back gives an error wrapping
// ErrCorrupt that names it.
//
// With one checkpoint, it is first read through (unless
// Options.SkipRestoreVerification), then its files are hard-linked into dir
// (copied across filesystems) and opened there; if it holds key groups outside the range
// (the job was scaled up), those are dropped with range deletions, which
// Pebble's compactions later reclaim. With several checkpoints (the job
// was scaled down), the entries in range are copied into a new store in
// batches of RestoreBatchBytes. Entries of one key group are expected in
// one checkpoint only; otherwise the later one in from wins. A checkpoint
// in the canonical format (WriteCanonical: a savepoint, or the hashmap
// backend's checkpoint) is read through and its entries in range are
// written into sstables that the new store ingests.
func (b PebbleBackend) Restore(dir string, from []string, kgStart, kgEnd int) (Store, error) {
	if kgStart < 0 || kgEnd >= maxKeyGroups || kgStart > kgEnd {
		return nil, fmt.Errorf("state: restore key groups [%d, %d] out of range [0, %d)", kgStart, kgEnd, maxKeyGroups)
	}
	if err := prepareWorkingDir(dir); err != nil {
		return nil, err
	}
	var s *PebbleStore
	var err error
	if canonical := slices.ContainsFunc(from, IsCanonical); canonical {
		s, err = b.restoreFromCanonical(dir, from, kgStart, kgEnd)
	} else if len(from) == 1 {
		s, err = b.restoreLinked(dir, from[0], kgStart, kgEnd)
	} else {
		s, err = b.restoreCopied(dir, from, kgStart, kgEnd)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// restoreLinked restores one checkpoint by hard links, then deletes the key
// groups outside [kgStart, kgEnd].
func (b PebbleBackend) restoreLinked(dir, src string, kgStart, kgEnd int) (*PebbleStore, error) {
	first, last, err := checkpointBounds(src, b.Options)
	if err != nil {
		return nil, err
	}
	linked, err := linkCheckpoint(src, dir)
	if err != nil {
		return nil, err
	}
	s, err := openPebbleStore(dir, b.Options)
	if err != nil {
		return nil, corruptCheckpointErr(src)(err)
	}
	s.prevFiles = linked
	if first == nil {
		return s, nil
	}
	// Drop [first, start of kgStart) and [start of kgEnd+1, last]; the bounds
	// are the checkpoint's own first and last keys, so no key group value
	// needs an "infinite" key.
	pb := s.db.NewBatch()
	defer pb.Close()
	if lo := kgPrefix(kgStart); string(first) < string(lo) {
		if err := pb.DeleteRange(first, lo, nil); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	if hi := kgPrefix(kgEnd + 1); hi != nil && string(last) >= string(hi) {
		if err := pb.DeleteRange(hi, last, nil); err != nil {
			_ = s.Close()
			return nil, err
		}
		if err := pb.Delete(last, nil); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	if pb.Empty() {
		return s, nil
	}
	if err := pb.Commit(pebble.NoSync); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("state: restore pebble store %s: %w", dir, err)
	}
	s.dirty = true
	return s, nil
}

// restoreFromCanonical restores checkpoints of which one or more are in
// the canonical format: each canonical one is ingested into a new store
// (restoreCanonical), each Pebble one copied as by restoreCopied.
func (b PebbleBackend) restoreFromCanonical(dir string, from []string, kgStart, kgEnd int) (*PebbleStore, error) {
	s, err := openPebbleStore(dir, b.Options)
	if err != nil {
		return nil, err
	}
	for _, src := range from {
		if IsCanonical(src) {
			err = s.restoreCanonical(src, kgStart, kgEnd)
		} else {
			err = s.copyFrom(src, kgStart, kgEnd)
		}
		if err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// restoreCopied copies the entries in [kgStart, kgEnd] of each checkpoint
// into a new store in dir.
func (b PebbleBackend) restoreCopied(dir string, from []string, kgStart, kgEnd int) (*PebbleStore, error) {
	s, err := openPebbleStore(dir, b.Options)
	if err != nil {
		return nil, err
	}
	for _, src := range from {
		if err := s.copyFrom(src, kgStart, kgEnd); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *PebbleStore) copyFrom(src string, kgStart, kgEnd int) error {
	db, err := openCheckpoint(src, s.opts)
	if err != nil {
		return err
	}
	defer db.Close()
	pb := s.db.NewBatch()
	defer func() { pb.Close() }()
	commit := func() error {
		if pb.Empty() {
			return nil
		}
		if err := pb.Commit(pebble.NoSync); err != nil {
			return fmt.Errorf("state: restore pebble store %s: %w", s.dir, err)
		}
		s.dirty = true
		pb.Reset()
		return nil
	}
	err = iterPebble(db, kgPrefix(kgStart), kgPrefix(kgEnd+1), func(k, v []byte) error {
		if err := pb.Set(k, v, nil); err != nil {
			return err
		}
		if pb.Len() >= s.opts.RestoreBatchBytes {
			return commit()
		}
		return nil
	}, corruptCheckpointErr(src))
	if err != nil {
		return err
	}
	return commit()
}

// iterPebble calls fn with the raw keys and values of db in [lower, upper)
// (nil: unbounded); wrapErr turns read errors into the caller's.
func iterPebble(db pebble.Reader, lower, upper []byte, fn func(key, value []byte) error, wrapErr func(error) error) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return wrapErr(err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) < 2 {
			_ = it.Close()
			return wrapErr(fmt.Errorf("%w: key %x has no key group", pebble.ErrCorruption, k))
		}
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return wrapErr(err)
		}
		if err := fn(k, v); err != nil {
			_ = it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return wrapErr(err)
	}
	return nil
}

func corruptCheckpointErr(dir string) func(error) error {
	return func(err error) error {
		return fmt.Errorf("%w: checkpoint %s: %w", ErrCorrupt, dir, pebbleError(err))
	}
}

// openCheckpoint opens the checkpoint in dir read-only. It takes no lock
// and writes nothing there (a Pebble LOCK file would stop two restores
// from reading one checkpoint at once).
func openCheckpoint(dir string, o PebbleOptions) (*pebble.DB, error) {
	o.EnsureDefaults()
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: checkpoint %s: %w", ErrCorrupt, dir, err)
	}
	db, err := pebble.Open(dir, &pebble.Options{
		ReadOnly:         true,
		ErrorIfNotExists: true,
		FS:               noLockFS{vfs.Default},
		CacheSize:        o.BlockCacheSize,
		MaxOpenFiles:     o.MaxOpenFiles,
		Logger:           o.Logger,
		EventListener:    newPebbleEvents(o.Logger).listener(),
	})
	if err != nil {
		return nil, corruptCheckpointErr(dir)(err)
	}
	return db, nil
}

// checkpointBounds returns the first and last keys of the checkpoint in
// dir (nil if it is empty). Unless o.SkipRestoreVerification, it reads the
// checkpoint through (checking every block's checksum), so that a damaged
// sstable is found now rather than by the restored store.
func checkpointBounds(dir string, o PebbleOptions) (first, last []byte, err error) {
	db, err := openCheckpoint(dir, o)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	if o.SkipRestoreVerification {
		it, err := db.NewIter(nil)
		if err != nil {
			return nil, nil, corruptCheckpointErr(dir)(err)
		}
		if it.First() {
			first = append([]byte(nil), it.Key()...)
		}
		if it.Last() {
			last = append([]byte(nil), it.Key()...)
		}
		if err := it.Close(); err != nil {
			return nil, nil, corruptCheckpointErr(dir)(err)
		}
		return first, last, nil
	}
	err = iterPebble(db, nil, nil, func(k, _ []byte) error {
		if first == nil {
			first = append([]byte(nil), k...)
		}
		last = append(last[:0], k...)
		return nil
	}, corruptCheckpointErr(dir))
	if err != nil {
		return nil, nil, err
	}
	return first, last, nil
}

// linkCheckpoint puts the files of the checkpoint in src into dst: hard
// links for immutable files (copies across filesystems), copies for the
// rest, which the store opened in dst will modify. It returns the linked
// files of src, by name.
func linkCheckpoint(src, dst string) (map[string]sharedFile, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint %s: %w", ErrCorrupt, src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	linked := make(map[string]sharedFile)
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || name == "LOCK" {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if isImmutablePebbleFile(name) {
			if err := os.Link(from, to); err == nil {
				fi, err := os.Stat(from)
				if err != nil {
					return nil, err
				}
				linked[name] = sharedFile{fi: fi}
				continue
			}
		}
		if err := copyFile(from, to); err != nil {
			return nil, err
		}
	}
	return linked, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// noLockFS is the filesystem with a Lock that does nothing, for read-only
// opens of checkpoints.
type noLockFS struct{ vfs.FS }

func (noLockFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
