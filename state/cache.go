package state

// Codec encodes an operator's per-key value for its Store.
type Codec[V any] interface {
	Encode(dst []byte, v *V) []byte
	Decode(src []byte, v *V) error
}

// Cache is the write-back cache between an operator and its Store. Entries
// are read from the store on first use and written back, in one batch, by
// Flush (at a checkpoint barrier). It is used by one goroutine.
//
// Lookups by a []byte key do not allocate; inserting a new key allocates
// its string once.
type Cache[V any] struct {
	store   Store
	codec   Codec[V]
	entries map[string]*Entry[V]
	dirty   []*Entry[V]
	batch   WriteBatch
	buf     []byte
}

// Entry is one cached key.
type Entry[V any] struct {
	Key     string
	KG      int
	Value   V
	dirty   bool
	deleted bool
}

// NewCache returns a cache over store.
func NewCache[V any](store Store, codec Codec[V]) *Cache[V] {
	return &Cache[V]{store: store, codec: codec, entries: map[string]*Entry[V]{}}
}

// Get returns the entry of key, loading it from the store; created reports
// that the key had no state (its Value is the zero V).
func (c *Cache[V]) Get(kg int, key []byte) (e *Entry[V], created bool, err error) {
	if e, ok := c.entries[string(key)]; ok {
		if e.deleted {
			e.deleted = false
			var zero V
			e.Value = zero
			return e, true, nil
		}
		return e, false, nil
	}
	e = &Entry[V]{Key: string(key), KG: kg}
	raw, ok, err := c.store.Get(kg, key)
	if err != nil {
		return nil, false, err
	}
	if ok {
		if err := c.codec.Decode(raw, &e.Value); err != nil {
			return nil, false, err
		}
	}
	c.entries[e.Key] = e
	return e, !ok, nil
}

// MarkDirty records that e changed and must be written at the next Flush.
func (c *Cache[V]) MarkDirty(e *Entry[V]) {
	if !e.dirty {
		e.dirty = true
		c.dirty = append(c.dirty, e)
	}
}

// Delete removes e's state (written at the next Flush).
func (c *Cache[V]) Delete(e *Entry[V]) {
	e.deleted = true
	c.MarkDirty(e)
}

// Len is the number of cached keys.
func (c *Cache[V]) Len() int { return len(c.entries) }

// Shrink bounds the cache's memory: when it holds more than max keys, it
// writes every dirty entry to the store and forgets all entries; later Gets
// read them back from the store. Writing between checkpoints is safe: a
// restore reads checkpoints, never the working store, and the next
// checkpoint includes these writes anyway.
//
// Entries returned by Get before Shrink must not be used after it: the
// caller shrinks between batches, when it holds none.
func (c *Cache[V]) Shrink(max int) error {
	if len(c.entries) <= max {
		return nil
	}
	if err := c.Flush(); err != nil {
		return err
	}
	clear(c.entries)
	return nil
}

// Flush writes every dirty entry to the store in one batch.
func (c *Cache[V]) Flush() error {
	c.batch.Reset()
	for _, e := range c.dirty {
		if e.deleted {
			c.batch.Delete(e.KG, []byte(e.Key))
			delete(c.entries, e.Key)
		} else {
			c.buf = c.codec.Encode(c.buf[:0], &e.Value)
			c.batch.Put(e.KG, []byte(e.Key), c.buf)
		}
		e.dirty = false
	}
	c.dirty = c.dirty[:0]
	if c.batch.Len() == 0 {
		return nil
	}
	return c.store.Apply(&c.batch)
}

// Range calls fn for every cached live entry (order unspecified).
func (c *Cache[V]) Range(fn func(e *Entry[V]) bool) {
	for _, e := range c.entries {
		if !e.deleted && !fn(e) {
			return
		}
	}
}
