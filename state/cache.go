package state

import (
	"bytes"
	"cmp"
	"slices"
	"unsafe"
)

// Codec encodes an operator's per-key value for its Store.
type Codec[V any] interface {
	Encode(dst []byte, v *V) []byte
	Decode(src []byte, v *V) error
}

// KeyedCodec encodes a value that does not hold its key: the cache hands
// it the entry's key (Entry.Key), so that a value need not keep a second
// copy of it, in whatever form, to encode or decode.
type KeyedCodec[V any] interface {
	EncodeKeyed(dst []byte, key string, v *V) []byte
	DecodeKeyed(src []byte, key string, v *V) error
}

// Unkeyed is c as a KeyedCodec.
func Unkeyed[V any](c Codec[V]) KeyedCodec[V] { return unkeyed[V]{c} }

type unkeyed[V any] struct{ c Codec[V] }

func (u unkeyed[V]) EncodeKeyed(dst []byte, _ string, v *V) []byte { return u.c.Encode(dst, v) }
func (u unkeyed[V]) DecodeKeyed(src []byte, _ string, v *V) error  { return u.c.Decode(src, v) }

// Cache is the write-back cache between an operator and its Store. Entries
// are read from the store on first use and written back, in one batch, by
// Flush (at a checkpoint barrier). It is used by one goroutine.
//
// Lookups by a []byte key do not allocate; inserting a new key allocates
// its string once.
type Cache[V any] struct {
	space   *KeySpace
	codec   KeyedCodec[V]
	entries map[string]*Entry[V]
	dirty   []*Entry[V]
	// gone are the entries deleted since the last Evict or Flush; evicted
	// counts the entries of dirty that Evict dropped.
	gone    []*Entry[V]
	evicted int
	batch   WriteBatch
	buf     []byte
	// complete says every key the store holds has an entry here (the store
	// started empty and Trim has not dropped entries since), so a key
	// missing from the cache is missing from the store too.
	complete bool
	// bytes is about the memory the entries take (EntryBytes each, plus
	// what sizer says of their values); sizer is nil for values of a fixed
	// size.
	bytes int64
	sizer func(*V) int
	// miss, mkgs and mkeys are Prefetch's scratch.
	miss  []int32
	mkgs  []int
	mkeys [][]byte
}

// EntryBytes is the memory an entry takes besides its key's bytes and
// what its value holds outside the entry: the Entry record (with its
// value), the map's slot and the key's string header.
func (c *Cache[V]) entryBytes(e *Entry[V]) int {
	n := int(unsafe.Sizeof(*e)) + cacheSlotBytes + len(e.Key)
	if c.sizer != nil {
		n += c.sizer(&e.Value)
	}
	return n
}

// cacheSlotBytes is the memory a map entry of the cache takes besides the
// Entry: its key's string header, the pointer, and the map's spare room.
const cacheSlotBytes = 48

// Entry is one cached key.
type Entry[V any] struct {
	Key   string
	Value V
	// kg is the key's key group (KG); size the bytes the entry was last
	// counted for (Cache.bytes). Both 32 bits, with the flags below, so
	// that an entry takes a size class less.
	kg, size int32
	dirty    bool
	deleted  bool
	// stored: the store may hold the key (it was read from or written to
	// the store), so deleting it must reach the store.
	stored bool
	// evicted: dropped from the cache by Evict, Flush or Trim; a later Get
	// of the key makes a new entry.
	evicted bool
	// ref: used (Get) since Trim's last pass.
	ref bool
	// absent: made by Prefetch for a key the store lacks; the next Get
	// reports it created.
	absent bool
	// Mark is the cache user's flag, kept beside the entry's own (where
	// it takes no room) rather than in a small Value. The cache clears it
	// when it clears the Value.
	Mark bool
}

// Stored reports whether the store may hold e's key (it was read from
// or written to the store).
func (e *Entry[V]) Stored() bool { return e.stored }

// KG is the key group of the entry's key.
func (e *Entry[V]) KG() int { return int(e.kg) }

// Dirty reports whether e changed since it was last written back.
func (e *Entry[V]) Dirty() bool { return e.dirty }

