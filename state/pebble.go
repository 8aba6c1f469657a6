package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// PebbleOptions tunes the Pebble instances of a PebbleBackend. Zero fields
// take the defaults of EnsureDefaults, chosen for a small machine (2 cores)
// running one Pebble instance per stateful operator subtask.
type PebbleOptions struct {
	// MemTableSize is the largest size of one memtable, in bytes. Pebble
	// starts with a 256 KiB memtable and doubles it up to this size, so a
	// store with little state uses little memory. Default 16 MiB: on a
	// 2-core machine, blind puts of 16-byte keys in batches of 1000 ran at
	// 710K/s with 16 MiB, 590K/s with 32 MiB and 500K/s with 64 MiB (the
	// skiplist's cache misses grow with its size), and the memtables of
	// all stateful subtasks add up.
	MemTableSize uint64
	// MemTableStopWritesThreshold is the number of memtables (the mutable
	// one plus those queued for flushing) at which Apply stalls until a
	// flush finishes. Default 4.
	MemTableStopWritesThreshold int
	// BlockCacheSize is the size of each store's block cache, in bytes.
	// Default 16 MiB. Unused when Cache is set.
	BlockCacheSize int64
	// Cache is a block cache shared by the stores (ManagedMemory's); nil:
	// each store has one of BlockCacheSize.
	Cache *pebble.Cache
	// MaxConcurrentCompactions bounds the background compactions of one
	// store. Default 1.
	MaxConcurrentCompactions int
	// L0CompactionThreshold is the L0 read amplification that triggers a
	// compaction; L0StopWritesThreshold the one at which writes stall.
	// Defaults 4 and 20.
	L0CompactionThreshold, L0StopWritesThreshold int
	// MaxOpenFiles bounds the open files (sstables and blob files) of one
	// store. Default 1000, Pebble's own: a store read at random past its
	// cache (a group-by over 20M keys) holds a few hundred files, and a
	// bound below that closes and reopens a file on most reads (a fifth
	// of the CPU of that group-by went to opening files at 256).
	MaxOpenFiles int
	// SeparateValuesFrom is the least size of a value that Pebble keeps
	// in a blob file beside the sstables instead of inside them (value
	// separation), so that compactions move its key and a reference, not
	// the value: a join's or a window's stored rows, not a group's
	// accumulators, which are smaller. A store that only grows (a regular
	// join keeping every row) spends most of its CPU in compactions, each
	// of which rewrites every entry it reads; with the rows' values apart
	// they rewrite little more than the keys (Nexmark q7 over 50M events
	// took a fifth less CPU, bench/STATE.md). Default 64 bytes; -1 keeps
	// every value in the sstables.
	SeparateValuesFrom int
	// IngestMinOps is the least number of operations of a checkpoint's
	// write-back (the batches an operator applies inside
	// StartCheckpoint's write function between two range deletions) that
	// are written as sstables and ingested, rather than inserted into
	// the memtable and flushed with it. A write-back of a million groups
	// took 1.2 CPU s so against 2.2-2.4 through the memtable
	// (BenchmarkPebbleWriteBack). Default 65536; -1: never.
	IngestMinOps int
	// RestoreBatchBytes is the size of the batches that copy entries into a
	// store when Restore cannot reuse a checkpoint's files. Default 4 MiB.
	RestoreBatchBytes int
	// SkipRestoreVerification makes Restore from a single checkpoint read
	// only its first and last keys instead of all of it. Pebble then still
	// checks, on open, that every sstable is there with its size, but a
	// damaged block is found only when read, as an error of Get or Scan
	// (wrapping ErrCorrupt) instead of Restore. Reading through costs about
	// as much as reading the files once: about 3 s per GB of checkpoint on
	// a 2-core machine, against milliseconds for the hard links alone.
	SkipRestoreVerification bool
	// Logger receives Pebble's log messages. Default: errors go to the
	// standard library's log package, informational messages are dropped,
	// and Fatalf panics (Pebble expects it not to return) in the goroutine
	// that met the error, so that it fails that store's job, not the
	// process. A Logger given here must not return from Fatalf either.
	Logger pebble.Logger
	// FS is the filesystem under the stores' working directories and
	// checkpoints (default vfs.Default); tests inject faults with it.
	FS vfs.FS
}

