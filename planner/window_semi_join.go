package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
)

// Window semi and anti joins (Flink's window join of type SEMI / ANTI):
//
//	SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) L
//	WHERE L.k [NOT] IN (SELECT k FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) R
//	                    WHERE L.window_start = R.window_start AND L.window_end = R.window_end)
//
// and the same with [NOT] EXISTS. The general decorrelation (subquery.go)
// would join the subquery's FROM to the domain of the outer values it
// reads, an aggregate of the enclosing input, and join that back: no
// window join, and a regular join of window columns that keeps its rows
// for ever. A subquery that is a plain filter of its FROM (no aggregate,
// GROUP BY, HAVING, LIMIT, ORDER BY or nested subquery) is instead planned
// as Calcite plans it for Flink: a semi or anti join of the input and the
// subquery's FROM on its WHERE (which reads both sides), and for IN on
// x = y (NOT IN: x = y OR x IS NULL OR y IS NULL). The rule windowJoins
// then makes it a WindowJoin. Only a join that is a window join is planned
// so; any other subquery keeps the general plan, but one between unbounded
// window table functions that equates their window columns and is no
// window join is the error a join written out would be (notWindowJoin).

// windowSemiAnti returns the semi (not: anti) join of input (scope sc) and
// the subquery sel when it is a window join, x being IN's left side (nil
// for EXISTS); ok is false otherwise.
func (b *binder) windowSemiAnti(sel *ast.SelectStmt, x Expr, not bool, input Node, sc *scope, pos sql.Pos) (Node, bool, error) {
	if !plainFilter(sel) || (x != nil && (len(sel.Fields.Fields) != 1 || sel.Fields.Fields[0].WildCard != nil)) {
		return nil, false, nil
	}
	for _, c := range sc.cols {
		if c.outer != nil {
			// Itself in a subquery: its scope has the columns of a query
			// further out, which the combined scope below would not rank.
			return nil, false, nil
		}
	}
	savedInputs, savedSub := b.inputs, b.sub
	b.inputs, b.sub = nil, nil
	from, fsc, err := b.bindFrom(sel.From)
	b.inputs, b.sub = savedInputs, savedSub
	if err != nil {
		return nil, false, nil // the general plan says what is wrong
	}
	// The input's columns, as outer columns (the subquery's own come first
	// when a name is in both), then the subquery's: the join's columns.
	use := &corrUse{used: map[int]bool{}}
	both := &scope{}
	for _, c := range sc.cols {
		c.outer, c.outerIdx = use, -1
		both.cols = append(both.cols, c)
	}
	both.cols = append(both.cols, fsc.cols...)
	cond, err := b.bindBool(sel.Where, both, nil, "WHERE")
	if err != nil {
		return nil, false, nil
	}
	if x != nil {
		y, err := b.bindExpr(sel.Fields.Fields[0].Expr, both, nil)
		if err != nil {
			return nil, false, nil
		}
		eq, err := b.inCond(x, y, not, pos)
		if err != nil {
			return nil, false, err
		}
		cond = and(cond, eq)
	}
	typ := LeftSemi
	if not {
		typ = LeftAnti
	}
	j := &Join{Left: input, Right: from, Type: typ, Cond: cond, Pos: pos}
	if toWindowJoin(j) == nil {
		if !IsBounded(j) {
			// As for a join written out: windows that differ, one window
			// column equated, processing time.
			if err := notWindowJoin(j); err != nil {
				return nil, false, err
			}
		}
		return nil, false, nil
	}
	return j, true, nil
}

// plainFilter reports whether sel is a SELECT of its FROM filtered by its
// WHERE, and nothing else that a semi join on the WHERE would lose.
func plainFilter(sel *ast.SelectStmt) bool {
	if sel.Kind != ast.SelectStmtKindSelect || sel.From == nil || sel.Where == nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.Limit != nil || sel.OrderBy != nil ||
		sel.With != nil || len(sel.WindowSpecs) > 0 || len(sel.TableHints) > 0 {
		return false
	}
	if hasSubquery(sel.Where) {
		return false
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && (hasAggregate(f.Expr) || hasSubquery(f.Expr)) {
			return false
		}
	}
	return true
}

// hasSubquery reports whether e contains a subquery.
func hasSubquery(e ast.ExprNode) bool {
	v := &subqueryFinder{}
	e.Accept(v)
	return v.found
}

type subqueryFinder struct{ found bool }

func (v *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		v.found = true
		return n, true
	}
	return n, v.found
}

func (v *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
