package functions

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cespare/xxhash/v2"

	"github.com/streamsql/streamsql/types"
)

// nullHash is what a NULL contributes to a row hash.
const nullHash = 0x2f6b_9a1c_53d4_e807

// fmix64 is MurmurHash3's 64-bit finalizer: a fast, well-mixing bijection.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// combine mixes the hash h of one value into the running row hash acc.
func combine(acc, h uint64) uint64 {
	return fmix64(acc ^ (h + 0x9e3779b97f4a7c15 + (acc << 6) + (acc >> 2)))
}

func hashInt(x int64) uint64 { return fmix64(uint64(x)) }

func hashFloat(f float64) uint64 {
	if f == 0 {
		f = 0 // -0 hashes as 0
	}
	if f != f {
		return 0x7ff8000000000001 // one NaN
	}
	return fmix64(math.Float64bits(f))
}

func hashDecimal(n decimal128.Num) uint64 {
	return fmix64(n.LowBits() ^ fmix64(uint64(n.HighBits())))
}

// HashValue returns the hash of one value of type t, equal to what
// HashColumn mixes in for it.
func HashValue(t types.T, v types.Value) uint64 {
	switch x := v.(type) {
	case nil:
		return nullHash
	case bool:
		if x {
			return hashInt(1)
		}
		return hashInt(0)
	case int64:
		return hashInt(x)
	case int32:
		return hashInt(int64(x))
	case float64:
		return hashFloat(x)
	case decimal128.Num:
		return hashDecimal(x)
	case string:
		return xxhash.Sum64String(x)
	case []byte:
		return xxhash.Sum64(x)
	}
	return nullHash
}

// HashColumn mixes each row's value of column v into out[i] (len(out) >=
// n): out[i] = combine(out[i], hash(value)). Start out at a seed (0 is
// fine) and call it once per key column. NULL hashes to a fixed value.
// Equal values of the same type hash equal (also across integer widths,
// and -0.0 with 0.0), and the hash is the same in every process, so it
// may decide key groups that outlive a run.
func HashColumn(v Vec, n int, out []uint64) {
	out = out[:n]
	if v.Const {
		h := HashValue(v.Type, v.Value)
		for i := range out {
			out[i] = combine(out[i], h)
		}
		return
	}
	a := v.Array
	nulls := a.NullN() > 0
	switch v.Type.Kind {
	case types.TinyInt:
		hashInts(values[int8](a), a, nulls, out)
	case types.SmallInt:
		hashInts(values[int16](a), a, nulls, out)
	case types.Int, types.Date, types.Time:
		hashInts(values[int32](a), a, nulls, out)
	case types.BigInt, types.Timestamp, types.IntervalDayTime, types.IntervalYearMonth:
		hashInts(values[int64](a), a, nulls, out)
	case types.Float:
		for i, x := range values[float32](a) {
			h := hashFloat(float64(x))
			if nulls && a.IsNull(i) {
				h = nullHash
			}
			out[i] = combine(out[i], h)
		}
	case types.Double:
		for i, x := range values[float64](a) {
			h := hashFloat(x)
			if nulls && a.IsNull(i) {
				h = nullHash
			}
			out[i] = combine(out[i], h)
		}
	case types.Decimal:
		for i, x := range values[decimal128.Num](a) {
			h := hashDecimal(x)
			if nulls && a.IsNull(i) {
				h = nullHash
			}
			out[i] = combine(out[i], h)
		}
	case types.Boolean:
		b := a.(*array.Boolean)
		for i := range out {
			h := hashInt(int64(b2i(b.Value(i))))
			if nulls && a.IsNull(i) {
				h = nullHash
			}
			out[i] = combine(out[i], h)
		}
	case types.String, types.Bytes:
		s := newStrArg(v)
		for i := range out {
			var h uint64 = nullHash
			if !nulls || a.IsValid(i) {
				h = xxhash.Sum64String(s.at(i))
			}
			out[i] = combine(out[i], h)
		}
	default: // NULL type
		for i := range out {
			out[i] = combine(out[i], nullHash)
		}
	}
}

func hashInts[T integer](x []T, a arrow.Array, nulls bool, out []uint64) {
	for i, v := range x {
		h := hashInt(int64(v))
		if nulls && a.IsNull(i) {
			h = nullHash
		}
		out[i] = combine(out[i], h)
	}
}