// EnsureDefaults fills zero fields with their defaults.
func (o *PebbleOptions) EnsureDefaults() {
	if o.MemTableSize == 0 {
		o.MemTableSize = 16 << 20
	}
	if o.MemTableStopWritesThreshold <= 0 {
		o.MemTableStopWritesThreshold = 4
	}
	if o.BlockCacheSize <= 0 {
		o.BlockCacheSize = 16 << 20
	}
	if o.MaxConcurrentCompactions <= 0 {
		o.MaxConcurrentCompactions = 1
	}
	if o.SeparateValuesFrom == 0 {
		o.SeparateValuesFrom = 64
	}
	if o.L0CompactionThreshold <= 0 {
		o.L0CompactionThreshold = 4
	}
	if o.L0StopWritesThreshold <= 0 {
		o.L0StopWritesThreshold = 20
	}
	if o.MaxOpenFiles <= 0 {
		o.MaxOpenFiles = 1000
	}
	if o.IngestMinOps == 0 {
		o.IngestMinOps = 64 << 10
	}
	if o.RestoreBatchBytes <= 0 {
		o.RestoreBatchBytes = 4 << 20
	}
	if o.Logger == nil {
		o.Logger = quietLogger{}
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
}

// PebbleFormatMajorVersion is the on-disk format of every Pebble store and
// checkpoint this build writes. It is pinned, not pebble.FormatNewest, so
// that upgrading the Pebble dependency never changes the format of the
// checkpoints and savepoints a job writes.
//
// To ratchet it (on purpose, to use a feature of a newer format): bump it
// here to the next version, and keep TestPebbleRatchetFormat passing with
// pebbleFormatPrevious set to the version it replaces: a store restored
// from a checkpoint written at the previous version must open, hold the
// same entries, and be at the new version (Pebble ratchets the restored
// working copy on open; the checkpoint's own files are never modified).
// Once a format is no longer read by the Pebble dependency
// (pebble.FormatMinSupported), savepoints written at it cannot be restored:
// say so in the release notes.
const PebbleFormatMajorVersion = pebble.FormatValueSeparation

// pebbleOptions returns the Pebble options of a store's working instance,
// whose files go through the store's faultFS (pebble_fault.go) and, above
// it, Pebble's disk health checks (DiskSlow events).
func (o PebbleOptions) pebbleOptions(events *pebbleEvents) *pebble.Options {
	o.EnsureDefaults()
	maxCompactions := o.MaxConcurrentCompactions
	po := &pebble.Options{
		// Durability comes from checkpoints only: everything applied after
		// the last one is replayed from the sources on restore.
		DisableWAL:                  true,
		FormatMajorVersion:          PebbleFormatMajorVersion,
		MemTableSize:                o.MemTableSize,
		MemTableStopWritesThreshold: o.MemTableStopWritesThreshold,
		CacheSize:                   o.BlockCacheSize,
		Cache:                       o.Cache,
		L0CompactionThreshold:       o.L0CompactionThreshold,
		L0StopWritesThreshold:       o.L0StopWritesThreshold,
		MaxOpenFiles:                o.MaxOpenFiles,
		Logger:                      o.Logger,
		CompactionConcurrencyRange:  func() (int, int) { return 1, maxCompactions },
		EventListener:               events.listener(),
		FS:                          o.FS,
	}
	if events.fault != nil {
		po.FS = &faultFS{FS: o.FS, f: events.fault}
	}
	// A bloom filter per sstable (10 bits a key, about 1% false
	// positives), so that the Get of a key that is not in the store (a
	// new group past the cache) reads no data block of most levels. The
	// filters are in the block cache, within the managed memory.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	// Value separation (SeparateValuesFrom). A compaction may keep the
	// references of an sstable into up to MaxBlobReferenceDepth blob
	// files whose key ranges overlap before it rewrites the values: rows
	// under random keys (a join's, by join key) make every blob file
	// overlap every other, so a small depth would rewrite the values at
	// each compaction, which separation is meant to avoid; blob files with
	// a fifth of their values deleted are rewritten once five minutes old.
	if min := o.SeparateValuesFrom; min > 0 {
		po.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
			return pebble.ValueSeparationPolicy{Enabled: true, MinimumSize: min,
				MaxBlobReferenceDepth: 1000, RewriteMinimumAge: 5 * time.Minute, TargetGarbageRatio: 0.2}
		}
	}
	po.WithFSDefaults()
	po.EnsureDefaults()
	return po
}

