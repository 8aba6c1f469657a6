//go:build cgo

package session

// pebbleOffHeap says Pebble allocates its block cache and memtables with
// C's allocator (its internal/manual package, built with cgo): outside
// the Go heap, so outside the Go runtime's soft memory limit.
const pebbleOffHeap = true
