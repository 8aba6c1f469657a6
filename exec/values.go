package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// Value encoding for state and multisets: a tag byte, then the payload.
// Equal values of one type encode to equal bytes.
const (
	tagNull byte = iota
	tagBool
	tagInt64
	tagFloat64
	tagDecimal
	tagString
	tagBytes
	tagInt32
)

// appendValue appends the encoding of v.
func appendValue(dst []byte, v types.Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, tagNull)
	case bool:
		if x {
			return append(dst, tagBool, 1)
		}
		return append(dst, tagBool, 0)
	case int64:
		return binary.BigEndian.AppendUint64(append(dst, tagInt64), uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(append(dst, tagFloat64), math.Float64bits(x))
	case decimal128.Num:
		dst = binary.BigEndian.AppendUint64(append(dst, tagDecimal), uint64(x.HighBits()))
		return binary.BigEndian.AppendUint64(dst, x.LowBits())
	case string:
		dst = binary.AppendUvarint(append(dst, tagString), uint64(len(x)))
		return append(dst, x...)
	case []byte:
		dst = binary.AppendUvarint(append(dst, tagBytes), uint64(len(x)))
		return append(dst, x...)
	case int32:
		return binary.BigEndian.AppendUint32(append(dst, tagInt32), uint32(x))
	}
	panic(fmt.Sprintf("exec: cannot encode %T", v))
}

// readValue decodes one value from src and returns the rest.
func readValue(src []byte) (types.Value, []byte, error) {
	if len(src) == 0 {
		return nil, nil, errCorrupt
	}
	tag, src := src[0], src[1:]
	need := func(n int) error {
		if len(src) < n {
			return errCorrupt
		}
		return nil
	}
	switch tag {
	case tagNull:
		return nil, src, nil
	case tagBool:
		if err := need(1); err != nil {
			return nil, nil, err
		}
		return src[0] == 1, src[1:], nil
	case tagInt64:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return int64(binary.BigEndian.Uint64(src)), src[8:], nil
	case tagFloat64:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(src)), src[8:], nil
	case tagDecimal:
		if err := need(16); err != nil {
			return nil, nil, err
		}
		return decimal128.New(int64(binary.BigEndian.Uint64(src)), binary.BigEndian.Uint64(src[8:])), src[16:], nil
	case tagString, tagBytes:
		n, k := binary.Uvarint(src)
		if k <= 0 || uint64(len(src)-k) < n {
			return nil, nil, errCorrupt
		}
		b := src[k : k+int(n)]
		if tag == tagString {
			return string(b), src[k+int(n):], nil
		}
		return append([]byte(nil), b...), src[k+int(n):], nil
	case tagInt32:
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return int32(binary.BigEndian.Uint32(src)), src[4:], nil
	}
	return nil, nil, errCorrupt
}

var errCorrupt = fmt.Errorf("exec: corrupt state encoding")

// compareValues orders two values of type t; NULL sorts before everything.
func compareValues(a, b types.Value) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int64:
		return cmp3(x, b.(int64))
	case int32:
		return cmp3(x, b.(int32))
	case float64:
		return cmp3(x, b.(float64))
	case decimal128.Num:
		return x.Cmp(b.(decimal128.Num))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	}
	panic(fmt.Sprintf("exec: cannot compare %T", a))
}

func cmp3[T int64 | int32 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
