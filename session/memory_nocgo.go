//go:build !cgo

package session

// pebbleOffHeap: without cgo, Pebble's block cache and memtables are on
// the Go heap (goMemoryLimit).
const pebbleOffHeap = false
