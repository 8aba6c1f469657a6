package functions

import (
	"github.com/streamsql/streamsql/types"
)

func init() {
	register("GREATEST", resolveGreatest("GREATEST", ">="))
	register("LEAST", resolveGreatest("LEAST", "<="))
}

// resolveGreatest: GREATEST(a, b, ...) and LEAST(a, b, ...) are the
// largest and smallest of their arguments in their common type, NULL when
// any argument is NULL, as Flink's. They are built from the comparison
// (op) and IF kernels, a batch at a time.
func resolveGreatest(name, op string) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, -1); err != nil {
			return Resolved{}, err
		}
		ct, ok := CommonType(args...)
		if !ok || ct.Kind == types.Row {
			return Resolved{}, errArgs(name, args)
		}
		if ct.Kind == types.Null {
			ct = types.IntType
		}
		at := ct.Nullable()
		cmp, err := registry[op].Resolve([]types.T{at, at})
		if err != nil {
			return Resolved{}, errArgs(name, args)
		}
		pick, err := resolveIf([]types.T{types.BooleanType, at, at})
		if err != nil {
			return Resolved{}, errArgs(name, args)
		}
		return Resolved{Ret: nullableFrom(ct, args), ArgTypes: repeatT(at, len(args)), Infallible: cmp.Infallible,
			Kernel: folding(at, func(ctx *Context, args []Vec, n int) (Vec, error) {
				mem := ctx.mem()
				r, owned := args[0], false
				drop := func() {
					if owned {
						r.Release()
					}
				}
				for _, a := range args[1:] {
					c, err := cmp.Kernel(ctx, []Vec{r, a}, n)
					if err != nil {
						drop()
						return Vec{}, err
					}
					// r op a keeps r; FALSE (or NULL, settled below) takes a.
					next, err := pick.Kernel(ctx, []Vec{c, r, a}, n)
					c.Release()
					drop()
					if err != nil {
						return Vec{}, err
					}
					r, owned = next, !next.Const
				}
				// NULL wherever an argument is NULL.
				val := andValidity(mem, args, n)
				if val.buf == nil {
					if !owned && !r.Const {
						r.Array.Retain()
					}
					return r, nil
				}
				buf, out := newBoolBuf(mem, n)
				for i := range n {
					if !val.valid(i) {
						out[i>>3] |= 1 << uint(i&7)
					}
				}
				val.release()
				anyNull := Vec{Type: types.BooleanType, Array: finish(types.BooleanType, n, validity{}, buf).Array}
				res, err := pick.Kernel(ctx, []Vec{anyNull, ConstVec(at, nil), r}, n)
				anyNull.Release()
				drop()
				return res, err
			})}, nil
	}
}
