package functions

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("CASE", resolveCase)
	register("IF", resolveIf)
	register("COALESCE", resolveCoalesce)
	alias("IFNULL", "COALESCE")
	register("NULLIF", resolveNullIf)
}

// resolveCase resolves CASE WHEN w1 THEN t1 ... [ELSE e] END passed as
// (w1, t1, w2, t2, ..., [e]). A simple CASE x WHEN v THEN ... is rewritten
// by the planner into x = v conditions. The result type is the common type
// of the branches.
func resolveCase(args []types.T) (Resolved, error) {
	if len(args) < 2 {
		return Resolved{}, fmt.Errorf("CASE needs at least one WHEN ... THEN")
	}
	var branches []types.T
	for i := 0; i+1 < len(args); i += 2 {
		if args[i].Kind != types.Boolean && args[i].Kind != types.Null {
			return Resolved{}, fmt.Errorf("CASE WHEN condition must be BOOLEAN, not %s", args[i])
		}
		branches = append(branches, args[i+1])
	}
	hasElse := len(args)%2 == 1
	if hasElse {
		branches = append(branches, args[len(args)-1])
	}
	rt, ok := CommonType(branches...)
	if !ok {
		return Resolved{}, fmt.Errorf("CASE branches have no common type: %s", typeList(branches))
	}
	if err := refuseRowPick("CASE", rt); err != nil {
		return Resolved{}, err
	}
	if !hasElse {
		rt.NotNull = false
	}
	at := rt.Nullable()
	ats := make([]types.T, len(args))
	for i := range args {
		if i%2 == 0 && i+1 < len(args) {
			ats[i] = types.BooleanType
		} else {
			ats[i] = at
		}
	}
	return Resolved{Ret: rt, ArgTypes: ats, Infallible: true, Kernel: folding(at, func(ctx *Context, args []Vec, n int) (Vec, error) {
		if out, ok := caseKernel(ctx, at, args, hasElse, n); ok {
			return out, nil
		}
		choice := make([]int16, n)
		conds := make([]truth, 0, len(args)/2)
		for j := 0; j+1 < len(args); j += 2 {
			conds = append(conds, truthOf(args[j]))
		}
		for i := range n {
			choice[i] = -1
			k := 0
			for ; k < len(conds); k++ {
				if conds[k].at(i) {
					choice[i] = int16(2*k + 1)
					break
				}
			}
			if k == len(conds) && hasElse {
				choice[i] = int16(len(args) - 1)
			}
		}
		return pick(ctx, at, args, choice, n), nil
	})}, nil
}

func typeList(ts []types.T) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}

// resolveIf resolves IF(cond, a, b): a when cond is TRUE, else b.
func resolveIf(args []types.T) (Resolved, error) {
	if err := nargs("IF", args, 3, 3); err != nil {
		return Resolved{}, err
	}
	if args[0].Kind != types.Boolean && args[0].Kind != types.Null {
		return Resolved{}, errArgs("IF", args)
	}
	rt, ok := CommonType(args[1], args[2])
	if !ok {
		return Resolved{}, errArgs("IF", args)
	}
	if err := refuseRowPick("IF", rt); err != nil {
		return Resolved{}, err
	}
	at := rt.Nullable()
	return Resolved{Ret: rt, ArgTypes: []types.T{types.BooleanType, at, at}, Infallible: true, Kernel: folding(at, func(ctx *Context, args []Vec, n int) (Vec, error) {
		if out, ok := caseKernel(ctx, at, args, true, n); ok {
			return out, nil // IF(c, a, b) is CASE WHEN c THEN a ELSE b END
		}
		choice := make([]int16, n)
		for i := range n {
			if isValid(args[0], i) && boolAt(args[0], i) {
				choice[i] = 1
			} else {
				choice[i] = 2
			}
		}
		return pick(ctx, at, args, choice, n), nil
	})}, nil
}