// NewCache returns a cache over store, its keys as they are.
func NewCache[V any](store Store, codec Codec[V]) *Cache[V] {
	return NewSpaceCache(&KeySpace{store: store}, codec)
}

// NewSpaceCache returns a cache over key space ks, with ks's codec.
// Entry keys are the keys in the space (without its prefix).
func NewSpaceCache[V any](ks *KeySpace, codec Codec[V]) *Cache[V] {
	return NewKeyedSpaceCache[V](ks, Unkeyed(codec))
}

// NewKeyedSpaceCache returns a cache over key space ks whose codec is
// given each entry's key with its value.
func NewKeyedSpaceCache[V any](ks *KeySpace, codec KeyedCodec[V]) *Cache[V] {
	return &Cache[V]{space: ks, codec: codec, entries: map[string]*Entry[V]{}}
}

// SetSizer tells the cache how many bytes a value holds outside its
// entry (its slices' and maps' contents), for Bytes and Trim. Values are
// measured when they enter the cache and when they are marked dirty.
func (c *Cache[V]) SetSizer(fn func(*V) int) { c.sizer = fn }

// Space is the key space the cache writes back to.
func (c *Cache[V]) Space() *KeySpace { return c.space }

// Bytes is about the memory the cached entries take.
func (c *Cache[V]) Bytes() int64 { return c.bytes }

// count (re)measures e into the cache's bytes.
func (c *Cache[V]) count(e *Entry[V]) {
	n := int32(c.entryBytes(e))
	c.bytes += int64(n - e.size)
	e.size = n
}

// uncount takes e out of the cache's bytes.
func (c *Cache[V]) uncount(e *Entry[V]) {
	c.bytes -= int64(e.size)
	e.size = 0
}

// StartsEmpty tells the cache that its store holds no key yet (a job's
// fresh working store, not a restored one). Until Trim drops entries,
// a key the cache does not hold is not in the store either, and Get does
// not look for it there: new keys cost no store read.
func (c *Cache[V]) StartsEmpty() { c.complete = true }

// Get returns the entry of key, loading it from the store; created reports
// that the key had no state (its Value is the zero V).
func (c *Cache[V]) Get(kg int, key []byte) (e *Entry[V], created bool, err error) {
	if e, ok := c.entries[string(key)]; ok {
		e.ref = true
		if e.absent {
			e.absent = false
			return e, true, nil
		}
		if e.deleted {
			e.deleted = false
			var zero V
			e.Value, e.Mark = zero, false
			return e, true, nil
		}
		return e, false, nil
	}
	e = &Entry[V]{Key: string(key), kg: int32(kg), ref: true}
	if c.complete {
		c.entries[e.Key] = e
		c.count(e)
		return e, true, nil
	}
	raw, ok, err := c.space.Get(kg, key)
	if err != nil {
		return nil, false, err
	}
	if ok {
		if err := c.codec.DecodeKeyed(raw, e.Key, &e.Value); err != nil {
			return nil, false, err
		}
		e.stored = true
	}
	c.entries[e.Key] = e
	c.count(e)
	return e, !ok, nil
}

// Peek returns the cached live entry of key, or nil: it never reads the
// store and does not mark the entry used.
func (c *Cache[V]) Peek(key []byte) *Entry[V] {
	if e, ok := c.entries[string(key)]; ok && !e.deleted && !e.absent {
		return e
	}
	return nil
}

// Complete reports that every key the store holds is cached (StartsEmpty,
// and Trim has not dropped entries since): Get never reads the store.
func (c *Cache[V]) Complete() bool { return c.complete }

