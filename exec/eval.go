package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// evaluator computes one bound expression over a whole batch. The fast path
// evaluates every subexpression over all rows, one kernel call per node. A
// kernel error inside a CASE, IF, COALESCE, AND or OR may come from a row
// that the guard would never have let through (CASE WHEN b <> 0 THEN a / b
// END); then the batch is evaluated again row by row with SQL's lazy
// semantics, and only an error that survives that is reported.
type evaluator struct {
	root node
	lazy bool // the expression has a lazily evaluated form
	t    types.T
}

// node is a compiled expression node.
type node interface {
	// eval returns the result over rec's rows; owned says the caller must
	// release it (results that are columns of rec are not owned).
	eval(ctx *functions.Context, rec arrow.RecordBatch) (v functions.Vec, owned bool, err error)
}

type colNode struct {
	idx int
	t   types.T
}

type constNode struct{ v functions.Vec }

type callNode struct {
	name   string
	args   []node
	kernel functions.Kernel
	t      types.T
	argv   []functions.Vec // scratch
	owned  []bool
}

func compileExpr(e planner.Expr) *evaluator {
	ev := &evaluator{t: e.Type()}
	ev.root = ev.compile(e)
	return ev
}

func (ev *evaluator) compile(e planner.Expr) node {
	switch x := e.(type) {
	case *planner.ColumnRef:
		return &colNode{idx: x.Index, t: x.T}
	case *planner.Literal:
		return &constNode{v: functions.ConstVec(x.T, x.Value)}
	case *planner.Cast:
		return &callNode{name: "CAST", args: []node{ev.compile(x.Arg)}, kernel: x.Kernel, t: x.T}
	case *planner.Call:
		switch x.Func {
		case "CASE", "IF", "COALESCE", "AND", "OR":
			ev.lazy = true
		}
		c := &callNode{name: x.Func, kernel: x.Resolved.Kernel, t: x.Resolved.Ret}
		for _, a := range x.Args {
			c.args = append(c.args, ev.compile(a))
		}
		return c
	}
	panic("exec: cannot compile expression " + e.String())
}

func (n *colNode) eval(_ *functions.Context, rec arrow.RecordBatch) (functions.Vec, bool, error) {
	return functions.ArrayVec(n.t, rec.Column(n.idx)), false, nil
}

func (n *constNode) eval(*functions.Context, arrow.RecordBatch) (functions.Vec, bool, error) {
	return n.v, false, nil
}

func (n *callNode) eval(ctx *functions.Context, rec arrow.RecordBatch) (functions.Vec, bool, error) {
	if n.argv == nil {
		n.argv = make([]functions.Vec, len(n.args))
		n.owned = make([]bool, len(n.args))
	}
	release := func() {
		for i := range n.args {
			if n.owned[i] {
				n.argv[i].Release()
				n.owned[i] = false
			}
		}
	}
	for i, a := range n.args {
		v, owned, err := a.eval(ctx, rec)
		if err != nil {
			release()
			return functions.Vec{}, false, err
		}
		n.argv[i], n.owned[i] = v, owned
	}
	out, err := n.kernel(ctx, n.argv, int(rec.NumRows()))
	release()
	if err != nil {
		return functions.Vec{}, false, err
	}
	return out, !out.Const, nil
}

// evalArray evaluates the expression over rec and returns an array of
// rec's length that the caller releases.
func (ev *evaluator) evalArray(ctx *functions.Context, rec arrow.RecordBatch) (arrow.Array, error) {
	v, owned, err := ev.root.eval(ctx, rec)
	if err != nil {
		if !ev.lazy {
			return nil, err
		}
		return ev.evalRows(ctx, rec)
	}
	return materialize(ctx, v, owned, int(rec.NumRows()))
}

// materialize turns v into an owned array of n rows.
func materialize(ctx *functions.Context, v functions.Vec, owned bool, n int) (arrow.Array, error) {
	if !v.Const {
		if !owned {
			v.Array.Retain()
		}
		return v.Array, nil
	}
	b := array.NewBuilder(ctx.Mem, v.Type.ArrowType())
	defer b.Release()
	b.Reserve(n)
	if v.Value == nil {
		b.AppendNulls(n)
	} else {
		for i := 0; i < n; i++ {
			types.AppendValue(b, v.Value)
		}
	}
	return b.NewArray(), nil
}

// evalRows is the slow path: each row on its own, lazy forms short-circuit.
func (ev *evaluator) evalRows(ctx *functions.Context, rec arrow.RecordBatch) (arrow.Array, error) {
	b := array.NewBuilder(ctx.Mem, ev.t.ArrowType())
	defer b.Release()
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		row := rec.NewSlice(int64(i), int64(i+1))
		v, err := evalLazy(ctx, ev.root, row)
		row.Release()
		if err != nil {
			return nil, err
		}
		types.AppendValue(b, v)
	}
	return b.NewArray(), nil
}

// evalLazy evaluates n over a one-row batch with SQL's lazy semantics for
// CASE, IF, COALESCE, AND and OR.
func evalLazy(ctx *functions.Context, n node, row arrow.RecordBatch) (types.Value, error) {
	c, ok := n.(*callNode)
	if !ok {
		v, _, err := n.eval(ctx, row)
		if err != nil {
			return nil, err
		}
		return v.ValueAt(0), nil
	}
	switch c.name {
	case "CASE":
		i := 0
		for ; i+1 < len(c.args); i += 2 {
			cond, err := evalLazy(ctx, c.args[i], row)
			if err != nil {
				return nil, err
			}
			if cond == true {
				return evalLazy(ctx, c.args[i+1], row)
			}
		}
		if i < len(c.args) {
			return evalLazy(ctx, c.args[i], row)
		}
		return nil, nil
	case "IF":
		cond, err := evalLazy(ctx, c.args[0], row)
		if err != nil {
			return nil, err
		}
		if cond == true {
			return evalLazy(ctx, c.args[1], row)
		}
		return evalLazy(ctx, c.args[2], row)
	case "COALESCE":
		for _, a := range c.args {
			v, err := evalLazy(ctx, a, row)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	case "AND", "OR":
		short := c.name == "OR" // OR stops at TRUE, AND at FALSE
		sawNull := false
		for _, a := range c.args {
			v, err := evalLazy(ctx, a, row)
			if err != nil {
				return nil, err
			}
			if v == nil {
				sawNull = true
				continue
			}
			if v.(bool) == short {
				return short, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return !short, nil
	}
	// A strict function: evaluate the arguments lazily, then the kernel.
	args := make([]functions.Vec, len(c.args))
	for i, a := range c.args {
		v, err := evalLazy(ctx, a, row)
		if err != nil {
			return nil, err
		}
		args[i] = functions.ConstVec(argType(a), v)
	}
	out, err := c.kernel(ctx, args, 1)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return out.ValueAt(0), nil
}

func argType(n node) types.T {
	switch x := n.(type) {
	case *colNode:
		return x.t
	case *constNode:
		return x.v.Type
	case *callNode:
		return x.t
	}
	return types.NullType
}
