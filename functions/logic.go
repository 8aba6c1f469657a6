package functions

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("AND", resolveLogic("AND", true))
	register("OR", resolveLogic("OR", false))
	register("NOT", resolveNot)
	register("IS NULL", resolveIsNull(true))
	register("IS NOT NULL", resolveIsNull(false))
	register("IS TRUE", resolveIsBool("IS TRUE", true, false))
	register("IS FALSE", resolveIsBool("IS FALSE", false, false))
	register("IS NOT TRUE", resolveIsBool("IS NOT TRUE", true, true))
	register("IS NOT FALSE", resolveIsBool("IS NOT FALSE", false, true))
}

func boolArgs(name string, args []types.T, lo, hi int) ([]types.T, error) {
	if err := nargs(name, args, lo, hi); err != nil {
		return nil, err
	}
	for _, a := range args {
		if a.Kind != types.Boolean && a.Kind != types.Null {
			return nil, errArgs(name, args)
		}
	}
	return repeatT(types.BooleanType, len(args)), nil
}

// alignedBits returns a boolean array's value and validity bitmaps starting
// at bit 0 (copying when the array is sliced at a non-byte offset); valid
// is nil when there are no NULLs.
func alignedBits(mem memory.Allocator, a arrow.Array, n int, tmp *[]*memory.Buffer) (vals, valid []byte) {
	off := a.Data().Offset()
	vb, _ := boolBits(a)
	if off%8 == 0 {
		vals = vb[off/8:]
	} else {
		b := newBitmap(mem, n)
		*tmp = append(*tmp, b)
		bitutil.CopyBitmap(vb, off, n, b.Bytes(), 0)
		vals = b.Bytes()
	}
	if a.NullN() == 0 {
		return vals, nil
	}
	nb := a.NullBitmapBytes()
	if off%8 == 0 {
		return vals, nb[off/8:]
	}
	b := newBitmap(mem, n)
	*tmp = append(*tmp, b)
	bitutil.CopyBitmap(nb, off, n, b.Bytes(), 0)
	return vals, b.Bytes()
}

func resolveLogic(name string, isAnd bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		ats, err := boolArgs(name, args, 1, -1)
		if err != nil {
			return Resolved{}, err
		}
		rt := nullableFrom(types.BooleanType, args)
		return Resolved{Ret: rt, ArgTypes: ats, Kernel: logicKernel(isAnd), Infallible: true}, nil
	}
}

// logicKernel is n-ary three-valued AND (isAnd) or OR. For AND: FALSE if
// any argument is FALSE, else NULL if any is NULL, else TRUE; OR dually.
func logicKernel(isAnd bool) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		// Constants first: a dominating constant decides every row.
		unknown := false
		var arrs []Vec
		for _, a := range args {
			if !a.Const {
				arrs = append(arrs, a)
				continue
			}
			if a.Value == nil {
				unknown = true
				continue
			}
			if constBool(a) != isAnd { // FALSE for AND, TRUE for OR
				if allConst(args) {
					return ConstVec(types.BooleanType, !isAnd), nil
				}
				return constBoolArray(ctx.mem(), !isAnd, n), nil
			}
		}
		if len(arrs) == 0 {
			if unknown {
				return ConstVec(types.BooleanType, nil), nil
			}
			return ConstVec(types.BooleanType, isAnd), nil
		}
		mem := ctx.mem()
		nb := int(bitutil.BytesForBits(int64(n)))
		// dom: some argument has the dominating value (FALSE for AND);
		// all: every argument has the other value, non-NULL.
		domBuf, dom := newBoolBuf(mem, n)
		allBuf, all := newBoolBuf(mem, n)
		if !unknown {
			for j := range all {
				all[j] = 0xff
			}
		}
		var tmp []*memory.Buffer
		for _, a := range arrs {
			vals, valid := alignedBits(mem, a.Array, n, &tmp)
			for j := range nb {
				v := vals[j]
				if !isAnd {
					v = ^v
				}
				m := byte(0xff)
				if valid != nil {
					m = valid[j]
				}
				dom[j] |= m &^ v
				all[j] &= m & v
			}
		}
		for _, b := range tmp {
			b.Release()
		}
		// valid = dom | all; value = all for AND, dom for OR.
		for j := range nb {
			dom[j] |= all[j]
		}
		nulls := n - bitutil.CountSetBits(dom, 0, n)
		var val validity
		if nulls > 0 {
			val = validity{buf: domBuf, nulls: nulls}
		} else {
			domBuf.Release()
		}
		if !isAnd {
			// value = valid && !all
			for j := range nb {
				all[j] = ^all[j]
			}
		}
		return finish(types.BooleanType, n, val, allBuf), nil
	}
}