// Prefetch loads the keys (keys[i] of key group kgs[i], in any order,
// possibly repeated) that the cache lacks, reading them from the store
// together in key order (KeySpace.GetSorted) rather than one random read
// each, so that the Gets of a batch's keys that follow find them all
// cached. A key the store lacks gets an entry that the next Get reports
// created. It reads nothing when the cache is Complete.
func (c *Cache[V]) Prefetch(kgs []int, keys [][]byte) error {
	if c.complete {
		return nil
	}
	c.miss = c.miss[:0]
	for i, k := range keys {
		if _, ok := c.entries[string(k)]; !ok {
			c.miss = append(c.miss, int32(i))
		}
	}
	if len(c.miss) == 0 {
		return nil
	}
	slices.SortFunc(c.miss, func(x, y int32) int {
		if c := cmp.Compare(kgs[x], kgs[y]); c != 0 {
			return c
		}
		return bytes.Compare(keys[x], keys[y])
	})
	c.mkgs, c.mkeys = c.mkgs[:0], c.mkeys[:0]
	for _, i := range c.miss {
		if n := len(c.mkeys); n > 0 && kgs[i] == c.mkgs[n-1] && bytes.Equal(keys[i], c.mkeys[n-1]) {
			continue // a repeat of the key before it
		}
		c.mkgs, c.mkeys = append(c.mkgs, kgs[i]), append(c.mkeys, keys[i])
	}
	err := c.space.GetSorted(c.mkgs, c.mkeys, func(j int, raw []byte, ok bool) error {
		e := &Entry[V]{Key: string(c.mkeys[j]), kg: int32(c.mkgs[j]), absent: !ok}
		if ok {
			if err := c.codec.DecodeKeyed(raw, e.Key, &e.Value); err != nil {
				return err
			}
			e.stored = true
		}
		c.entries[e.Key] = e
		c.count(e)
		return nil
	})
	clear(c.mkeys)
	return err
}

// MarkDirty records that e changed and must be written at the next Flush.
func (c *Cache[V]) MarkDirty(e *Entry[V]) {
	if !e.dirty {
		e.dirty = true
		c.dirty = append(c.dirty, e)
		if c.sizer != nil && !e.evicted {
			c.count(e)
		}
	}
}

// Resized counts e's bytes again (SetSizer): MarkDirty counts them when e
// becomes dirty, so a value that grows while dirty (a TopN partition's
// rows, a key's sessions) must say so, or the cache's bytes fall behind
// its memory until the next Flush.
func (c *Cache[V]) Resized(e *Entry[V]) {
	if c.sizer != nil && !e.evicted && !e.deleted {
		c.count(e)
	}
}

// Grew adds n bytes to e's count, for a value that grows while dirty by
// a known amount and whose sizer walks all of it (Resized would cost as
// much as the value each time).
func (c *Cache[V]) Grew(e *Entry[V], n int) {
	if c.sizer != nil && !e.evicted && !e.deleted && e.dirty {
		e.size += int32(n)
		c.bytes += int64(n)
	}
}

// Delete removes e's state (written at the next Flush).
func (c *Cache[V]) Delete(e *Entry[V]) {
	if !e.deleted {
		e.deleted = true
		c.gone = append(c.gone, e)
	}
	c.MarkDirty(e)
}

// Discard removes e's state as Delete does, but never writes a delete of
// it to the store: the caller removes the store's copy itself, with one
// KeySpace.DeleteRange for many keys (the groups of a window that fired).
// A later Get of the key makes a new entry, written back as any.
func (c *Cache[V]) Discard(e *Entry[V]) {
	e.stored = false
	c.Delete(e)
}

// Evict drops the entries deleted since the last Evict or Flush from the
// cache, so that its memory holds only live keys, without writing the live
// dirty entries (Flush does, at the next checkpoint). The store sees the
// delete of a key only if it may hold it: a key created and deleted between
// two flushes never reaches the store. Its cost is proportional to the
// deleted entries (amortised), not to the cache.
//
// Entries returned by Get before Evict must not be used after it.
func (c *Cache[V]) Evict() error {
	c.batch.Reset()
	var zero V
	for _, e := range c.gone {
		if !e.deleted || e.evicted {
			continue // revived by a Get, or already dropped
		}
		if e.stored {
			c.space.Delete(&c.batch, e.KG(), []byte(e.Key))
		}
		delete(c.entries, e.Key)
		c.uncount(e)
		e.evicted, e.Value, e.Mark = true, zero, false
		c.evicted++
	}
	clear(c.gone)
	c.gone = c.gone[:0]
	// The dirty list still points at the evicted entries.
	c.compactDirty()
	if c.batch.Len() == 0 {
		return nil
	}
	return c.space.store.Apply(&c.batch)
}

