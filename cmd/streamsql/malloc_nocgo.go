//go:build !cgo || !linux

package main

// boundMallocArenas has nothing to do: without cgo (or off Linux's glibc)
// Pebble's memory is on the Go heap (malloc_cgo.go).
func boundMallocArenas() {}
