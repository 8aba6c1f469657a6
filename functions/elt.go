package functions

import (
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("ELT", resolveElt)
}

// resolveElt: ELT(k, e1, e2, ...) is e_k (from 1), NULL when k is NULL or
// not between 1 and the number of expressions, as Flink's; the
// expressions are all STRING or all BYTES, and only e_k's NULL matters.
func resolveElt(args []types.T) (Resolved, error) {
	if err := nargs("ELT", args, 2, -1); err != nil {
		return Resolved{}, err
	}
	if !args[0].IsInteger() && args[0].Kind != types.Null {
		return Resolved{}, errArgs("ELT", args)
	}
	t := types.StringType
	for _, a := range args[1:] {
		if a.Kind == types.Bytes {
			t = types.BytesType
		}
	}
	for _, a := range args[1:] {
		if a.Kind != t.Kind && a.Kind != types.Null {
			return Resolved{}, errArgs("ELT", args)
		}
	}
	ats := append([]types.T{types.BigIntType}, repeatT(t, len(args)-1)...)
	return Resolved{Ret: t, ArgTypes: ats, Infallible: true, Kernel: folding(t, func(ctx *Context, args []Vec, n int) (Vec, error) {
		var one [1]int64
		idx, im := operand(args[0], &one)
		valid := make([]validBits, len(args))
		strs := make([]strArg, len(args))
		for j, a := range args {
			valid[j] = newValidBits(a)
			if j > 0 {
				strs[j] = newStrArg(a)
			}
		}
		o := newStrOut(ctx.mem(), t, n, 0)
		for i := range n {
			if !valid[0].at(i) {
				o.appendNull()
				continue
			}
			k := idx[i&im]
			if k < 1 || k >= int64(len(args)) || !valid[k].at(i) {
				o.appendNull()
				continue
			}
			o.markValid(i)
			o.appendString(strs[k].at(i))
		}
		return o.finish(), nil
	})}, nil
}

// validBits reads the validity of a Vec's rows without a call per row.
type validBits struct {
	c, cv bool
	bits  []byte
	off   int
}

func newValidBits(v Vec) validBits {
	switch {
	case v.Type.Kind == types.Null:
		return validBits{c: true}
	case v.Const:
		return validBits{c: true, cv: v.Value != nil}
	case v.Array.NullN() == 0:
		return validBits{c: true, cv: true}
	}
	return validBits{bits: v.Array.NullBitmapBytes(), off: v.Array.Data().Offset()}
}

func (b validBits) at(i int) bool {
	if b.c {
		return b.cv
	}
	return bitutil.BitIsSet(b.bits, b.off+i)
}
