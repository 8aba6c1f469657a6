// Command scale multiplies a DOUBLE by an INT, and negates the product
// when its third argument is true: a function of three arguments of
// different types.
package main

import "github.com/streamsql/streamsql/sdk/udf"

func init() {
	udf.Scalar3(func(x float64, n int32, neg bool) float64 {
		if neg {
			return -x * float64(n)
		}
		return x * float64(n)
	})
}

func main() {}
