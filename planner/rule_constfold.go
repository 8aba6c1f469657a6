package planner

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/types"
)

// Rule: constant folding. A deterministic call or cast whose arguments are
// all literals is evaluated once at plan time and replaced by its result.
// A call that fails (1 / 0) is left in place: the error belongs to run time,
// where it only happens if a row reaches it.

func foldConstants(n Node) Node {
	return TransformExprs(n, foldExpr)
}

// foldExpr folds the constant subexpressions of e.
func foldExpr(e Expr) Expr {
	return mapExpr(e, foldNode)
}

// foldNode evaluates x if it is a deterministic call or cast whose
// arguments are all literals (its arguments are not folded first), and
// returns x unchanged otherwise.
func foldNode(x Expr) Expr {
	var args []Expr
	var kernel functions.Kernel
	var t types.T
	switch c := x.(type) {
	case *Call:
		if nonDeterministic(c.Func) {
			return x
		}
		args, kernel, t = c.Args, c.Resolved.Kernel, c.Resolved.Ret
	case *Cast:
		args, kernel, t = []Expr{c.Arg}, c.Kernel, c.T
	default:
		return x
	}
	if kernel == nil {
		return x
	}
	vecs := make([]functions.Vec, len(args))
	for i, a := range args {
		l, ok := a.(*Literal)
		if !ok {
			return x
		}
		vecs[i] = functions.Vec{Type: l.T, Const: true, Value: l.Value}
	}
	v, err := evalConst(kernel, vecs)
	if err != nil {
		return x
	}
	return &Literal{Value: v, T: t}
}

// constFolder answers "what constant is this expression?" for the
// expressions of one statement, remembering the answer per node so that
// asking it of every node of a deep expression, bottom-up as the binder
// does, takes time linear in the expression's size (foldExpr on each node
// would re-evaluate every subtree once per ancestor).
type constFolder struct {
	memo map[Expr]*Literal // nil: not constant
}

// constOf returns the value e folds to, if every leaf below it is a
// literal and every call on the way is deterministic and succeeds.
func (f *constFolder) constOf(e Expr) (*Literal, bool) {
	var args []Expr
	switch x := e.(type) {
	case *Literal:
		return x, true
	case *Call:
		args = x.Args
	case *Cast:
		args = []Expr{x.Arg}
	default:
		return nil, false
	}
	if l, ok := f.memo[e]; ok {
		return l, l != nil
	}
	if f.memo == nil {
		f.memo = map[Expr]*Literal{}
	}
	lits := make([]Expr, len(args))
	var out *Literal
	for i, a := range args {
		l, ok := f.constOf(a)
		if !ok {
			f.memo[e] = nil
			return nil, false
		}
		lits[i] = l
	}
	var shallow Expr
	switch x := e.(type) {
	case *Call:
		c := *x
		c.Args = lits
		shallow = &c
	case *Cast:
		c := *x
		c.Arg = lits[0]
		shallow = &c
	}
	out, _ = foldNode(shallow).(*Literal)
	f.memo[e] = out
	return out, out != nil
}

func evalConst(k functions.Kernel, args []functions.Vec) (v types.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errPanic
		}
	}()
	ctx := &functions.Context{Mem: memory.DefaultAllocator}
	out, err := k(ctx, args, 1)
	if err != nil {
		return nil, err
	}
	if out.Const {
		return out.Value, nil
	}
	defer out.Array.Release()
	return types.ValueAt(out.Array, 0), nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errPanic = constError("constant evaluation failed")
