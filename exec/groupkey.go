package exec

import (
	"encoding/binary"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

// A group aggregate's key as its cache holds it: the values of the key
// columns encoded by colReader.encodeKey (a null flag, then the value:
// integer-like values, floats and decimals in 8 or 16 bytes, strings and
// bytes length-prefixed). The functions below read it back without
// boxing, for the rows emitted and the state written, which holds the key
// values as appendValue encodes them (appendKey).

// keyCol is one value of an encoded key.
type keyCol struct {
	null bool
	i    int64
	f    float64
	d    decimal128.Num
	s    string // a view into the key
}

// readKeyCol reads the value of a column of type t from key, returning
// the rest; ok is false when key is cut short. A value of the NULL type
// is NULL whatever its null flag says (an Arrow NULL array has no
// validity bitmap, so colReader.isNull says false).
func readKeyCol(t types.T, key string) (v keyCol, rest string, ok bool) {
	v, rest, ok = readKeyValue(t, key)
	if t.Kind == types.Null {
		v = keyCol{null: true}
	}
	return v, rest, ok
}

func readKeyValue(t types.T, key string) (v keyCol, rest string, ok bool) {
	if len(key) == 0 {
		return v, "", false
	}
	if key[0] == 0 {
		v.null = true
		return v, key[1:], true
	}
	key = key[1:]
	switch class(t.Kind) {
	case 's':
		n, k := uvarintString(key)
		if k <= 0 || uint64(len(key)-k) < n {
			return v, "", false
		}
		v.s = key[k : k+int(n)]
		return v, key[k+int(n):], true
	case 'd':
		if len(key) < 16 {
			return v, "", false
		}
		v.d = decimal128.New(int64(be64(key)), be64(key[8:]))
		return v, key[16:], true
	case 'f':
		if len(key) < 8 {
			return v, "", false
		}
		v.f = math.Float64frombits(be64(key))
		return v, key[8:], true
	}
	if len(key) < 8 {
		return v, "", false
	}
	v.i = int64(be64(key))
	return v, key[8:], true
}

// uvarintString is binary.Uvarint of a string.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

func be64(s string) uint64 {
	_ = s[7]
	return uint64(s[7]) | uint64(s[6])<<8 | uint64(s[5])<<16 | uint64(s[4])<<24 |
		uint64(s[3])<<32 | uint64(s[2])<<40 | uint64(s[1])<<48 | uint64(s[0])<<56
}

// appendKeyRow appends the key's values, of types keyT, to the builders bs.
func appendKeyRow(bs []array.Builder, keyT []types.T, key string) {
	for j, t := range keyT {
		key = appendKeyCol(bs[j], t, key)
	}
}

// appendKeyCol appends the first value of key, of type t, to b and
// returns the rest of key.
func appendKeyCol(b array.Builder, t types.T, key string) string {
	v, rest, ok := readKeyCol(t, key)
	if !ok {
		panic("exec: a group key does not decode")
	}
	switch {
	case v.null:
		b.AppendNull()
	case t.Kind == types.Bytes:
		b.(*array.BinaryBuilder).Append(unsafe.Slice(unsafe.StringData(v.s), len(v.s)))
	case t.Kind == types.String:
		b.(*array.StringBuilder).Append(v.s)
	default:
		appendTyped(b, t, v.i, v.f, v.d, "")
	}
	return rest
}

// keyValue is v, a value of type t, as types.ValueAt makes it.
func keyValue(t types.T, v keyCol) types.Value {
	switch {
	case v.null:
		return nil
	case t.Kind == types.Boolean:
		return v.i != 0
	case t.Kind == types.Date || t.Kind == types.Time:
		return int32(v.i)
	case t.Kind == types.String:
		return v.s
	case t.Kind == types.Bytes:
		return []byte(v.s)
	}
	switch class(t.Kind) {
	case 'f':
		return v.f
	case 'd':
		return v.d
	}
	return v.i
}

// formatKey is the key's values as an error message names them.
func formatKey(keyT []types.T, key string) string {
	parts := make([]string, len(keyT))
	for j, t := range keyT {
		v, rest, ok := readKeyCol(t, key)
		if !ok {
			return "?"
		}
		key = rest
		parts[j] = types.Format(t, keyValue(t, v))
	}
	return strings.Join(parts, ", ")
}

// skipKey reads key values written by appendKey, checking their number
// and types against keyT, without keeping them: the group and window
// entries of versions before groupStateVersion 3 and windowStateVersion 2
// held them.
func (d *decoder) skipKey(keyT []types.T) {
	n := d.uvarint()
	if d.err != nil {
		return
	}
	if n != uint64(len(keyT)) {
		d.incompatible("%d key columns in the state, %d in the query", n, len(keyT))
		return
	}
	for i, t := range keyT {
		tag := d.byte()
		if d.err != nil {
			return
		}
		var want byte
		switch {
		case tag == tagNull:
			continue
		case tag > tagInt32:
			d.fail()
		case t.Kind == types.Boolean:
			want = tagBool
			if tag == want && d.byte() > 1 {
				d.fail()
			}
		case t.Kind == types.Date || t.Kind == types.Time:
			want = tagInt32
			if tag == want {
				d.fixed(4)
			}
		case t.Kind == types.String:
			want = tagString
			if tag == want {
				d.bytes()
			}
		case t.Kind == types.Bytes:
			want = tagBytes
			if tag == want {
				d.bytes()
			}
		case class(t.Kind) == 'f':
			want = tagFloat64
			if tag == want {
				d.fixed(8)
			}
		case class(t.Kind) == 'd':
			want = tagDecimal
			if tag == want {
				d.fixed(16)
			}
		default:
			want = tagInt64
			if tag == want {
				d.fixed(8)
			}
		}
		if d.err != nil {
			return
		}
		if tag != want {
			d.incompatible("key column %d holds a %s, the query's is %s", i+1, tagName(tag), t)
			return
		}
	}
}

// tagName names the Go type of values of a tag (appendValue), as key
// type errors have named them.
func tagName(tag byte) string {
	switch tag {
	case tagBool:
		return "bool"
	case tagInt64:
		return "int64"
	case tagFloat64:
		return "float64"
	case tagDecimal:
		return "decimal128.Num"
	case tagString:
		return "string"
	case tagBytes:
		return "[]uint8"
	case tagInt32:
		return "int32"
	}
	return "value of an unknown tag"
}

// batchKeys are the state keys of a batch's rows (or of its rows'
// windows), encoded into one buffer before the batch is folded, so that
// those a cache lacks are read from the store together (Cache.Prefetch).
// Append a key's bytes to buf, then call add with its key group; seal
// makes keys.
type batchKeys struct {
	buf  []byte
	end  []int
	keys [][]byte // keys[i]: the i-th key, a slice of buf
	kgs  []int    // kgs[i]: its key group
}

func (k *batchKeys) reset() {
	clear(k.keys)
	k.buf, k.end, k.keys, k.kgs = k.buf[:0], k.end[:0], k.keys[:0], k.kgs[:0]
}

// add ends the key appended to buf since the last add.
func (k *batchKeys) add(kg int) {
	k.end, k.kgs = append(k.end, len(k.buf)), append(k.kgs, kg)
}

// seal makes keys, once every key is added.
func (k *batchKeys) seal() {
	start := 0
	for _, end := range k.end {
		k.keys = append(k.keys, k.buf[start:end:end])
		start = end
	}
}