// PebbleBackend is the 'pebble' state backend (the default): each stateful
// operator subtask gets its own Pebble instance in the working directory
// the runtime passes (<data-dir>/jobs/<job>/state/<operator-id>-<subtask>/).
//
// The write-ahead log is off and Apply does not sync: a store's working
// directory is disposable, and only its checkpoints are durable. A
// checkpoint hard-links Pebble's immutable sstables, so it costs only the
// files written since the previous one, provided checkpoints live on the
// same filesystem as the working directories (across filesystems the files
// are copied).
type PebbleBackend struct {
	Options PebbleOptions
}

var _ Backend = PebbleBackend{}

// Name returns "pebble".
func (PebbleBackend) Name() string { return "pebble" }

// Open creates an empty store in dir. dir must not exist, be empty, or hold
// only the files of a Pebble instance (the working directory of a run that
// crashed), which are removed: a store's working files never outlive it.
// The caller owns the store and must Close it; it then deletes dir.
func (b PebbleBackend) Open(dir string) (Store, error) {
	if err := prepareWorkingDir(dir); err != nil {
		return nil, err
	}
	s, err := openPebbleStore(dir, b.Options)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// PebbleStore is a Store kept in one Pebble instance. Keys are the key
// group (2 bytes, big-endian, so that Pebble's byte order is key group
// order) followed by the operator's key; values are stored as given.
//
// A PebbleStore is used by one goroutine, like every Store: its methods
// must not be called concurrently. Close closes the Pebble instance; the
// working directory is then the caller's to delete.
type PebbleStore struct {
	db     *pebble.DB
	dir    string
	opts   PebbleOptions
	events *pebbleEvents
	closed bool
	// fault is the store's failure state (pebble_fault.go); pending is a
	// call still running in Pebble after the store failed under it.
	fault   *storeFault
	pending chan error
	// bgClosed is closed once the instance of an abandoned store closed.
	bgClosed chan struct{}

	// dirty reports writes since the last checkpoint (which must flush).
	dirty bool
	// async is the checkpoint whose files are being written on another
	// goroutine since StartCheckpoint (nil: none). Until it ends, writes
	// go to held, an indexed batch that reads see over the instance's,
	// so that nothing reaches the instance under the checkpoint; land
	// applies held once async ended.
	async *asyncCheckpoint
	held  *pebble.Batch
	// deferring is set while StartCheckpoint runs its write function:
	// the writes are queued, and the checkpoint's goroutine commits them.
	deferring bool
	queue     []queuedWrite
	// prevFiles are the sstables and blob files of the previous checkpoint
	// (or of the checkpoint this store was restored from by hard links),
	// by name, to tell the files a new checkpoint shares with it, and whose
	// checksums it need not compute again.
	prevFiles map[string]sharedFile

	keyBuf []byte
}

var _ Store = (*PebbleStore)(nil)

func openPebbleStore(dir string, o PebbleOptions) (*PebbleStore, error) {
	o.EnsureDefaults()
	events := newPebbleEvents(o.Logger)
	events.fault = newStoreFault(dir, o.Logger)
	db, err := pebble.Open(dir, o.pebbleOptions(events))
	if err != nil {
		return nil, fmt.Errorf("state: open pebble store %s: %w", dir, pebbleError(err))
	}
	return &PebbleStore{db: db, dir: dir, opts: o, events: events, fault: events.fault, bgClosed: make(chan struct{})}, nil
}

// Dir is the store's working directory.
func (s *PebbleStore) Dir() string { return s.dir }

// usable returns ErrClosed after Close, an error wrapping ErrFailed once
// the store failed or was aborted, and one wrapping ErrCorrupt once Pebble
// found a damaged file.
func (s *PebbleStore) usable() error {
	if s.closed {
		return ErrClosed
	}
	return s.healthy()
}

// healthy is usable without the check of Close, for any goroutine: an
// error wrapping ErrFailed once the store failed or was aborted, and one
// wrapping ErrCorrupt once Pebble found a damaged file.
func (s *PebbleStore) healthy() error {
	if err := s.fault.failure(); err != nil {
		return err
	}
	if p := s.events.corrupt.Load(); p != nil {
		return fmt.Errorf("%w: pebble store %s: on-disk corruption in %s", ErrCorrupt, s.dir, filepath.Base(*p))
	}
	return nil
}

// maxKeyGroups is the number of key groups a 2-byte prefix can address.
const maxKeyGroups = 1 << 16

func checkKeyGroup(kg int) error {
	if kg < 0 || kg >= maxKeyGroups {
		return fmt.Errorf("state: key group %d out of range [0, %d)", kg, maxKeyGroups)
	}
	return nil
}

// kgPrefix returns the first key of key group kg; kgPrefix(maxKeyGroups)
// returns nil (no upper bound).
func kgPrefix(kg int) []byte {
	if kg >= maxKeyGroups {
		return nil
	}
	return binary.BigEndian.AppendUint16(nil, uint16(kg))
}

// reader is what reads go through: the instance, or the writes held
// during an asynchronous checkpoint over it.
func (s *PebbleStore) reader() pebble.Reader {
	if s.held != nil {
		return s.held
	}
	return s.db
}

func (s *PebbleStore) key(kg int, key []byte) []byte {
	s.keyBuf = binary.BigEndian.AppendUint16(s.keyBuf[:0], uint16(kg))
	s.keyBuf = append(s.keyBuf, key...)
	return s.keyBuf
}

// Get returns the value of key in key group kg. The value is a copy the
// caller may keep.
func (s *PebbleStore) Get(kg int, key []byte) ([]byte, bool, error) {
	if err := s.usable(); err != nil {
		return nil, false, err
	}
	if err := checkKeyGroup(kg); err != nil {
		return nil, false, err
	}
	k := s.key(kg, key)
	if s.pendingWriteBack(k) != nil {
		v, found, ok, err := s.readWriteBack(kg, key, k)
		if err != nil {
			return nil, false, err
		}
		if ok {
			return append([]byte(nil), v...), found, nil
		}
	}
	if err := s.readableKey(k); err != nil {
		return nil, false, err
	}
	v, closer, err := s.reader().Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.readErr(err)
	}
	// A copy: Pebble's slice is valid only until closer.Close. Values
	// returned earlier must stay valid until the next modification, so a
	// reused buffer would not do.
	out := append([]byte(nil), v...)
	_ = closer.Close()
	return out, true, nil
}

