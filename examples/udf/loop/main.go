// Command loop never returns when its argument is positive: it is the
// function the tests of the time limit of a call run.
package main

import "github.com/streamsql/streamsql/sdk/udf"

func init() {
	udf.Scalar(func(x int64) int64 {
		for x > 0 {
			x = x%7 + 1
		}
		return x
	})
}

func main() {}
