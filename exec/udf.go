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
	m    *udf.Module
	args []node
	t    types.T
	inst *udf.Instance
	argVecs
}

func newUDFNode(x *planner.Call, args []node) *udfNode {
	return &udfNode{m: x.UDF, args: args, t: x.Resolved.Ret}
}

func (n *udfNode) eval(ctx *functions.Context, in *rows) (functions.Vec, bool, error) {
	if err := n.evalArgs(ctx, in, n.args); err != nil {
		return functions.Vec{}, false, err
	}
	defer n.release()
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