// GetSorted reads keys with one iterator, each seek after the last
// (SortedGetter): the levels' iterators, index positions and blocks of
// one key serve the next, and bloom filters skip the tables that lack a
// key, as they do for Get. During an asynchronous checkpoint's
// write-back, the keys it may change (readableKey) are read last, once it
// is committed, and the others at once.
func (s *PebbleStore) GetSorted(kgs []int, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	late, pending := s.writeBackKeys(kgs, keys)
	if !pending {
		if err := s.readable(); err != nil {
			return err
		}
	}
	if len(late) == 0 {
		return s.seekEach(kgs, keys, nil, false, fn)
	}
	if err := s.seekEach(kgs, keys, late, false, fn); err != nil {
		return err
	}
	wait := late[:0]
	for _, i := range late {
		v, found, ok, err := s.readWriteBack(kgs[i], keys[i], s.key(kgs[i], keys[i]))
		if err != nil {
			return err
		}
		if !ok {
			wait = append(wait, i)
			continue
		}
		if err := fn(i, v, found); err != nil {
			return err
		}
	}
	if len(wait) == 0 {
		return nil
	}
	if err := s.readable(); err != nil {
		return err
	}
	return s.seekEach(kgs, keys, wait, true, fn)
}

// seekEach reads keys[i] with one iterator and calls fn for each: all of
// them if late is nil, else those in late (ascending indexes) if inLate,
// else the others.
func (s *PebbleStore) seekEach(kgs []int, keys [][]byte, late []int, inLate bool, fn func(i int, value []byte, ok bool) error) error {
	it, err := s.reader().NewIter(nil)
	if err != nil {
		return s.readErr(err)
	}
	for i, k := range keys {
		if late != nil {
			if isLate := len(late) > 0 && late[0] == i; isLate != inLate {
				continue
			} else if isLate {
				late = late[1:]
			}
		}
		if err := checkKeyGroup(kgs[i]); err != nil {
			it.Close()
			return err
		}
		pk := s.key(kgs[i], k)
		var v []byte
		found := it.SeekPrefixGE(pk) && bytes.Equal(it.Key(), pk)
		if found {
			if v, err = it.ValueAndErr(); err != nil {
				it.Close()
				return s.readErr(err)
			}
		} else if err := it.Error(); err != nil {
			it.Close()
			return s.readErr(err)
		}
		if err := fn(i, v, found); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return s.readErr(err)
	}
	return nil
}

