package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// GROUP BY GROUPING SETS (...), ROLLUP (...), CUBE (...) and MySQL's
// GROUP BY ... WITH ROLLUP, as the sql package hands them over (calls of
// sql.GroupingSetsFunc, sql.RollupFunc, sql.CubeFunc, with sql.GroupingSetFunc
// for a parenthesized set): an Expand below the aggregate copies each row
// once per set (expand.go), and GROUPING() / GROUPING_ID() read the set.

// maxGroupingSets bounds the sets of one GROUP BY (a CUBE of 12 columns
// has 4096).
const maxGroupingSets = 4096

// groupingItems flattens GROUP BY's items into the distinct grouping
// expressions (by their text) and the grouping sets over them (indexes
// into exprs). grouped is false for a plain GROUP BY (one set of every
// item).
func (b *binder) groupingItems(gb *ast.GroupByClause) (exprs []ast.ExprNode, sets [][]int, grouped bool, err error) {
	index := map[string]int{}
	idx := func(e ast.ExprNode) int {
		key := restoreText(e)
		if i, ok := index[key]; ok {
			return i
		}
		index[key] = len(exprs)
		exprs = append(exprs, e)
		return len(exprs) - 1
	}
	sets = [][]int{{}}
	for _, item := range gb.Items {
		itemSets, g, err := b.itemSets(item.Expr, idx, true)
		if err != nil {
			return nil, nil, false, err
		}
		grouped = grouped || g
		// The cross product with the sets so far.
		if len(sets)*len(itemSets) > maxGroupingSets {
			return nil, nil, false, errAt(ErrUnsupported, b.pos(item.Expr), "", "GROUP BY has more than %d grouping sets", maxGroupingSets)
		}
		var next [][]int
		for _, s := range sets {
			for _, t := range itemSets {
				next = append(next, append(append([]int(nil), s...), t...))
			}
		}
		sets = next
	}
	if gb.Rollup {
		// MySQL's GROUP BY a, b WITH ROLLUP: ROLLUP (a, b).
		if grouped {
			return nil, nil, false, errAt(ErrUnsupported, b.pos(gb.Items[0].Expr), "write ROLLUP (...) alone", "WITH ROLLUP cannot be combined with GROUPING SETS, ROLLUP or CUBE")
		}
		all := sets[0]
		sets = nil
		for n := len(all); n >= 0; n-- {
			sets = append(sets, append([]int(nil), all[:n]...))
		}
		grouped = true
	}
	return exprs, sets, grouped, nil
}

// itemSets returns the grouping sets one element of GROUP BY (top: a
// whole item) or of GROUPING SETS stands for.
func (b *binder) itemSets(e ast.ExprNode, idx func(ast.ExprNode) int, top bool) ([][]int, bool, error) {
	call, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return [][]int{{idx(e)}}, false, nil
	}
	switch call.FnName.L {
	case sql.GroupingSetsFunc:
		var sets [][]int
		for _, a := range call.Args {
			s, _, err := b.itemSets(a, idx, false)
			if err != nil {
				return nil, false, err
			}
			sets = append(sets, s...)
			if len(sets) > maxGroupingSets {
				return nil, false, errAt(ErrUnsupported, b.pos(e), "", "GROUPING SETS has more than %d grouping sets", maxGroupingSets)
			}
		}
		return sets, true, nil
	case sql.GroupingSetFunc:
		if top {
			// (a, b) directly in GROUP BY is a row, as TiDB parses it;
			// only GROUPING SETS makes the sql package write the call.
			break
		}
		set := []int{}
		for _, a := range call.Args {
			set = append(set, elementColumns(a, idx)...)
		}
		return [][]int{set}, true, nil
	case sql.RollupFunc, sql.CubeFunc:
		elems := make([][]int, len(call.Args))
		for i, a := range call.Args {
			elems[i] = elementColumns(a, idx)
		}
		var sets [][]int
		if call.FnName.L == sql.RollupFunc {
			for n := len(elems); n >= 0; n-- {
				var s []int
				for _, el := range elems[:n] {
					s = append(s, el...)
				}
				sets = append(sets, append([]int{}, s...))
			}
			return sets, true, nil
		}
		if len(elems) > 12 {
			return nil, false, errAt(ErrUnsupported, b.pos(e), "", "CUBE of %d elements has more than %d grouping sets", len(elems), maxGroupingSets)
		}
		// Every subset, the largest first, as Flink lists them.
		for mask := 1<<len(elems) - 1; mask >= 0; mask-- {
			s := []int{}
			for i, el := range elems {
				if mask&(1<<(len(elems)-1-i)) != 0 {
					s = append(s, el...)
				}
			}
			sets = append(sets, s)
		}
		return sets, true, nil
	}
	return [][]int{{idx(e)}}, false, nil
}