// resolveCoalesce resolves COALESCE(a, b, ...): the first non-NULL argument.
func resolveCoalesce(args []types.T) (Resolved, error) {
	if err := nargs("COALESCE", args, 1, -1); err != nil {
		return Resolved{}, err
	}
	rt, ok := CommonType(args...)
	if !ok {
		return Resolved{}, errArgs("COALESCE", args)
	}
	if err := refuseRowPick("COALESCE", rt); err != nil {
		return Resolved{}, err
	}
	rt.NotNull = false
	for _, a := range args {
		if a.NotNull {
			rt.NotNull = true
		}
	}
	at := rt.Nullable()
	return Resolved{Ret: rt, ArgTypes: repeatT(at, len(args)), Infallible: true, Kernel: folding(at, func(ctx *Context, args []Vec, n int) (Vec, error) {
		choice := make([]int16, n)
		for i := range n {
			choice[i] = -1
			for j, a := range args {
				if isValid(a, i) {
					choice[i] = int16(j)
					break
				}
			}
		}
		return pick(ctx, at, args, choice, n), nil
	})}, nil
}

// resolveNullIf resolves NULLIF(a, b): NULL when a = b, else a, typed as
// a (as Flink, whose NULLIF is CASE WHEN a = b THEN NULL ELSE a END: 27 /
// NULLIF(67, 1.5) divides integers). a and b are compared in their common
// type, each cast to it inside the kernel.
func resolveNullIf(args []types.T) (Resolved, error) {
	if err := nargs("NULLIF", args, 2, 2); err != nil {
		return Resolved{}, err
	}
	ct, ok := comparisonType(args[0], args[1])
	if !ok {
		return Resolved{}, errArgs("NULLIF", args)
	}
	ret := args[0].Nullable()
	var casts [2]Kernel // nil: the argument is of the comparison type
	infallible := true
	for i, a := range args {
		if a.Equal(ct) {
			continue
		}
		k, err := Cast(a, ct)
		if err != nil {
			return Resolved{}, errArgs("NULLIF", args)
		}
		casts[i] = k
		// A widening between numbers cannot fail; any other cast can.
		infallible = infallible && a.IsNumeric() && ct.IsNumeric()
	}
	return Resolved{Ret: ret, ArgTypes: []types.T{args[0], args[1]}, Infallible: infallible, Kernel: folding(ret, func(ctx *Context, args []Vec, n int) (Vec, error) {
		cmp := [2]Vec{args[0], args[1]}
		for i, k := range casts {
			if k == nil || args[i].IsNull() {
				continue
			}
			v, err := k(ctx, []Vec{args[i]}, n)
			if err != nil {
				return Vec{}, err
			}
			defer v.Release()
			cmp[i] = v
		}
		mem := ctx.mem()
		eqBuf, eq := newBoolBuf(mem, n)
		defer eqBuf.Release()
		if !cmp[0].IsNull() && !cmp[1].IsNull() {
			compareBits(opEQ, ct, cmp[0], cmp[1], n, eq)
		}
		choice := make([]int16, n)
		for i := range n {
			if isValid(cmp[0], i) && isValid(cmp[1], i) && bitutil.BitIsSet(eq, i) {
				choice[i] = -1
			}
		}
		return pick(ctx, ret, args[:1], choice, n), nil
	})}, nil
}

