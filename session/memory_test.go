package session

import "testing"

// TestGoMemoryLimit: the Go runtime's soft limit counts the part of the
// managed memory that is on the Go heap, and the overhead: Pebble's half
// only when Pebble's allocations are Go's (built without cgo).
func TestGoMemoryLimit(t *testing.T) {
	const size = 512 << 20
	want := int64(size + memLimitOverhead)
	if pebbleOffHeap {
		want = size/2 + memLimitOverhead
	}
	if got := goMemoryLimit(size); got != want {
		t.Fatalf("goMemoryLimit(512 MiB) = %d MiB, want %d MiB", got>>20, want>>20)
	}
}