// elementColumns is the grouping expressions of one element of ROLLUP,
// CUBE or a grouping set: (a, b) is a composite element of both.
func elementColumns(e ast.ExprNode, idx func(ast.ExprNode) int) []int {
	if r, ok := e.(*ast.RowExpr); ok {
		out := make([]int, len(r.Values))
		for i, v := range r.Values {
			out[i] = idx(v)
		}
		return out
	}
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return elementColumns(p.Expr, idx)
	}
	return []int{idx(e)}
}

// groupingMarker reports whether e is one of the sql package's calls for
// grouping sets, and the clause it stands for.
func groupingMarker(e *ast.FuncCallExpr) (string, bool) {
	switch e.FnName.L {
	case sql.GroupingSetsFunc, sql.GroupingSetFunc:
		return "GROUPING SETS", true
	case sql.RollupFunc:
		return "ROLLUP", true
	case sql.CubeFunc:
		return "CUBE", true
	}
	return "", false
}

// bindGrouping binds GROUPING(a, ...) and GROUPING_ID(a, ...) above a
// GROUP BY (they are Flink's two names of one function): a BIGINT whose
// bits, the first argument's the highest, are 1 for the arguments the
// row's grouping set leaves out. Each argument must be a grouping
// expression.
func (b *binder) bindGrouping(e *ast.FuncCallExpr, sc *scope, agg *aggScope) (Expr, error) {
	name := e.FnName.O
	if len(e.Args) == 0 {
		return nil, errAt(ErrUnsupported, b.pos(e), "", "%s takes one or more grouping expressions", name)
	}
	if len(e.Args) > 63 {
		return nil, errAt(ErrUnsupported, b.pos(e), "", "%s takes at most 63 arguments", name)
	}
	keys := make([]int, len(e.Args))
	for i, a := range e.Args {
		x, err := b.bindExpr(a, sc, nil)
		if err != nil {
			return nil, err
		}
		keys[i] = -1
		for j, k := range agg.keyStrs[:agg.userKeys] {
			if k == x.String() {
				keys[i] = j
			}
		}
		if keys[i] < 0 {
			return nil, errAt(ErrUnsupported, b.pos(a), "", "the arguments of %s must be grouping expressions (of GROUP BY)", name)
		}
	}
	value := func(set []bool) int64 {
		var v int64
		for _, k := range keys {
			v <<= 1
			if !set[k] {
				v |= 1
			}
		}
		return v
	}
	lit := func(v int64) Expr { return &Literal{Value: v, T: notNullBigInt()} }
	if agg.sets == nil {
		return lit(0), nil
	}
	vals := make([]int64, len(agg.sets))
	same := true
	for i, s := range agg.sets {
		vals[i] = value(s)
		same = same && vals[i] == vals[0]
	}
	if same {
		return lit(vals[0]), nil
	}
	id := &ColumnRef{Index: agg.setIndex, Name: ExpandIDName, T: notNullBigInt()}
	var args []Expr
	for i, v := range vals[:len(vals)-1] {
		cond, err := b.call("=", b.pos(e), id, lit(int64(i)))
		if err != nil {
			return nil, err
		}
		args = append(args, cond, lit(v))
	}
	args = append(args, lit(vals[len(vals)-1]))
	return b.call("CASE", b.pos(e), args...)
}

func notNullBigInt() types.T {
	t := types.BigIntType
	t.NotNull = true
	return t
}
