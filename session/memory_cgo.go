//go:build cgo

package session

// pebbleOffHeap: with cgo, Pebble allocates its block cache and memtables
// with C's allocator, outside the Go heap (goMemoryLimit).
const pebbleOffHeap = true
