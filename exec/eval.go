package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// evaluator computes one bound expression over a whole batch, one kernel
// call per node. CASE, IF, COALESCE, AND and OR are guards (guardNode):
// each of their arguments is evaluated only on the rows that reach it, as
// SQL requires, so that a row a guard does not let through cannot fail the
// batch (CASE WHEN b <> 0 THEN a / b END), and an error is reported only
// for a row that really evaluates the failing expression. A conditional
// none of whose arguments can fail (columns, literals, comparisons, field
// access: functions.Resolved.Infallible) needs no guard: it is a plain
// call over every row.
//
// An evaluator is used by one goroutine (its operator subtask).
type evaluator struct {
	root node
	t    types.T
	in   rows
	// guards says the expression has a guardNode.
	guards bool
}

// rows is what a node evaluates over: the columns of a batch, or the rows
// of a batch that a guard selected, where only the columns the guarded
// argument reads are there (the others are nil).
type rows struct {
	cols []arrow.Array
	n    int
}

// node is a compiled expression node.
type node interface {
	// eval returns the result over in's rows; owned says the caller must
	// release it (results that are columns of in are not owned).
	eval(ctx *functions.Context, in *rows) (v functions.Vec, owned bool, err error)
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
	// infallible says neither the kernel nor an argument can fail
	// (functions.Resolved.Infallible all the way down).
	infallible bool
	argVecs    // scratch
}

// argVecs are a call's arguments evaluated over one batch, and which of
// them the call owns (and releases once done with them).
type argVecs struct {
	argv  []functions.Vec
	owned []bool
}

// evalArgs evaluates args over in; on an error it releases what it
// evaluated.
func (a *argVecs) evalArgs(ctx *functions.Context, in *rows, args []node) error {
	if a.argv == nil {
		a.argv = make([]functions.Vec, len(args))
		a.owned = make([]bool, len(args))
	}
	for i, x := range args {
		v, owned, err := x.eval(ctx, in)
		if err != nil {
			a.release()
			return err
		}
		a.argv[i], a.owned[i] = v, owned
	}
	return nil
}

// release releases the arguments the call owns.
func (a *argVecs) release() {
	for i := range a.owned {
		if a.owned[i] {
			a.argv[i].Release()
			a.owned[i] = false
		}
	}
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
		args := make([]node, len(x.Args))
		for i, a := range x.Args {
			args[i] = ev.compile(a)
		}
		if x.UDF != nil {
			return newUDFNode(x, args)
		}
		safe := x.Resolved.Infallible
		for _, a := range args {
			safe = safe && infallible(a)
		}
		if f, ok := guardForms[x.Func]; ok && !safe {
			ev.guards = true
			return newGuardNode(f, x, args)
		}
		// A conditional none of whose arguments can fail is evaluated over
		// every row, as one call: the rows it does not let through cost
		// their share of the kernels, not the masks' bookkeeping.
		return &callNode{name: x.Func, args: args, kernel: x.Resolved.Kernel, t: x.Resolved.Ret, infallible: safe}
	}
	panic("exec: cannot compile expression " + e.String())
}

// infallible reports whether evaluating n cannot fail: a column, a
// constant, or a call of infallible kernels over such arguments.
func infallible(n node) bool {
	switch x := n.(type) {
	case *colNode, *constNode:
		return true
	case *callNode:
		return x.infallible
	}
	return false
}

func (n *colNode) eval(_ *functions.Context, in *rows) (functions.Vec, bool, error) {
	return functions.ArrayVec(n.t, in.cols[n.idx]), false, nil
}

func (n *constNode) eval(*functions.Context, *rows) (functions.Vec, bool, error) {
	return n.v, false, nil
}

func (n *callNode) eval(ctx *functions.Context, in *rows) (functions.Vec, bool, error) {
	if err := n.evalArgs(ctx, in, n.args); err != nil {
		return functions.Vec{}, false, err
	}
	out, err := n.kernel(ctx, n.argv, in.n)
	n.release()
	if err != nil {
		return functions.Vec{}, false, err
	}
	return out, !out.Const, nil
}

// evalArray evaluates the expression over rec and returns an array of
// rec's length that the caller releases.
func (ev *evaluator) evalArray(ctx *functions.Context, rec arrow.RecordBatch) (arrow.Array, error) {
	v, owned, err := ev.eval(ctx, rec)
	if err != nil {
		if ev.guards {
			err = ev.firstError(ctx, rec, err)
		}
		return nil, err
	}
	return materialize(ctx, v, owned, int(rec.NumRows()))
}

func (ev *evaluator) eval(ctx *functions.Context, rec arrow.RecordBatch) (functions.Vec, bool, error) {
	ev.in = rows{cols: rec.Columns(), n: int(rec.NumRows())}
	v, owned, err := ev.root.eval(ctx, &ev.in)
	ev.in.cols = nil
	return v, owned, err
}

// firstError returns the error of the first row of rec that fails (err is
// the error over all of rec), so that a failing batch reports the same row
// however its guards ordered the work: whether a prefix of rec fails
// depends only on its rows, so a binary search over prefix lengths finds
// the first failing row in log2(rows) evaluations, paid only by a batch
// that fails.
func (ev *evaluator) firstError(ctx *functions.Context, rec arrow.RecordBatch, err error) error {
	lo, hi := 0, int(rec.NumRows()) // rows [0, lo) evaluate, rows [0, hi) fail
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if e := ev.evalSlice(ctx, rec, 0, mid); e != nil {
			hi, err = mid, e
		} else {
			lo = mid
		}
	}
	if e := ev.evalSlice(ctx, rec, hi-1, hi); e != nil {
		err = e
	}
	return err
}

// evalSlice evaluates rows [from, to) of rec and returns the error, if any.
func (ev *evaluator) evalSlice(ctx *functions.Context, rec arrow.RecordBatch, from, to int) error {
	s := rec.NewSlice(int64(from), int64(to))
	defer s.Release()
	v, owned, err := ev.eval(ctx, s)
	if err == nil && owned {
		v.Release()
	}
	return err
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

func argType(n node) types.T {
	switch x := n.(type) {
	case *colNode:
		return x.t
	case *constNode:
		return x.v.Type
	case *callNode:
		return x.t
	case *guardNode:
		return x.t
	case *udfNode:
		return x.t
	}
	return types.NullType
}
