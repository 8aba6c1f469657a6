package functions

import (
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// caseKernel returns the CASE result of a fixed-width type t (caseFixed),
// ok false for other types (BOOLEAN, STRING, BYTES), which pick builds.
// args are as CASE passes them: (w1, t1, ..., [e]); IF(c, a, b) is
// CASE(c, a, b) with an ELSE.
func caseKernel(ctx *Context, t types.T, args []Vec, hasElse bool, n int) (Vec, bool) {
	switch t.Kind {
	case types.TinyInt:
		return caseFixed[int8](ctx, t, args, hasElse, n), true
	case types.SmallInt:
		return caseFixed[int16](ctx, t, args, hasElse, n), true
	case types.Int, types.Date, types.Time:
		return caseFixed[int32](ctx, t, args, hasElse, n), true
	case types.BigInt, types.Timestamp, types.IntervalDayTime, types.IntervalYearMonth:
		return caseFixed[int64](ctx, t, args, hasElse, n), true
	case types.Float:
		return caseFixed[float32](ctx, t, args, hasElse, n), true
	case types.Double:
		return caseFixed[float64](ctx, t, args, hasElse, n), true
	case types.Decimal:
		return caseFixed[decimal128.Num](ctx, t, args, hasElse, n), true
	}
	return Vec{}, false
}

// caseFixed builds the CASE result of a fixed-width type over n rows with
// 64-row words of bitmaps: the result starts as the ELSE column (NULL
// without an ELSE), then each WHEN in order takes the rows where it is
// TRUE and no earlier WHEN was, and overwrites them with its THEN. A WHEN
// costs a word operation per 64 rows and a copy per row it takes (a whole
// word of rows at once when it takes them all); nothing is decided row by
// row. Rows NULL in the result hold the zero value.
func caseFixed[T fixed](ctx *Context, t types.T, args []Vec, hasElse bool, n int) Vec {
	mem := ctx.mem()
	nw := (n + 63) / 64
	buf, out := newFixedBuf[T](mem, n)
	vbuf := memory.NewResizableBuffer(mem)
	vbuf.Resize(nw * 8)
	valid := asWords(vbuf.Bytes(), nw)
	scratch := make([]uint64, 3*nw)
	taken, when, thenValid := scratch[:nw], scratch[nw:2*nw], scratch[2*nw:]
	var one [1]T
	if hasElse {
		e := args[len(args)-1]
		if vals, mask := fixedValues(t, e, &one); vals == nil {
			clear(out)
		} else if mask == 0 {
			for i := range out {
				out[i] = vals[0]
			}
		} else {
			copy(out, vals)
		}
		validWords(t, e, n, valid)
	} else {
		clear(out)
		clear(valid)
	}
	for k := 0; k+1 < len(args); k += 2 {
		if !truthWords(args[k], n, when) {
			continue
		}
		src := args[k+1]
		vals, mask := fixedValues(t, src, &one)
		validWords(t, src, n, thenValid)
		for w := range nw {
			take := when[w] &^ taken[w]
			if take == 0 {
				continue
			}
			taken[w] |= take
			valid[w] = valid[w]&^take | thenValid[w]&take
			if vals == nil {
				continue // NULL: zeroed below
			}
			base := w << 6
			if take == ^uint64(0) && mask != 0 {
				copy(out[base:base+64], vals[base:base+64])
				continue
			}
			for ; take != 0; take &= take - 1 {
				i := base + bits.TrailingZeros64(take)
				out[i] = vals[i&mask]
			}
		}
	}
	nulls := 0
	var zero T
	for w := range nw {
		invalid := ^valid[w]
		if w == nw-1 && n%64 != 0 {
			invalid &= 1<<(n%64) - 1
		}
		nulls += bits.OnesCount64(invalid)
		for ; invalid != 0; invalid &= invalid - 1 {
			out[w<<6+bits.TrailingZeros64(invalid)] = zero
		}
	}
	val := validity{buf: vbuf, nulls: nulls}
	if nulls == 0 {
		vbuf.Release()
		val = validity{}
	}
	return finish(t, n, val, buf)
}

// fixedValues returns the values of a branch v of a CASE of type t: an
// array's values (mask -1), a constant's as one value in one (mask 0), nil
// for NULL.
func fixedValues[T fixed](t types.T, v Vec, one *[1]T) ([]T, int) {
	if v.IsNull() || v.Type.Kind != t.Kind {
		return nil, 0
	}
	if v.Const {
		one[0] = constOf[T](v.Value)
		return one[:], 0
	}
	vals := values[T](v.Array)
	if vals == nil {
		return nil, 0
	}
	return vals, -1
}

// validWords sets dst to the validity of branch v (of the CASE's type t)
// over n rows, a bit per row; bits past n are zero.
func validWords(t types.T, v Vec, n int, dst []uint64) {
	switch {
	case v.IsNull() || v.Type.Kind != t.Kind || (!v.Const && v.Array.NullN() == v.Array.Len() && v.Array.NullBitmapBytes() == nil):
		clear(dst)
	case v.Const || v.Array.NullN() == 0:
		setWords(dst, n)
	default:
		clear(dst)
		bitutil.CopyBitmap(v.Array.NullBitmapBytes(), v.Array.Data().Offset(), n, wordBytes(dst), 0)
	}
}

// truthWords sets dst to the rows where the BOOLEAN cond is TRUE (not
// FALSE, not NULL) and reports whether any row can be.
func truthWords(cond Vec, n int, dst []uint64) bool {
	if cond.Const || cond.Type.Kind == types.Null {
		if cond.Type.Kind != types.Null && cond.Value != nil && constBool(cond) {
			setWords(dst, n)
			return true
		}
		return false
	}
	a, ok := cond.Array.(*array.Boolean)
	if !ok || a.NullN() == a.Len() {
		return false
	}
	clear(dst)
	b := wordBytes(dst)
	vb, off := boolBits(a)
	bitutil.CopyBitmap(vb, off, n, b, 0)
	if a.NullN() > 0 {
		bitutil.BitmapAnd(b, a.NullBitmapBytes(), 0, int64(off), b, 0, int64(n))
	}
	return true
}

// setWords sets the first n bits of dst and clears the rest.
func setWords(dst []uint64, n int) {
	for w := range dst {
		dst[w] = ^uint64(0)
	}
	if n%64 != 0 {
		dst[len(dst)-1] = 1<<(n%64) - 1
	}
}

// asWords views the first nw*8 bytes of b as 64-bit words; on a
// little-endian machine (the only kind Arrow's bitmaps are read as words
// on here), bit i of the bitmap is bit i%64 of word i/64.
func asWords(b []byte, nw int) []uint64 {
	if nw == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), nw)
}

// wordBytes views words as the bytes of a bitmap.
func wordBytes(w []uint64) []byte {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}
