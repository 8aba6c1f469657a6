// Command is_even says whether an INT is even, and is NULL for NULL: a
// function called on NULL that returns a BOOLEAN.
package main

import "github.com/streamsql/streamsql/sdk/udf"

func init() {
	udf.NullableScalar(func(x udf.Nullable[int32]) udf.Nullable[bool] {
		if !x.Valid {
			return udf.Nullable[bool]{}
		}
		return udf.Of(x.V%2 == 0)
	})
}

func main() {}
