// Command count_char is Nexmark q14's user-defined function as Flink
// nexmark writes it (CountChar): the number of times the first character
// of c occurs in s; 0 when s is NULL.
package main

import (
	"unicode/utf8"

	"github.com/streamsql/streamsql/sdk/udf"
)

func init() {
	udf.NullableScalar2(func(s, c udf.Nullable[string]) udf.Nullable[int64] {
		if !s.Valid || !c.Valid || c.V == "" {
			return udf.Of[int64](0)
		}
		ch, _ := utf8.DecodeRuneInString(c.V)
		var n int64
		for _, r := range s.V {
			if r == ch {
				n++
			}
		}
		return udf.Of(n)
	})
}

func main() {}
