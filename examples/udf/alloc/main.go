// Command alloc allocates as many MiB as its argument says and keeps them:
// the function the tests of the memory limit run.
package main

import "github.com/streamsql/streamsql/sdk/udf"

var kept [][]byte

func init() {
	udf.Scalar(func(mib int64) int64 {
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		kept = append(kept, b)
		return int64(len(b) >> 20)
	})
}

func main() {}
