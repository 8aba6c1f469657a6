package exec

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Gathering the rows a guard selects and scattering a result back: fixed
// width and boolean columns directly on their buffers, other types (strings,
// bytes) through Arrow's take kernel.

// fixedWidth returns the byte width of a's values when they are fixed-width
// and byte-sized (not booleans), else 0.
func fixedWidth(a arrow.Array) int {
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	if !ok || a.DataType().ID() == arrow.BOOL {
		return 0
	}
	switch bw := fw.BitWidth(); bw {
	case 8, 16, 32, 64, 128:
		return bw / 8
	}
	return 0
}

// gatherRows returns the rows sel of a (row indexes, increasing).
func gatherRows(cctx context.Context, mem memory.Allocator, a arrow.Array, sel []int32, idx *array.Int32Builder) (arrow.Array, error) {
	n := len(sel)
	d := a.Data()
	off := d.Offset()
	isBool := a.DataType().ID() == arrow.BOOL
	w := fixedWidth(a)
	if w == 0 && !isBool {
		idx.AppendValues(sel, nil)
		ia := idx.NewArray()
		defer ia.Release()
		return compute.TakeArray(cctx, a, ia)
	}
	var valid *memory.Buffer
	nulls := 0
	if a.NullN() > 0 {
		valid = newBits(mem, n)
		vb := valid.Bytes()
		for j, i := range sel {
			if a.IsValid(int(i)) {
				bitutil.SetBit(vb, j)
			} else {
				nulls++
			}
		}
	}
	src := d.Buffers()[1].Bytes()
	var vals *memory.Buffer
	if isBool {
		vals = newBits(mem, n)
		ob := vals.Bytes()
		for j, i := range sel {
			if bitutil.BitIsSet(src, off+int(i)) {
				bitutil.SetBit(ob, j)
			}
		}
	} else {
		vals = memory.NewResizableBuffer(mem)
		vals.Resize(n * w)
		src = src[off*w:]
		dst := vals.Bytes()
		switch w {
		case 1:
			gatherT(as[uint8](dst), as[uint8](src), sel)
		case 2:
			gatherT(as[uint16](dst), as[uint16](src), sel)
		case 4:
			gatherT(as[uint32](dst), as[uint32](src), sel)
		case 8:
			gatherT(as[uint64](dst), as[uint64](src), sel)
		case 16:
			gatherT(as[[2]uint64](dst), as[[2]uint64](src), sel)
		}
	}
	return makeArray(a.DataType(), n, valid, vals, nulls), nil
}

// scatterRows returns an array of len(mask) rows whose row i is the next
// row of r where mask[i] is set, NULL where it is not. r has as many rows
// as mask has set.
func scatterRows(cctx context.Context, mem memory.Allocator, r arrow.Array, mask []bool, idx *array.Int32Builder) (arrow.Array, error) {
	n := len(mask)
	isBool := r.DataType().ID() == arrow.BOOL
	w := fixedWidth(r)
	if w == 0 && !isBool {
		idx.Reserve(n)
		j := int32(0)
		for _, m := range mask {
			if m {
				idx.UnsafeAppend(j)
				j++
			} else {
				idx.UnsafeAppendBoolToBitmap(false)
			}
		}
		ia := idx.NewArray()
		defer ia.Release()
		return compute.TakeArray(cctx, r, ia)
	}
	d := r.Data()
	off := d.Offset()
	valid := newBits(mem, n)
	vb := valid.Bytes()
	hasNulls := r.NullN() > 0
	nulls := 0
	j := 0
	for i, m := range mask {
		if m && (!hasNulls || r.IsValid(j)) {
			bitutil.SetBit(vb, i)
		} else {
			nulls++
		}
		if m {
			j++
		}
	}
	src := d.Buffers()[1].Bytes()
	var vals *memory.Buffer
	if isBool {
		vals = newBits(mem, n)
		ob := vals.Bytes()
		j := 0
		for i, m := range mask {
			if m {
				if bitutil.BitIsSet(src, off+j) {
					bitutil.SetBit(ob, i)
				}
				j++
			}
		}
	} else {
		vals = memory.NewResizableBuffer(mem)
		vals.Resize(n * w)
		src = src[off*w:]
		dst := vals.Bytes()
		switch w {
		case 1:
			scatterT(as[uint8](dst), as[uint8](src), mask)
		case 2:
			scatterT(as[uint16](dst), as[uint16](src), mask)
		case 4:
			scatterT(as[uint32](dst), as[uint32](src), mask)
		case 8:
			scatterT(as[uint64](dst), as[uint64](src), mask)
		case 16:
			scatterT(as[[2]uint64](dst), as[[2]uint64](src), mask)
		}
	}
	if nulls == 0 {
		valid.Release()
		valid = nil
	}
	return makeArray(r.DataType(), n, valid, vals, nulls), nil
}

func gatherT[T any](dst, src []T, sel []int32) {
	for j, i := range sel {
		dst[j] = src[i]
	}
}

func scatterT[T any](dst, src []T, mask []bool) {
	var zero T
	j := 0
	for i, m := range mask {
		if m {
			dst[i] = src[j]
			j++
		} else {
			dst[i] = zero
		}
	}
}

// as views b as a slice of T (b's length a multiple of T's size).
func as[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// newBits returns a zeroed bitmap buffer of n bits.
func newBits(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(b.Bytes())
	return b
}

// makeArray builds an array of n rows over its validity (nil: no NULLs)
// and value buffers, taking them over.
func makeArray(t arrow.DataType, n int, valid, vals *memory.Buffer, nulls int) arrow.Array {
	d := array.NewData(t, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	if valid != nil {
		valid.Release()
	}
	vals.Release()
	defer d.Release()
	return array.MakeFromData(d)
}
