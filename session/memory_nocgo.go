//go:build !cgo

package session

// pebbleOffHeap says Pebble allocates its block cache and memtables with
// C's allocator; without cgo they are on the Go heap.
const pebbleOffHeap = false
