// Command trap divides 100 by its argument: a zero panics (integer divide
// by zero), the error of a row that the tests of failing functions run.
package main

import "github.com/streamsql/streamsql/sdk/udf"

func init() {
	udf.Scalar(func(x int64) int64 { return 100 / x })
}

func main() {}
