package functions

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/types"
)

type cmpOp uint8

const (
	opEQ cmpOp = iota
	opNE
	opLT
	opLE
	opGT
	opGE
)

var cmpOps = map[string]cmpOp{"=": opEQ, "<>": opNE, "<": opLT, "<=": opLE, ">": opGT, ">=": opGE}

// flip returns the operator with its operands swapped (a < b == b > a).
func (o cmpOp) flip() cmpOp {
	switch o {
	case opLT:
		return opGT
	case opLE:
		return opGE
	case opGT:
		return opLT
	case opGE:
		return opLE
	}
	return o
}

// holds reports whether the operator holds for a three-way comparison c.
func (o cmpOp) holds(c int) bool {
	switch o {
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	}
	return c >= 0
}

func init() {
	for name, op := range cmpOps {
		register(name, resolveCompare(name, op))
	}
	alias("!=", "<>")
	register("IS DISTINCT FROM", resolveDistinct("IS DISTINCT FROM", true))
	register("IS NOT DISTINCT FROM", resolveDistinct("IS NOT DISTINCT FROM", false))
}

// comparable reports whether values of t can be ordered or compared.
func comparableKind(t types.T) bool {
	return t.Kind != types.Null || true
}

func resolveCompare(name string, op cmpOp) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		ct, ok := comparisonType(args[0], args[1])
		if !ok {
			return Resolved{}, errArgs(name, args)
		}
		rt := nullableFrom(types.BooleanType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{ct, ct}, Kernel: strict(rt, compareKernel(op, ct)), Infallible: true}, nil
	}
}

// compareKernel compares two args of type t (non-strict: it ignores
// validity in computing the bits and sets validity from the args; callers
// wrap it in strict).
func compareKernel(op cmpOp, t types.T) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		buf, out := newBoolBuf(mem, n)
		compareBits(op, t, args[0], args[1], n, out)
		return finish(types.BooleanType, n, val, buf), nil
	}
}

// compareBits sets bit i of out when row i of a op row i of b holds
// (ignoring NULLs: the bits of NULL rows are meaningless).
func compareBits(op cmpOp, t types.T, a, b Vec, n int, out []byte) {
	if a.Const && !b.Const {
		a, b, op = b, a, op.flip()
	}
	switch t.Kind {
	case types.TinyInt:
		cmpOrdered[int8](op, a, b, n, out)
	case types.SmallInt:
		cmpOrdered[int16](op, a, b, n, out)
	case types.Int, types.Date, types.Time:
		cmpOrdered[int32](op, a, b, n, out)
	case types.BigInt, types.Timestamp, types.IntervalDayTime, types.IntervalYearMonth:
		cmpOrdered[int64](op, a, b, n, out)
	case types.Float:
		cmpOrdered[float32](op, a, b, n, out)
	case types.Double:
		cmpOrdered[float64](op, a, b, n, out)
	case types.Decimal:
		var oa, ob [1]decimal128.Num
		x, xm := operand(a, &oa)
		y, ym := operand(b, &ob)
		for i := range n {
			if op.holds(x[i&xm].Cmp(y[i&ym])) {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case types.String, types.Bytes:
		x, y := newStrArg(a), newStrArg(b)
		if op == opEQ || op == opNE {
			want := op == opEQ
			for i := range n {
				if (x.at(i) == y.at(i)) == want {
					out[i>>3] |= 1 << uint(i&7)
				}
			}
			return
		}
		for i := range n {
			if op.holds(strings.Compare(x.at(i), y.at(i))) {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case types.Boolean:
		for i := range n {
			c := b2i(boolAt(a, i)) - b2i(boolAt(b, i))
			if op.holds(c) {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case types.Null:
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T ordered](op cmpOp, a, b Vec, n int, out []byte) {
	var oa, ob [1]T
	x, xm := operand(a, &oa)
	y, ym := operand(b, &ob)
	switch op {
	case opEQ:
		for i := range n {
			if x[i&xm] == y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case opNE:
		for i := range n {
			if x[i&xm] != y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case opLT:
		for i := range n {
			if x[i&xm] < y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case opLE:
		for i := range n {
			if x[i&xm] <= y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case opGT:
		for i := range n {
			if x[i&xm] > y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	case opGE:
		for i := range n {
			if x[i&xm] >= y[i&ym] {
				out[i>>3] |= 1 << uint(i&7)
			}
		}
	}
}

func resolveDistinct(name string, distinct bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		ct, ok := comparisonType(args[0], args[1])
		if !ok {
			return Resolved{}, errArgs(name, args)
		}
		rt := types.T{Kind: types.Boolean, NotNull: true}
		return Resolved{Ret: rt, ArgTypes: []types.T{ct, ct}, Kernel: folding(rt, distinctKernel(ct, distinct)), Infallible: true}, nil
	}
}

// distinctKernel: NULL is not distinct from NULL; the result is never NULL.
func distinctKernel(t types.T, distinct bool) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		buf, out := newBoolBuf(mem, n)
		a, b := args[0], args[1]
		if !a.IsNull() && !b.IsNull() {
			compareBits(opEQ, t, a, b, n, out)
		}
		for i := range n {
			va, vb := isValid(a, i), isValid(b, i)
			same := (!va && !vb) || (va && vb && bitutil.BitIsSet(out, i))
			bitutil.SetBitTo(out, i, same != distinct)
		}
		return finish(types.BooleanType, n, validity{}, buf), nil
	}
}

// boolArray reads a boolean Vec's array (nil when Const).
func boolArray(v Vec) *array.Boolean {
	if v.Const {
		return nil
	}
	return v.Array.(*array.Boolean)
}
