// Command crash recurses without end when its argument is negative: the Go
// runtime in the module stops with a fatal stack overflow (past 1 MiB), which no recover
// catches (the module exits), the crash the tests of the sandbox run.
package main

import (
	"runtime/debug"

	"github.com/streamsql/streamsql/sdk/udf"
)

func depth(x int64) int64 {
	if x >= 0 {
		return x
	}
	return depth(x) + 1
}

func init() {
	debug.SetMaxStack(1 << 20) // the overflow comes at once
	udf.Scalar(depth)
}

func main() {}
