// Command str_len is the number of characters (code points) of a string,
// as CHAR_LENGTH: its UTF-8 bytes less those that continue a character
// (10xxxxxx).
package main

import "github.com/streamsql/streamsql/sdk/udf"

func strLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			n--
		}
	}
	return n
}

func init() {
	udf.Scalar(strLen)
}

func main() {}
