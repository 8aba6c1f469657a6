//go:build cgo && linux

package main

import (
	"os"
	"syscall"
)

// boundMallocArenas runs the binary again with MALLOC_ARENA_MAX=2 in its
// environment unless the environment sets it. With cgo, Pebble allocates
// its block cache and memtables with C's allocator, a block at a time from
// every thread that reads or compacts; glibc gives each contending thread
// an arena of its own (up to eight per core), and memory freed into one
// is not reused by another, so RSS outgrew the managed memory by a fifth
// (a group-by over 4M keys, 512 MiB of managed memory: 934 MiB peak RSS,
// 759-793 MiB with two arenas, at the same CPU time). glibc reads the
// bound only from the environment when the process starts (mallopt after
// that comes too late: the Go runtime's cgo threads have already sized
// the arenas), hence the exec, which keeps the process id. It returns
// only if the exec fails, and then the process runs as it is.
func boundMallocArenas() {
	if _, ok := os.LookupEnv("MALLOC_ARENA_MAX"); ok {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(self, os.Args, append(os.Environ(), "MALLOC_ARENA_MAX=2"))
}
