package exec

import (
	"runtime"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/udf"
)

// udfNode calls a user function: one call into its module per batch,
// through an instance that this node (its subtask's evaluator) takes from
// the module's pool at its first batch and keeps; the instance goes back
// to the pool when the node is collected.
type udfNode struct {
	m     *udf.Module
	args  []node
	t     types.T
	inst  *udf.Instance
	argv  []functions.Vec
	owned []bool
}

func newUDFNode(x *planner.Call, args []node) *udfNode {
	return &udfNode{m: x.UDF, args: args, t: x.Resolved.Ret,
		argv: make([]functions.Vec, len(args)), owned: make([]bool, len(args))}
}

func (n *udfNode) eval(ctx *functions.Context, in *rows) (functions.Vec, bool, error) {
	release := func() {
		for i := range n.args {
			if n.owned[i] {
				n.argv[i].Release()
				n.owned[i] = false
			}
		}
	}
	for i, a := range n.args {
		v, owned, err := a.eval(ctx, in)
		if err != nil {
			release()
			return functions.Vec{}, false, err
		}
		n.argv[i], n.owned[i] = v, owned
	}
	defer release()
	if n.inst == nil {
		inst, err := n.m.Acquire()
		if err != nil {
			return functions.Vec{}, false, err
		}
		n.inst = inst
		m := n.m
		runtime.AddCleanup(n, func(i *udf.Instance) { m.Release(i) }, inst)
	}
	var mem memory.Allocator = memory.DefaultAllocator
	if ctx != nil && ctx.Mem != nil {
		mem = ctx.Mem
	}
	out, err := n.inst.Call(mem, n.argv, in.n)
	if err != nil {
		return functions.Vec{}, false, err
	}
	return out, !out.Const, nil
}
