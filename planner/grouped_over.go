package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A window function in the select list of a grouped query (GROUP BY,
// HAVING or aggregates) numbers or aggregates the groups, not the rows:
// ROW_NUMBER() OVER (PARTITION BY region ORDER BY SUM(amount) DESC). SQL
// evaluates it after the grouping, so the query is split in two blocks,
// as one would write it by hand:
//
//	SELECT region, SUM(amount) AS s, ROW_NUMBER() OVER (ORDER BY SUM(amount) DESC) AS rn
//	FROM sales GROUP BY region
//
// becomes
//
//	SELECT __g0 AS region, __g1 AS s, ROW_NUMBER() OVER (ORDER BY __go0_0 DESC) AS rn
//	FROM (SELECT region AS __g0, SUM(amount) AS __g1, SUM(amount) AS __go0_0
//	      FROM sales GROUP BY region) __grouped
//
// The inner block computes the select list's other fields and every
// argument and expression of the windows' PARTITION BY and ORDER BY
// (which may hold aggregates), and the query's ORDER BY items that are not a name or an
// ordinal of the select list; the outer one the window functions, the
// ORDER BY and the LIMIT. A field without an alias keeps the name it
// would have had.

// groupedOver returns the two-block form of sel when sel is a grouped
// query with a window function as a whole field of its select list.
func groupedOver(sel *ast.SelectStmt) (*ast.SelectStmt, bool) {
	if sel.Fields == nil || sel.Distinct || sel.Kind != ast.SelectStmtKindSelect {
		return nil, false
	}
	hasWindow, grouped := false, sel.GroupBy != nil || sel.Having != nil
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil, false
		}
		if w, ok := f.Expr.(*ast.WindowFuncExpr); ok {
			if w.Spec.Name.O != "" || w.Spec.Ref.O != "" {
				return nil, false // named windows: the binder says so
			}
			hasWindow = true
			for _, e := range append(windowSpecExprs(w), w.Args...) {
				grouped = grouped || hasAggregate(e)
			}
			continue
		}
		grouped = grouped || hasAggregate(f.Expr)
	}
	if !hasWindow || !grouped {
		return nil, false
	}
	inner := *sel
	inner.With, inner.OrderBy, inner.Limit = nil, nil, nil
	innerFields := &ast.FieldList{}
	inner.Fields = innerFields
	ref := func(name string) *ast.ColumnNameExpr {
		return &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(name)}}
	}
	hide := func(e ast.ExprNode, name string) *ast.ColumnNameExpr {
		innerFields.Fields = append(innerFields.Fields, &ast.SelectField{Expr: e, AsName: ast.NewCIStr(name)})
		return ref(name)
	}
	outerFields := &ast.FieldList{}
	var names []string
	for i, f := range sel.Fields.Fields {
		name := f.AsName.O
		if name == "" {
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
				name = cn.Name.Name.O
			}
		}
		names = append(names, name)
		if w, ok := f.Expr.(*ast.WindowFuncExpr); ok {
			nw := *w
			nw.Args = nil
			for k, a := range w.Args {
				if _, lit := a.(ast.ValueExpr); lit {
					nw.Args = append(nw.Args, a) // COUNT(*), a constant
					continue
				}
				nw.Args = append(nw.Args, hide(a, fmt.Sprintf("__ga%d_%d", i, k)))
			}
			if p := w.Spec.PartitionBy; p != nil {
				np := &ast.PartitionByClause{}
				for k, it := range p.Items {
					np.Items = append(np.Items, &ast.ByItem{Expr: hide(it.Expr, fmt.Sprintf("__gp%d_%d", i, k))})
				}
				nw.Spec.PartitionBy = np
			}
			if o := w.Spec.OrderBy; o != nil {
				no := &ast.OrderByClause{}
				for k, it := range o.Items {
					no.Items = append(no.Items, &ast.ByItem{Expr: hide(it.Expr, fmt.Sprintf("__go%d_%d", i, k)), Desc: it.Desc, NullOrder: it.NullOrder})
				}
				nw.Spec.OrderBy = no
			}
			outerFields.Fields = append(outerFields.Fields, &ast.SelectField{Expr: &nw, AsName: f.AsName})
			continue
		}
		var e ast.ExprNode = hide(f.Expr, fmt.Sprintf("__g%d", i))
		if name == "" {
			// No alias: the outer field is no bare column, so that it gets
			// the name an expression gets there.
			e = &ast.ParenthesesExpr{Expr: e}
		}
		outerFields.Fields = append(outerFields.Fields, &ast.SelectField{Expr: e, AsName: ast.NewCIStr(name)})
	}
	outer := &ast.SelectStmt{
		Kind:   ast.SelectStmtKindSelect,
		With:   sel.With,
		Fields: outerFields,
		From: &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &inner, AsName: ast.NewCIStr("__grouped")}}},
		Limit: sel.Limit,
	}
	if sel.OrderBy != nil {
		ob := &ast.OrderByClause{}
		for k, it := range sel.OrderBy.Items {
			e := it.Expr
			switch x := it.Expr.(type) {
			case *ast.PositionExpr:
			case *ast.ColumnNameExpr:
				if x.Name.Table.O != "" || !namesContain(names, x.Name.Name.O) {
					e = hide(it.Expr, fmt.Sprintf("__gs%d", k))
				}
			default:
				e = hide(it.Expr, fmt.Sprintf("__gs%d", k))
			}
			ob.Items = append(ob.Items, &ast.ByItem{Expr: e, Desc: it.Desc, NullOrder: it.NullOrder})
		}
		outer.OrderBy = ob
	}
	return outer, true
}

// windowSpecExprs are the expressions of w's PARTITION BY and ORDER BY.
func windowSpecExprs(w *ast.WindowFuncExpr) []ast.ExprNode {
	var out []ast.ExprNode
	if p := w.Spec.PartitionBy; p != nil {
		for _, it := range p.Items {
			out = append(out, it.Expr)
		}
	}
	if o := w.Spec.OrderBy; o != nil {
		for _, it := range o.Items {
			out = append(out, it.Expr)
		}
	}
	return out
}

func namesContain(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