// Apply writes b in one Pebble batch, without syncing. Nothing of b is
// applied if it holds a key group out of range. Inside StartCheckpoint's
// write function it takes b's contents for the checkpoint's goroutine to
// commit (b is left empty, with new buffers of the same capacity).
func (s *PebbleStore) Apply(b *WriteBatch) error {
	if err := s.usable(); err != nil {
		return err
	}
	if b.Len() == 0 {
		return nil
	}
	size := 0
	for i := range b.ops {
		op := &b.ops[i]
		if err := checkKeyGroup(op.kg); err != nil {
			return err
		}
		size += op.end - op.k + 16
	}
	if s.deferring {
		q := *b
		*b = WriteBatch{ops: make([]batchOp, 0, cap(q.ops)), buf: make([]byte, 0, cap(q.buf))}
		q.order = nil
		s.queue = append(s.queue, queuedWrite{batch: &q})
		return nil
	}
	if err := s.land(false); err != nil {
		return err
	}
	if s.held != nil {
		// During an asynchronous checkpoint the writes are held (an
		// error past b's first operation would leave part of it there,
		// but the only errors are the key groups checked above).
		for i := range b.ops {
			op := &b.ops[i]
			s.async.heldKeys.add(s.key(op.kg, b.key(op)))
		}
		return fillBatch(s.held, b)
	}
	pb := s.db.NewBatchWithSize(size)
	if err := fillBatch(pb, b); err != nil {
		pb.Close()
		return err
	}
	// A commit stalls while Pebble's memtables wait for a flush, for ever
	// if the flush cannot be written: it runs so that the store's failure
	// or Abort ends the wait. The batch belongs to the commit until it
	// returns, which may be after Apply has: only then is it closed (Pebble
	// pools batches, and another store's Apply would refill this one under
	// the stalled commit).
	if err := s.call(func() error { defer pb.Close(); return pb.Commit(pebble.NoSync) }); err != nil {
		if errors.Is(err, ErrFailed) {
			return err
		}
		return fmt.Errorf("state: pebble store %s: %w", s.dir, err)
	}
	s.dirty = true
	return nil
}

// fillBatch adds b's operations to pb, in key order: Pebble's memtable (a
// skiplist) inserts a batch with a cursor, so sorted keys make each
// insertion short.
func fillBatch(pb *pebble.Batch, b *WriteBatch) error {
	return b.sorted(func(op *batchOp) error {
		key := b.key(op)
		var d *pebble.DeferredBatchOp
		if op.del {
			d = pb.DeleteDeferred(2 + len(key))
		} else {
			v := b.value(op)
			d = pb.SetDeferred(2+len(key), len(v))
			copy(d.Value, v)
		}
		binary.BigEndian.PutUint16(d.Key, uint16(op.kg))
		copy(d.Key[2:], key)
		return d.Finish()
	})
}

// queuedWrite is a write made inside StartCheckpoint's write function, for
// the checkpoint's goroutine to commit: a batch, or a range deletion of
// [lo, hi).
type queuedWrite struct {
	batch  *WriteBatch
	lo, hi []byte
}

