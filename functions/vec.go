package functions

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// fixed is the set of physical element types of fixed-width columns.
type fixed interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~float32 | ~float64 | decimal128.Num
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type floating interface{ ~float32 | ~float64 }

type ordered interface{ integer | floating }

// values returns the typed values of a fixed-width array (offset applied).
func values[T fixed](a arrow.Array) []T {
	d := a.Data()
	b := d.Buffers()[1]
	if b == nil || b.Len() == 0 {
		return nil
	}
	var z T
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.Bytes()))), b.Len()/int(unsafe.Sizeof(z)))
	return all[d.Offset() : d.Offset()+d.Len()]
}

// constOf converts a Const value to the physical element type T.
func constOf[T fixed](v types.Value) T {
	var z T
	switch x := v.(type) {
	case int64:
		return convertNum[T](x)
	case int32:
		return convertNum[T](int64(x))
	case float64:
		switch p := any(&z).(type) {
		case *float32:
			*p = float32(x)
		case *float64:
			*p = x
		default:
			return convertNum[T](int64(x))
		}
		return z
	case decimal128.Num:
		if p, ok := any(&z).(*decimal128.Num); ok {
			*p = x
		}
		return z
	case bool:
		if x {
			return convertNum[T](1)
		}
	}
	return z
}

func convertNum[T fixed](x int64) T {
	var z T
	switch p := any(&z).(type) {
	case *int8:
		*p = int8(x)
	case *int16:
		*p = int16(x)
	case *int32:
		*p = int32(x)
	case *int64:
		*p = x
	case *float32:
		*p = float32(x)
	case *float64:
		*p = float64(x)
	case *decimal128.Num:
		*p = decimal128.FromI64(x)
	}
	return z
}

// operand returns v's values and an index mask: the value of row i is
// vals[i&mask]. A Const is a one-element slice with mask 0, so loops need no
// special case for constants.
func operand[T fixed](v Vec, one *[1]T) ([]T, int) {
	if v.Const {
		one[0] = constOf[T](v.Value)
		return one[:], 0
	}
	return values[T](v.Array), -1
}

// validity is the combined validity of a result: nil bitmap when no row is NULL.
type validity struct {
	buf   *memory.Buffer // nil: all valid
	nulls int
}

func (v validity) bits() []byte {
	if v.buf == nil {
		return nil
	}
	return v.buf.Bytes()
}

func (v validity) valid(i int) bool {
	return v.buf == nil || bitutil.BitIsSet(v.buf.Bytes(), i)
}

// release is for error paths before the bitmap is handed to an array.
func (v validity) release() {
	if v.buf != nil {
		v.buf.Release()
	}
}

func newBitmap(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(b.Bytes())
	return b
}

// andValidity returns the AND of the validity of the non-Const args over n
// rows. The caller has already handled Const NULL args.
func andValidity(mem memory.Allocator, args []Vec, n int) validity {
	var out *memory.Buffer
	for _, a := range args {
		if a.Const || a.Array.NullN() == 0 {
			continue
		}
		src := a.Array.NullBitmapBytes()
		off := int64(a.Array.Data().Offset())
		if src == nil { // an arrow Null array: every row is NULL
			if out == nil {
				out = newBitmap(mem, n)
			}
			clear(out.Bytes())
			continue
		}
		if out == nil {
			out = newBitmap(mem, n)
			bitutil.CopyBitmap(src, int(off), n, out.Bytes(), 0)
			continue
		}
		ob := out.Bytes()
		bitutil.BitmapAnd(ob, src, 0, off, ob, 0, int64(n))
	}
	if out == nil {
		return validity{}
	}
	return validity{buf: out, nulls: n - bitutil.CountSetBits(out.Bytes(), 0, n)}
}

// isValid reports whether row i of v is not NULL.
func isValid(v Vec, i int) bool {
	if v.Type.Kind == types.Null {
		return false
	}
	if v.Const {
		return v.Value != nil
	}
	return v.Array.IsValid(i)
}

// newFixedBuf allocates a data buffer for n values of T.
func newFixedBuf[T fixed](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var z T
	b := memory.NewResizableBuffer(mem)
	b.Resize(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return b, nil
	}
	return b, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.Bytes()))), n)
}

// finish wraps data and validity buffers into an array of t and a Vec,
// taking over the caller's references.
func finish(t types.T, n int, val validity, data *memory.Buffer) Vec {
	d := array.NewData(t.ArrowType(), n, []*memory.Buffer{val.buf, data}, nil, val.nulls, 0)
	arr := array.MakeFromData(d)
	d.Release()
	if val.buf != nil {
		val.buf.Release()
	}
	data.Release()
	return Vec{Type: t, Array: arr}
}

// boolBits returns a boolean array's value bitmap and bit offset.
func boolBits(a arrow.Array) ([]byte, int) {
	d := a.Data()
	return d.Buffers()[1].Bytes(), d.Offset()
}

// constBool reads a Const boolean.
func constBool(v Vec) bool { b, _ := v.Value.(bool); return b }

// boolAt reads row i of a boolean Vec (ignoring validity).
func boolAt(v Vec, i int) bool {
	if v.Const {
		return constBool(v)
	}
	return v.Array.(*array.Boolean).Value(i)
}