// pick builds a column of type t whose row i is row i of srcs[choice[i]]
// (NULL when choice[i] < 0). All srcs have type t.
func pick(ctx *Context, t types.T, srcs []Vec, choice []int16, n int) Vec {
	switch t.Kind {
	case types.TinyInt:
		return pickFixed[int8](ctx, t, srcs, choice, n)
	case types.SmallInt:
		return pickFixed[int16](ctx, t, srcs, choice, n)
	case types.Int, types.Date, types.Time:
		return pickFixed[int32](ctx, t, srcs, choice, n)
	case types.BigInt, types.Timestamp, types.IntervalDayTime, types.IntervalYearMonth:
		return pickFixed[int64](ctx, t, srcs, choice, n)
	case types.Float:
		return pickFixed[float32](ctx, t, srcs, choice, n)
	case types.Double:
		return pickFixed[float64](ctx, t, srcs, choice, n)
	case types.Decimal:
		return pickFixed[decimal128.Num](ctx, t, srcs, choice, n)
	case types.Boolean:
		mem := ctx.mem()
		buf, out := newBoolBuf(mem, n)
		vbuf, vbits := newBoolBuf(mem, n)
		nulls := 0
		for i, c := range choice {
			if c < 0 || !isValid(srcs[c], i) {
				nulls++
				continue
			}
			bitutil.SetBit(vbits, i)
			if boolAt(srcs[c], i) {
				bitutil.SetBit(out, i)
			}
		}
		val := validity{buf: vbuf, nulls: nulls}
		if nulls == 0 {
			vbuf.Release()
			val = validity{}
		}
		return finish(t, n, val, buf)
	case types.String, types.Bytes:
		strs := make([]strArg, len(srcs))
		hint := 0
		for j, s := range srcs {
			if s.Type.Kind != t.Kind {
				continue
			}
			strs[j] = newStrArg(s)
			if !s.Const {
				hint = max(hint, strs[j].totalLen(n))
			}
		}
		o := newStrOut(ctx.mem(), t, n, hint)
		for i, c := range choice {
			if c < 0 || !isValid(srcs[c], i) {
				o.appendNull()
				continue
			}
			o.markValid(i)
			o.appendString(strs[c].at(i))
		}
		return o.finish()
	}
	return Vec{Type: t, Array: array.MakeArrayOfNull(ctx.mem(), t.ArrowType(), n)}
}

func pickFixed[T fixed](ctx *Context, t types.T, srcs []Vec, choice []int16, n int) Vec {
	mem := ctx.mem()
	vals := make([][]T, len(srcs))
	masks := make([]int, len(srcs))
	ones := make([][1]T, len(srcs))
	for j, s := range srcs {
		if s.IsNull() || s.Type.Kind != t.Kind {
			continue // NULL, or a CASE condition
		}
		vals[j], masks[j] = operand(s, &ones[j])
	}
	buf, out := newFixedBuf[T](mem, n)
	vbuf, vbits := newBoolBuf(mem, n)
	nulls := 0
	for i, c := range choice {
		if c < 0 || !isValid(srcs[c], i) {
			nulls++
			var z T
			out[i] = z
			continue
		}
		bitutil.SetBit(vbits, i)
		out[i] = vals[c][i&masks[c]]
	}
	val := validity{buf: vbuf, nulls: nulls}
	if nulls == 0 {
		vbuf.Release()
		val = validity{}
	}
	return finish(t, n, val, buf)
}

// truth reads whether a BOOLEAN Vec is TRUE at a row (NULL is not), with
// the Vec's kind decided once per batch rather than per row.
type truth struct {
	arr    *array.Boolean
	always bool // a Const that is TRUE
}

func truthOf(v Vec) truth {
	if v.Const || v.Type.Kind == types.Null {
		return truth{always: v.Type.Kind != types.Null && v.Const && v.Value != nil && constBool(v)}
	}
	return truth{arr: v.Array.(*array.Boolean)}
}

func (t truth) at(i int) bool {
	if t.arr == nil {
		return t.always
	}
	return t.arr.IsValid(i) && t.arr.Value(i)
}

// refuseRowPick refuses a conditional (CASE, IF, COALESCE) whose result
// is a ROW: pick builds flat values only; the fields can be picked.
func refuseRowPick(name string, t types.T) error {
	if t.Kind == types.Row {
		return fmt.Errorf("%s of ROW values is not supported yet: apply it to their fields (r.f)", name)
	}
	return nil
}