// DeleteRange writes one range tombstone over [start, end) of key group
// kg (end nil: to the end of the key group), without syncing.
func (s *PebbleStore) DeleteRange(kg int, start, end []byte) error {
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	lo := append(binary.BigEndian.AppendUint16(nil, uint16(kg)), start...)
	hi := kgPrefix(kg + 1)
	if end != nil {
		hi = append(binary.BigEndian.AppendUint16(nil, uint16(kg)), end...)
	} else if hi == nil {
		// The last key group has no first key after it (jobs use at most
		// 32768 key groups, so none reaches it).
		return fmt.Errorf("state: DeleteRange to the end of key group %d", kg)
	}
	if bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	if s.deferring {
		s.queue = append(s.queue, queuedWrite{lo: lo, hi: hi})
		return nil
	}
	if err := s.land(false); err != nil {
		return err
	}
	if s.held != nil {
		s.async.heldKeys.addRange(lo, hi)
		return s.held.DeleteRange(lo, hi, nil)
	}
	if err := s.call(func() error { return s.db.DeleteRange(lo, hi, pebble.NoSync) }); err != nil {
		if errors.Is(err, ErrFailed) {
			return err
		}
		return fmt.Errorf("state: pebble store %s: %w", s.dir, err)
	}
	s.dirty = true
	return nil
}

// Scan calls fn for every entry in key group then key order. key and value
// are valid only during the call.
func (s *PebbleStore) Scan(fn func(kg int, key, value []byte) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := s.readable(); err != nil {
		return err
	}
	return iterPebble(s.reader(), nil, nil, func(k, v []byte) error {
		return fn(int(binary.BigEndian.Uint16(k)), k[2:], v)
	}, s.readErr)
}

// ScanPrefix calls fn for every entry of key group kg whose key starts
// with prefix, in key order; key and value are valid only during the call.
func (s *PebbleStore) ScanPrefix(kg int, prefix []byte, fn func(key, value []byte) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	if err := s.readable(); err != nil {
		return err
	}
	lo := append(binary.BigEndian.AppendUint16(nil, uint16(kg)), prefix...)
	return iterPebble(s.reader(), lo, PrefixEnd(lo), func(k, v []byte) error { return fn(k[2:], v) }, s.readErr)
}

// ScanRange calls fn for every entry of key group kg whose key is in
// [start, end) (end nil: to the end of the key group), in key order; key
// and value are valid only during the call.
func (s *PebbleStore) ScanRange(kg int, start, end []byte, fn func(key, value []byte) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	g := binary.BigEndian.AppendUint16(nil, uint16(kg))
	lo := append(append([]byte(nil), g...), start...)
	var hi []byte
	if end != nil {
		hi = append(append([]byte(nil), g...), end...)
	} else {
		hi = PrefixEnd(g)
	}
	if err := s.readable(); err != nil {
		return err
	}
	return iterPebble(s.reader(), lo, hi, func(k, v []byte) error { return fn(k[2:], v) }, s.readErr)
}

// readErr marks Pebble's corruption errors (a damaged sstable, possibly
// one linked from a checkpoint on restore) with ErrCorrupt.
func (s *PebbleStore) readErr(err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: pebble store %s: %w", ErrCorrupt, s.dir, pebbleError(err))
	}
	return fmt.Errorf("state: pebble store %s: %w", s.dir, pebbleError(err))
}

// Close closes the Pebble instance. Writes since the last checkpoint are
// lost with the working directory, which the caller deletes. A second
// Close does nothing. Close of a failed or aborted store returns at once:
// its instance, which writes nothing more to disk, is closed in the
// background once the call it may still be blocked in ends.
func (s *PebbleStore) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if a := s.async; a != nil {
		// The checkpoint's goroutine uses the instance until it ends.
		select {
		case <-a.done:
		case <-s.fault.failed:
		}
	}
	if s.fault.failure() != nil {
		s.closeAbandoned()
		return nil
	}
	if s.held != nil {
		s.held.Close()
		s.held, s.async = nil, nil
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("state: close pebble store %s: %w", s.dir, err)
	}
	return nil
}

// isPebbleFile reports whether name is a file Pebble keeps in a data
// directory, or an sstable a store writes there to ingest (tableWriter),
// which a crash may leave behind.
func isPebbleFile(name string) bool {
	switch {
	case name == "LOCK", name == "CURRENT",
		strings.HasPrefix(name, "MANIFEST-"),
		strings.HasPrefix(name, "OPTIONS-"),
		strings.HasPrefix(name, "marker."),
		strings.HasSuffix(name, ".sst"),
		strings.HasSuffix(name, ".blob"),
		strings.HasSuffix(name, ".log"),
		strings.HasSuffix(name, ".dbtmp"),
		strings.HasSuffix(name, ".sst.tmp"):
		return true
	}
	return false
}

