package functions

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"

	"github.com/streamsql/streamsql/types"
)

// RAND(), RAND_INTEGER(bound) and UUID(): a new value for every row (the
// planner never folds them: planner.nonDeterministic). The seeded forms
// RAND(seed) and RAND_INTEGER(seed, bound) are refused: one sequence per
// seed would need a generator per subtask that restarts do not replay.

func init() {
	register("RAND", func(args []types.T) (Resolved, error) {
		if len(args) > 0 {
			return Resolved{}, fmt.Errorf("RAND(seed) is not supported: a seeded sequence is not reproduced across subtasks and restarts; use RAND(): %w", ErrUnsupportedType)
		}
		rt := types.T{Kind: types.Double, NotNull: true}
		return Resolved{Ret: rt, Infallible: true, Kernel: func(ctx *Context, _ []Vec, n int) (Vec, error) {
			buf, out := newFixedBuf[float64](ctx.mem(), n)
			for i := range out {
				out[i] = rand.Float64()
			}
			return finish(rt, n, validity{}, buf), nil
		}}, nil
	})
	register("RAND_INTEGER", func(args []types.T) (Resolved, error) {
		if len(args) == 2 {
			return Resolved{}, fmt.Errorf("RAND_INTEGER(seed, bound) is not supported: a seeded sequence is not reproduced across subtasks and restarts; use RAND_INTEGER(bound): %w", ErrUnsupportedType)
		}
		if err := nargs("RAND_INTEGER", args, 1, 1); err != nil {
			return Resolved{}, err
		}
		if !args[0].IsInteger() && args[0].Kind != types.Null {
			return Resolved{}, errArgs("RAND_INTEGER", args)
		}
		rt := nullableFrom(types.IntType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{types.IntType}, Kernel: func(ctx *Context, args []Vec, n int) (Vec, error) {
			if args[0].IsNull() {
				return nullResult(ctx, types.IntType, args, n), nil
			}
			mem := ctx.mem()
			var one [1]int32
			bound, bm := operand(args[0], &one)
			val := andValidity(mem, args, n)
			buf, out := newFixedBuf[int32](mem, n)
			for i := range out {
				if !val.valid(i) {
					continue
				}
				b := bound[i&bm]
				if b <= 0 {
					val.release()
					buf.Release()
					return Vec{}, fmt.Errorf("RAND_INTEGER: the bound must be positive, got %d", b)
				}
				out[i] = rand.Int32N(b)
			}
			return finish(types.IntType, n, val, buf), nil
		}}, nil
	})
	register("UUID", func(args []types.T) (Resolved, error) {
		if err := nargs("UUID", args, 0, 0); err != nil {
			return Resolved{}, err
		}
		rt := types.T{Kind: types.String, NotNull: true}
		return Resolved{Ret: rt, Infallible: true, Kernel: func(ctx *Context, _ []Vec, n int) (Vec, error) {
			// A version 4 UUID (RFC 4122) from the system's secure random source,
			// read once per batch.
			raw := make([]byte, 16*n)
			if _, err := crand.Read(raw); err != nil {
				return Vec{}, fmt.Errorf("UUID: %v", err)
			}
			const digits = "0123456789abcdef"
			o := newStrOut(ctx.mem(), types.StringType, n, 36*n)
			for i := range n {
				u := raw[16*i : 16*i+16]
				u[6] = u[6]&0x0f | 0x40
				u[8] = u[8]&0x3f | 0x80
				o.grow(36)
				for j, c := range u {
					if j == 4 || j == 6 || j == 8 || j == 10 {
						o.buf = append(o.buf, '-')
					}
					o.buf = append(o.buf, digits[c>>4], digits[c&15])
				}
				o.endRow()
			}
			return o.finish(), nil
		}}, nil
	})
}
