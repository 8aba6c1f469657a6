package functions

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// FieldAccess is the name of the call that reads a field of a ROW
// (row.field): its arguments are the row and the field's position as a
// BIGINT literal. It is not a function a query can name; the planner
// builds it with ResolveField.
const FieldAccess = "."

// ResolveField resolves the access to field i of a value of the ROW type
// row. The result is the field's type, nullable when the row is (a NULL
// row has NULL fields). The kernel returns the row's child array itself
// (no copy of the values); only where the row is NULL and the child array
// does not already say NULL does it make a new validity bitmap for the
// batch.
func ResolveField(row types.T, i int) (Resolved, error) {
	if row.Kind != types.Row || i < 0 || i >= len(row.Fields) {
		return Resolved{}, fmt.Errorf("%w: no field %d in %s", ErrInvalidArgument, i, row)
	}
	ret := row.Fields[i].Type
	if !row.NotNull {
		ret.NotNull = false
	}
	return Resolved{Ret: ret, ArgTypes: []types.T{row, types.BigIntType}, Kernel: fieldKernel(ret, i), Infallible: true}, nil
}

func fieldKernel(t types.T, i int) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		a := args[0]
		if a.Const {
			if a.Value == nil {
				return ConstVec(t, nil), nil
			}
			return ConstVec(t, a.Value.([]types.Value)[i]), nil
		}
		st := a.Array.(*array.Struct)
		child := st.Field(i)
		if st.NullN() == 0 || nullsCovered(st, child) {
			child.Retain()
			return ArrayVec(t, child), nil
		}
		return ArrayVec(t, maskNulls(ctx.mem(), st, child)), nil
	}
}

// nullsCovered reports whether child is NULL at every row where st is.
func nullsCovered(st, child arrow.Array) bool {
	if child.NullN() < st.NullN() {
		return false
	}
	pb, cb := st.NullBitmapBytes(), child.NullBitmapBytes()
	if cb == nil {
		return false
	}
	po, co := st.Data().Offset(), child.Data().Offset()
	n := st.Len()
	k := 0
	if po%8 == 0 && co%8 == 0 {
		p, c := pb[po/8:], cb[co/8:]
		for ; k+8 <= n; k += 8 {
			if c[k/8]&^p[k/8] != 0 {
				return false
			}
		}
	}
	for ; k < n; k++ {
		if !bitutil.BitIsSet(pb, po+k) && bitutil.BitIsSet(cb, co+k) {
			return false
		}
	}
	return true
}

// maskNulls returns child with the NULLs of st added: the same value
// buffers, a new validity bitmap.
func maskNulls(mem memory.Allocator, st, child arrow.Array) arrow.Array {
	d := child.Data()
	n, off := d.Len(), d.Offset()
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(off + n))))
	if cb := child.NullBitmapBytes(); cb != nil {
		bitutil.BitmapAnd(st.NullBitmapBytes(), cb, int64(st.Data().Offset()), int64(off), valid.Bytes(), int64(off), int64(n))
	} else {
		bitutil.CopyBitmap(st.NullBitmapBytes(), st.Data().Offset(), n, valid.Bytes(), off)
	}
	bufs := append([]*memory.Buffer{valid}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), n, bufs, d.Children(), array.UnknownNullCount, off)
	valid.Release()
	out := array.MakeFromData(nd)
	nd.Release()
	return out
}

// RowConstructor is the name of the call ROW(a, b, ...) (and (a, b, ...)
// where a value is expected).
const RowConstructor = "ROW"

// ResolveRow resolves ROW(args...): a ROW that is never NULL, whose
// fields are named EXPR$0, EXPR$1, ... as in Flink and have the
// arguments' types. The kernel puts the argument arrays under one struct
// array without copying them.
func ResolveRow(args []types.T) (Resolved, error) {
	if len(args) == 0 {
		return Resolved{}, fmt.Errorf("ROW needs at least one value")
	}
	ret := types.T{Kind: types.Row, NotNull: true}
	for i, a := range args {
		ret.Fields = append(ret.Fields, types.Column{Name: fmt.Sprintf("EXPR$%d", i), Type: a})
	}
	st := ret.ArrowType()
	k := func(ctx *Context, args []Vec, n int) (Vec, error) {
		children := make([]arrow.ArrayData, len(args))
		for i, a := range args {
			arr := toArray(ctx.mem(), a, n)
			children[i] = arr.Data()
			defer arr.Release()
		}
		d := array.NewData(st, n, []*memory.Buffer{nil}, children, 0, 0)
		defer d.Release()
		return ArrayVec(ret, array.MakeFromData(d)), nil
	}
	return Resolved{Ret: ret, ArgTypes: args, Kernel: folding(ret, k), Infallible: true}, nil
}

// castRow casts a ROW to a ROW of as many fields, field by field (names
// are the target's); the rows that are NULL stay NULL.
func castRow(from, to types.T, try bool) (Kernel, error) {
	if from.Kind != types.Row || to.Kind != types.Row || len(from.Fields) != len(to.Fields) {
		return nil, fmt.Errorf("cannot cast %s to %s", from, to)
	}
	ks := make([]Kernel, len(from.Fields))
	for i, f := range from.Fields {
		k, err := castKernel(f.Type, to.Fields[i].Type, try)
		if err != nil {
			return nil, fmt.Errorf("cannot cast %s to %s: field %d: %w", from, to, i+1, err)
		}
		ks[i] = k
	}
	st := to.ArrowType()
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		src := args[0].Array.(*array.Struct)
		children := make([]arrow.ArrayData, len(ks))
		var err error
		for i, k := range ks {
			fa := src.Field(i)
			var r Vec
			if r, err = k(ctx, []Vec{ArrayVec(from.Fields[i].Type, fa)}, n); err != nil {
				break
			}
			arr := toArray(ctx.mem(), r, n)
			r.Release()
			children[i] = arr.Data()
			defer arr.Release()
		}
		if err != nil {
			return Vec{}, err
		}
		d := src.Data()
		valid := d.Buffers()[0]
		if valid != nil && d.Offset() != 0 {
			// The fields are cast from offset 0: so is the bitmap.
			valid = memory.NewResizableBuffer(ctx.mem())
			valid.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(d.Buffers()[0].Bytes(), d.Offset(), n, valid.Bytes(), 0)
			defer valid.Release()
		}
		nd := array.NewData(st, n, []*memory.Buffer{valid}, children, d.NullN(), 0)
		defer nd.Release()
		return ArrayVec(to, array.MakeFromData(nd)), nil
	}, nil
}
