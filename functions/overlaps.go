package functions

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("OVERLAPS", resolveOverlaps)
}

// resolveOverlaps: (s0, x0) OVERLAPS (s1, x1), written OVERLAPS(s0, x0,
// s1, x1), is TRUE when the two periods share a point. Each period runs
// from its start s to its end x, or s + x when x is an interval, its ends
// taken in order (a period may be written backwards); the periods overlap
// when each one's end is at or after the other's start, as in Flink
// (Calcite's rewrite of OVERLAPS). NULL ends give NULL or FALSE as the
// comparisons do.
func resolveOverlaps(args []types.T) (Resolved, error) {
	if err := nargs("OVERLAPS", args, 4, 4); err != nil {
		return Resolved{}, err
	}
	var temporal []types.T
	for i, a := range args {
		switch {
		case a.IsTemporal():
			temporal = append(temporal, a)
		case i%2 == 1 && a.IsInterval(), a.Kind == types.Null:
		default:
			return Resolved{}, errArgs("OVERLAPS", args)
		}
	}
	ct, ok := CommonType(temporal...)
	if !ok || len(temporal) == 0 {
		return Resolved{}, errArgs("OVERLAPS", args)
	}
	ct = ct.Nullable()
	ats := []types.T{ct, ct, ct, ct}
	var plus [2]*Resolved
	for leg := range 2 {
		x := args[2*leg+1]
		if !x.IsInterval() {
			continue
		}
		ats[2*leg+1] = x.Nullable()
		r, err := registry["+"].Resolve([]types.T{ct, x.Nullable()})
		if err != nil || r.Ret.Kind != ct.Kind {
			return Resolved{}, fmt.Errorf("OVERLAPS: cannot add %s to %s", x, ct)
		}
		plus[leg] = &r
	}
	le, err1 := registry["<="].Resolve([]types.T{ct, ct})
	ge, err2 := registry[">="].Resolve([]types.T{ct, ct})
	pick, err3 := resolveIf([]types.T{types.BooleanType, ct, ct})
	and, err4 := registry["AND"].Resolve([]types.T{types.BooleanType, types.BooleanType})
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return Resolved{}, errArgs("OVERLAPS", args)
		}
	}
	rt := types.BooleanType
	return Resolved{Ret: rt, ArgTypes: ats, Kernel: folding(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		var temps []Vec
		defer func() { releaseAll(temps) }()
		run := func(r Resolved, in ...Vec) (Vec, error) {
			v, err := r.Kernel(ctx, in, n)
			if err == nil {
				temps = append(temps, v)
			}
			return v, err
		}
		var lo, hi [2]Vec
		for leg := range 2 {
			s, e := args[2*leg], args[2*leg+1]
			if plus[leg] != nil {
				var err error
				if e, err = run(*plus[leg], s, e); err != nil {
					return Vec{}, err
				}
			}
			inOrder, err := run(le, s, e)
			if err != nil {
				return Vec{}, err
			}
			if lo[leg], err = run(pick, inOrder, s, e); err != nil {
				return Vec{}, err
			}
			if hi[leg], err = run(pick, inOrder, e, s); err != nil {
				return Vec{}, err
			}
		}
		a, err := run(ge, hi[0], lo[1])
		if err != nil {
			return Vec{}, err
		}
		b, err := run(ge, hi[1], lo[0])
		if err != nil {
			return Vec{}, err
		}
		out, err := and.Kernel(ctx, []Vec{a, b}, n)
		return out, err
	})}, nil
}
