// Command str_len is the number of characters of a string, as CHAR_LENGTH.
package main

import (
	"unicode/utf8"

	"github.com/streamsql/streamsql/sdk/udf"
)

func init() {
	udf.Scalar(func(s string) int64 { return int64(utf8.RuneCountInString(s)) })
}

func main() {}