// Len is the number of cached keys.
func (c *Cache[V]) Len() int { return len(c.entries) }

// Trim bounds the cache's memory: when it holds more than maxBytes
// (Bytes) or more than maxEntries keys, it drops entries until it holds
// three quarters of each bound: first those not used (Get) since its last
// pass, which marks the others unused (a second chance), then, if that is
// not enough, any. A dropped entry that changed since the last Flush is
// written to the store first (the others stay dirty until the next
// Flush), and later Gets of its key read it from the store again. Writing
// between checkpoints is safe: a restore reads checkpoints, never the
// working store, and the next checkpoint includes these writes anyway.
// It reports whether it dropped entries.
//
// Entries returned by Get before Trim must not be used after it: the
// caller trims between batches, when it holds none.
func (c *Cache[V]) Trim(maxBytes int64, maxEntries int) (bool, error) {
	if c.bytes <= maxBytes && len(c.entries) <= maxEntries {
		return false, nil
	}
	c.batch.Reset()
	wantBytes, wantEntries := maxBytes-maxBytes/4, maxEntries-maxEntries/4
	over := func() bool { return c.bytes > wantBytes || len(c.entries) > wantEntries }
	var zero V
	dropped := false
	for pass := 0; pass < 2 && over(); pass++ {
		for k, e := range c.entries {
			if e.ref && pass == 0 {
				e.ref = false
				continue
			}
			switch {
			case e.deleted:
				if e.stored {
					c.space.Delete(&c.batch, e.KG(), []byte(e.Key))
				}
			case e.dirty:
				c.buf = c.codec.EncodeKeyed(c.buf[:0], e.Key, &e.Value)
				c.space.Put(&c.batch, e.KG(), []byte(e.Key), c.buf)
			}
			if e.dirty {
				c.evicted++ // still in c.dirty, which compactDirty cleans
			}
			delete(c.entries, k)
			c.uncount(e)
			e.evicted, e.Value, e.Mark = true, zero, false
			dropped = true
			if err := c.space.ApplyPart(&c.batch); err != nil {
				return dropped, err
			}
			if !over() {
				break
			}
		}
	}
	if dropped {
		c.complete = false
	}
	c.compactDirty()
	if c.batch.Len() == 0 {
		return dropped, nil
	}
	return dropped, c.space.store.Apply(&c.batch)
}

// compactDirty drops the entries that left the cache from the dirty list
// once they are half of it, so that it holds no memory for them.
func (c *Cache[V]) compactDirty() {
	if c.evicted == 0 || 2*c.evicted < len(c.dirty) {
		return
	}
	live := c.dirty[:0]
	for _, e := range c.dirty {
		if e.evicted {
			e.dirty = false
		} else {
			live = append(live, e)
		}
	}
	clear(c.dirty[len(live):])
	c.dirty, c.evicted = live, 0
}

// Flush writes every dirty entry to the store in one batch.
func (c *Cache[V]) Flush() error {
	c.batch.Reset()
	for _, e := range c.dirty {
		switch {
		case e.evicted:
		case e.deleted:
			if e.stored {
				c.space.Delete(&c.batch, e.KG(), []byte(e.Key))
			}
			delete(c.entries, e.Key)
			c.uncount(e)
			e.evicted = true
		default:
			c.buf = c.codec.EncodeKeyed(c.buf[:0], e.Key, &e.Value)
			c.space.Put(&c.batch, e.KG(), []byte(e.Key), c.buf)
			e.stored = true
		}
		e.dirty = false
		if err := c.space.ApplyPart(&c.batch); err != nil {
			return err
		}
	}
	clear(c.dirty)
	c.dirty, c.evicted = c.dirty[:0], 0
	clear(c.gone)
	c.gone = c.gone[:0]
	if c.batch.Len() == 0 {
		return nil
	}
	return c.space.store.Apply(&c.batch)
}

// Range calls fn for every cached live entry (order unspecified).
func (c *Cache[V]) Range(fn func(e *Entry[V]) bool) {
	for _, e := range c.entries {
		if !e.deleted && !e.absent && !fn(e) {
			return
		}
	}
}