// prepareWorkingDir makes sure dir is absent or empty, removing the files
// of a Pebble instance left there by a crashed run. Any other file is an
// error: it is not ours to delete.
func prepareWorkingDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state: working directory: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isPebbleFile(e.Name()) {
			return fmt.Errorf("state: working directory %s holds %s, which is not a Pebble file", dir, e.Name())
		}
	}
	if len(ents) == 0 {
		return nil
	}
	// Pebble's directory lock tells leftovers from a store still open, in
	// this process or another.
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		return fmt.Errorf("state: working directory %s is in use: %w", dir, err)
	}
	defer lock.Close()
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("state: clear working directory: %w", err)
		}
	}
	return nil
}

// pebbleEvents receives the events of one Pebble instance. Corruption is
// reported as an error, not Pebble's default (a fatal one): the read that
// found it returns the error, which Get, Scan and Restore wrap with
// ErrCorrupt, and the store refuses further use, so that a damaged file
// never reaches a new checkpoint. Each message is logged once: Pebble
// retries loading a damaged table's statistics in a loop.
type pebbleEvents struct {
	logger  pebble.Logger
	corrupt atomic.Pointer[string] // the first damaged file found
	// fault is the failure state of a working store (nil for a read-only
	// open of a checkpoint).
	fault  *storeFault
	mu     sync.Mutex
	logged map[string]bool
	// capped says that maxLoggedKinds kinds were logged and that was said.
	capped bool
}

func newPebbleEvents(l pebble.Logger) *pebbleEvents {
	return &pebbleEvents{logger: l, logged: map[string]bool{}}
}

func (e *pebbleEvents) listener() *pebble.EventListener {
	return &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			path := info.Path
			e.corrupt.CompareAndSwap(nil, &path)
			e.logOnce("pebble: on-disk corruption in %s", path)
		},
		BackgroundError: e.onBackgroundError,
		DiskSlow: func(info pebble.DiskSlowInfo) {
			e.logOnce("pebble: slow disk: %s", info.String())
		},
	}
}

// logOnce logs a message once per kind (errorKind: the message without
// its digits), and at most maxLoggedKinds kinds, then says that further
// ones are not logged.
func (e *pebbleEvents) logOnce(format, arg string) {
	kind := errorKind(fmt.Sprintf(format, arg))
	e.mu.Lock()
	seen, capped := e.logged[kind], false
	if !seen {
		if len(e.logged) < maxLoggedKinds {
			e.logged[kind] = true
		} else {
			seen, capped = true, !e.capped
			e.capped = true
		}
	}
	e.mu.Unlock()
	switch {
	case !seen:
		e.logger.Errorf(format, arg)
	case capped:
		e.logger.Errorf("pebble: %d kinds of errors logged; further ones are not", maxLoggedKinds)
	}
}

// pebbleError returns err with a one-line message: Pebble joins its
// corruption errors with a second line carrying details for
// pebble.ExtractDataCorruptionInfo, which stays reachable by errors.As.
func pebbleError(err error) error {
	info := pebble.ExtractDataCorruptionInfo(err)
	if info == nil {
		return err
	}
	return &oneLineError{msg: fmt.Sprintf("%s: %v", filepath.Base(info.Path), info.Details), err: err}
}

type oneLineError struct {
	msg string
	err error
}

func (e *oneLineError) Error() string { return e.msg }

func (e *oneLineError) Unwrap() error { return e.err }

// quietLogger is Pebble's default logger without its informational
// messages (one per WAL and open, many per restore).
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}

func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }

// Fatalf panics rather than exit as Pebble's default logger does: a fatal
// error of one store's Pebble instance is raised in the goroutine that met
// it, where the store's call or the subtask recovers it and fails the job,
// never the process and its other jobs.
func (quietLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	pebble.DefaultLogger.Errorf("%s", msg)
	panic(msg)
}