// strOut builds a STRING or BYTES array directly into allocator buffers.
type strOut struct {
	mem     memory.Allocator
	t       types.T
	offsets *memory.Buffer
	offs    []int32
	data    *memory.Buffer
	buf     []byte
	valid   *memory.Buffer
	nulls   int
	n       int
}

func newStrOut(mem memory.Allocator, t types.T, n, dataHint int) *strOut {
	o := &strOut{t: t, mem: mem}
	o.offsets = memory.NewResizableBuffer(mem)
	o.offsets.Resize((n + 1) * 4)
	o.offs = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(o.offsets.Bytes()))), n+1)
	o.offs[0] = 0
	o.data = memory.NewResizableBuffer(mem)
	if dataHint < 64 {
		dataHint = 64
	}
	o.data.Reserve(dataHint)
	o.buf = o.data.Buf()[:0]
	return o
}

// withValidity starts the result from a precomputed validity bitmap.
func (o *strOut) withValidity(v validity) {
	o.valid, o.nulls = v.buf, v.nulls
}

func (o *strOut) grow(k int) {
	if len(o.buf)+k <= cap(o.buf) {
		return
	}
	nc := max(2*cap(o.buf), len(o.buf)+k)
	l := len(o.buf)
	o.data.Reserve(nc)
	o.buf = o.data.Buf()[:l]
}

// appendBytes adds the next row's value.
func (o *strOut) appendBytes(b []byte) {
	o.grow(len(b))
	o.buf = append(o.buf, b...)
	o.n++
	o.offs[o.n] = int32(len(o.buf))
}

func (o *strOut) appendString(s string) {
	o.grow(len(s))
	o.buf = append(o.buf, s...)
	o.n++
	o.offs[o.n] = int32(len(o.buf))
}

// endRow ends a row whose bytes the caller appended to o.buf (after a
// grow with an estimate of its size). If append outgrew the buffer, the
// bytes are moved back into it.
func (o *strOut) endRow() {
	if len(o.buf) > 0 && unsafe.SliceData(o.buf) != unsafe.SliceData(o.data.Buf()) {
		l, nb := len(o.buf), o.buf
		o.data.Reserve(max(2*o.data.Cap(), l))
		o.buf = o.data.Buf()[:l]
		copy(o.buf, nb)
	}
	o.n++
	o.offs[o.n] = int32(len(o.buf))
}

// appendNull adds a NULL row.
func (o *strOut) appendNull() {
	if o.valid == nil {
		o.valid = newBitmap(o.mem, len(o.offs)-1)
		bitutil.SetBitsTo(o.valid.Bytes(), 0, int64(o.n), true)
	}
	o.nulls++
	o.n++
	o.offs[o.n] = int32(len(o.buf))
}

// appendValid marks the row about to be appended valid when a validity
// bitmap is being built row by row.
func (o *strOut) markValid(i int) {
	if o.valid != nil {
		bitutil.SetBit(o.valid.Bytes(), i)
	}
}

func (o *strOut) finish() Vec {
	o.data.ResizeNoShrink(len(o.buf))
	o.offsets.Resize((o.n + 1) * 4)
	d := array.NewData(o.t.ArrowType(), o.n, []*memory.Buffer{o.valid, o.offsets, o.data}, nil, o.nulls, 0)
	arr := array.MakeFromData(d)
	d.Release()
	if o.valid != nil {
		o.valid.Release()
	}
	o.offsets.Release()
	o.data.Release()
	return Vec{Type: o.t, Array: arr}
}

func (o *strOut) release() {
	if o.valid != nil {
		o.valid.Release()
	}
	o.offsets.Release()
	o.data.Release()
}

// strArg gives access to the rows of a STRING or BYTES Vec without
// allocation.
type strArg struct {
	c     bool
	cv    string
	offs  []int32
	data  []byte
	arr   arrow.Array
	nulls bool
}

func newStrArg(v Vec) strArg {
	if v.Const {
		switch x := v.Value.(type) {
		case string:
			return strArg{c: true, cv: x}
		case []byte:
			return strArg{c: true, cv: unsafe.String(unsafe.SliceData(x), len(x))}
		}
		return strArg{c: true}
	}
	d := v.Array.Data()
	s := strArg{arr: v.Array, nulls: v.Array.NullN() > 0}
	s.offs = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(d.Buffers()[1].Bytes()))), d.Offset()+d.Len()+1)[d.Offset():]
	if d.Buffers()[2] != nil {
		s.data = d.Buffers()[2].Bytes()
	}
	return s
}

// at returns row i as a string sharing the array's memory.
func (s *strArg) at(i int) string {
	if s.c {
		return s.cv
	}
	b := s.data[s.offs[i]:s.offs[i+1]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// totalLen is the byte size of the argument's data over n rows (a hint).
func (s *strArg) totalLen(n int) int {
	if s.c {
		return len(s.cv) * n
	}
	return int(s.offs[len(s.offs)-1] - s.offs[0])
}

// boolOut builds a BOOLEAN result bitmap.
func newBoolBuf(mem memory.Allocator, n int) (*memory.Buffer, []byte) {
	b := newBitmap(mem, n)
	return b, b.Bytes()
}

// newDataLike makes an array sharing d's buffers with another logical type
// of the same layout (STRING <-> BYTES).
func newDataLike(d arrow.ArrayData, t types.T) arrow.Array {
	nd := array.NewData(t.ArrowType(), d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd)
}