func constBoolArray(mem memory.Allocator, v bool, n int) Vec {
	buf, out := newBoolBuf(mem, n)
	if v {
		bitutil.SetBitsTo(out, 0, int64(n), true)
	}
	return finish(types.BooleanType, n, validity{}, buf)
}

func resolveNot(args []types.T) (Resolved, error) {
	ats, err := boolArgs("NOT", args, 1, 1)
	if err != nil {
		return Resolved{}, err
	}
	rt := nullableFrom(types.BooleanType, args)
	return Resolved{Ret: rt, ArgTypes: ats, Infallible: true, Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		a := args[0].Array
		val := andValidity(mem, args, n)
		buf, out := newBoolBuf(mem, n)
		vb, off := boolBits(a)
		bitutil.InvertBitmap(vb, off, n, out, 0)
		return finish(types.BooleanType, n, val, buf), nil
	})}, nil
}

func resolveIsNull(isNull bool) func(args []types.T) (Resolved, error) {
	name := "IS NULL"
	if !isNull {
		name = "IS NOT NULL"
	}
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 1); err != nil {
			return Resolved{}, err
		}
		rt := types.T{Kind: types.Boolean, NotNull: true}
		at := args[0].Nullable()
		return Resolved{Ret: rt, ArgTypes: []types.T{at}, Infallible: true, Kernel: func(ctx *Context, args []Vec, n int) (Vec, error) {
			a := args[0]
			if a.Const {
				return ConstVec(rt, (a.Value == nil) == isNull), nil
			}
			mem := ctx.mem()
			buf, out := newBoolBuf(mem, n)
			arr := a.Array
			switch {
			case arr.NullN() == 0:
				bitutil.SetBitsTo(out, 0, int64(n), !isNull)
			case arr.NullN() == arr.Len() && arr.NullBitmapBytes() == nil:
				bitutil.SetBitsTo(out, 0, int64(n), isNull)
			case isNull:
				bitutil.InvertBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, out, 0)
			default:
				bitutil.CopyBitmap(arr.NullBitmapBytes(), arr.Data().Offset(), n, out, 0)
			}
			return finish(types.BooleanType, n, validity{}, buf), nil
		}}, nil
	}
}

// resolveIsBool: IS TRUE (want=true), IS FALSE, and their negations; never NULL.
func resolveIsBool(name string, want, negate bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		ats, err := boolArgs(name, args, 1, 1)
		if err != nil {
			return Resolved{}, err
		}
		rt := types.T{Kind: types.Boolean, NotNull: true}
		return Resolved{Ret: rt, ArgTypes: ats, Infallible: true, Kernel: func(ctx *Context, args []Vec, n int) (Vec, error) {
			a := args[0]
			if a.Const {
				r := a.Value != nil && constBool(a) == want
				return ConstVec(rt, r != negate), nil
			}
			mem := ctx.mem()
			buf, out := newBoolBuf(mem, n)
			for i := range n {
				r := a.Array.IsValid(i) && boolAt(a, i) == want
				if r != negate {
					out[i>>3] |= 1 << uint(i&7)
				}
			}
			return finish(types.BooleanType, n, validity{}, buf), nil
		}}, nil
	}
}
