package functions

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// ErrScalarSubqueryRows is the failure of a scalar subquery that yields more
// than one row for a row of the query around it (Flink's SINGLE_VALUE).
var ErrScalarSubqueryRows = errors.New("scalar subquery returned more than one row")

// SingleValueFunc is the function the planner puts over the value of a
// decorrelated scalar subquery: SINGLE_VALUE_CHECK(many, v) is v, and fails
// on a row where many (the subquery yielded more than one row) is TRUE.
const SingleValueFunc = "SINGLE_VALUE_CHECK"

func init() {
	register(SingleValueFunc, func(args []types.T) (Resolved, error) {
		if err := nargs(SingleValueFunc, args, 2, 2); err != nil {
			return Resolved{}, err
		}
		if args[0].Kind != types.Boolean && args[0].Kind != types.Null {
			return Resolved{}, errArgs(SingleValueFunc, args)
		}
		rt := args[1]
		if rt.Kind == types.Null {
			rt = types.StringType
		}
		if err := refuseRowPick("a scalar subquery", rt); err != nil {
			return Resolved{}, err
		}
		rt = rt.Nullable()
		return Resolved{Ret: rt, ArgTypes: []types.T{types.BooleanType, rt}, Kernel: func(ctx *Context, args []Vec, n int) (Vec, error) {
			many := args[0]
			for i := range n {
				if !isValid(many, i) {
					continue
				}
				if many.Const {
					if many.Value.(bool) {
						return Vec{}, ErrScalarSubqueryRows
					}
					break
				}
				if many.Array.(*array.Boolean).Value(i) {
					return Vec{}, ErrScalarSubqueryRows
				}
			}
			choice := make([]int16, n)
			for i := range choice {
				choice[i] = 1
			}
			return pick(ctx, rt, args, choice, n), nil
		}}, nil
	})
}
