package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// aggScope binds the expressions above a GROUP BY: they may use the group
// keys (matched by their bound form) and the aggregate calls, nothing else.
type aggScope struct {
	in      *scope
	keyStrs []string
	keyT    []types.T
	// keyExprs are the bound group keys (keyStrs are their Strings);
	// maxKeyNodes is the size of the largest (substitute).
	keyExprs    []Expr
	maxKeyNodes int
	// special caches needsAgg per node of the expressions bound so far.
	special map[ast.ExprNode]bool
	aggs    []AggCall
	aggStrs map[string]int
}

// hasAggregate reports whether e contains an aggregate call outside of a
// subquery.
func hasAggregate(e ast.ExprNode) bool {
	v := &aggFinder{}
	e.Accept(v)
	return len(v.found) > 0
}

type aggFinder struct {
	found []*ast.AggregateFuncExpr
}

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.AggregateFuncExpr:
		v.found = append(v.found, n)
		return n, true
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// bindAggregate builds Project(keys, agg args) -> Aggregate and the scope
// to bind the select list, HAVING and ORDER BY against.
func (b *binder) bindAggregate(input Node, sc *scope, sel *ast.SelectStmt, fields []selectField, having ast.ExprNode, order []*ast.ByItem) (Node, *aggScope, error) {
	pre := &Project{Input: input}
	agg := &aggScope{in: sc, aggStrs: map[string]int{}}
	add := func(e Expr, name string) int {
		for i, x := range pre.Exprs {
			if x.String() == e.String() {
				return i
			}
		}
		pre.Exprs = append(pre.Exprs, e)
		pre.Names = append(pre.Names, name)
		return len(pre.Exprs) - 1
	}
	var keys []int
	if sel.GroupBy != nil {
		for _, item := range sel.GroupBy.Items {
			e := item.Expr
			if p, ok := e.(*ast.PositionExpr); ok {
				if p.N < 1 || p.N > len(fields) || fields[p.N-1].expr == nil {
					return nil, nil, errAt(ErrUnknownColumn, b.pos(e), "", "GROUP BY position %d is not in the select list", p.N)
				}
				e = fields[p.N-1].expr
			} else if cn, ok := e.(*ast.ColumnNameExpr); ok && cn.Name.Table.O == "" && sc.find(cn.Name.Name.O) < 0 {
				// GROUP BY a select-list alias (MySQL allows it).
				for _, f := range fields {
					if f.expr != nil && strings.EqualFold(f.name, cn.Name.Name.O) {
						e = f.expr
					}
				}
			}
			if hasAggregate(e) {
				return nil, nil, errAt(ErrUnsupported, b.pos(e), "", "aggregate functions are not allowed in GROUP BY")
			}
			x, err := b.bindExpr(e, sc, nil)
			if err != nil {
				return nil, nil, err
			}
			name := fmt.Sprintf("$key%d", len(keys))
			if c, ok := x.(*ColumnRef); ok {
				name = c.Name
			}
			k := add(x, name)
			keys = append(keys, k)
			agg.keyStrs = append(agg.keyStrs, x.String())
			agg.keyExprs = append(agg.keyExprs, x)
			agg.keyT = append(agg.keyT, x.Type())
		}
	}
	nKeys := len(pre.Exprs)
	// Collect the aggregate calls.
	var calls []*ast.AggregateFuncExpr
	collect := func(e ast.ExprNode) {
		if e == nil {
			return
		}
		v := &aggFinder{}
		e.Accept(v)
		calls = append(calls, v.found...)
	}
	for _, f := range fields {
		if f.expr != nil {
			collect(f.expr)
		}
	}
	collect(having)
	for _, o := range order {
		collect(o.Expr)
	}
	type pending struct {
		call AggCall
		arg  Expr
	}
	var aggs []pending
	for _, c := range calls {
		call, arg, key, err := b.bindAggCall(c, sc)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := agg.aggStrs[key]; dup {
			continue
		}
		agg.aggStrs[key] = len(aggs)
		aggs = append(aggs, pending{call, arg})
	}
	for i := range aggs {
		if aggs[i].arg != nil {
			aggs[i].call.Arg = add(aggs[i].arg, fmt.Sprintf("$arg%d", i))
		}
		aggs[i].call.Name = fmt.Sprintf("EXPR$%d", i)
		agg.aggs = append(agg.aggs, aggs[i].call)
	}
	_ = nKeys
	return &Aggregate{Input: pre, Keys: keys, Aggs: agg.aggs}, agg, nil
}

// bindAggCall binds an aggregate call's argument and types it as Flink does.
func (b *binder) bindAggCall(c *ast.AggregateFuncExpr, sc *scope) (AggCall, Expr, string, error) {
	name := strings.ToUpper(c.F)
	call := AggCall{Func: AggFunc(name), Arg: -1, Distinct: c.Distinct, Text: aggText(c) + " at " + b.pos(c).String()}
	switch call.Func {
	case AggCount, AggSum, AggMin, AggMax, AggAvg:
	default:
		return call, nil, "", errAt(ErrUnsupported, b.pos(c), "supported: COUNT, SUM, MIN, MAX, AVG", "aggregate function %s is not supported", name)
	}
	if len(c.Args) != 1 {
		return call, nil, "", errAt(ErrUnsupported, b.pos(c), "", "%s takes one argument", name)
	}
	countStar := false
	if call.Func == AggCount && !c.Distinct {
		if _, ok := c.Args[0].(ast.ValueExpr); ok {
			countStar = true // COUNT(*) and COUNT(1) count rows
		}
	}
	if hasAggregate(c.Args[0]) {
		return call, nil, "", errAt(ErrUnsupported, b.pos(c), "", "aggregate calls cannot be nested")
	}
	var arg Expr
	if !countStar {
		var err error
		if arg, err = b.bindExpr(c.Args[0], sc, nil); err != nil {
			return call, nil, "", err
		}
		call.ArgT = arg.Type()
	}
	switch call.Func {
	case AggCount:
		call.T = types.T{Kind: types.BigInt, NotNull: true}
	case AggSum, AggAvg:
		t := call.ArgT
		if !t.IsNumeric() && t.Kind != types.Null {
			return call, nil, "", errAt(ErrTypeMismatch, b.pos(c.Args[0]), "", "%s needs a numeric argument, got %s", name, t)
		}
		if t.Kind == types.Null {
			t = types.IntType
		}
		if t.Kind == types.Decimal && call.Func == AggSum {
			t = types.DecimalOf(38, t.Scale)
		}
		if t.Kind == types.Decimal && call.Func == AggAvg {
			t = types.DecimalOf(38, max(t.Scale, 6))
		}
		call.T = t.Nullable()
	case AggMin, AggMax:
		call.T = call.ArgT.Nullable()
	}
	key := name
	if c.Distinct {
		key += " DISTINCT"
	}
	if arg != nil {
		key += "(" + arg.String() + ")"
	} else {
		key += "(*)"
	}
	return call, arg, key, nil
}

// aggText is the aggregate call c as SQL text: "SUM(DISTINCT v)".
func aggText(c *ast.AggregateFuncExpr) string {
	var sb strings.Builder
	if err := c.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase, &sb)); err != nil {
		return strings.ToUpper(c.F)
	}
	return sb.String()
}

// bindAggregated binds e above the aggregate: a whole subexpression equal to
// a group key reads the key column; an aggregate call reads its result.
// It returns handled=false when e must be bound by the generic rules.
func (b *binder) bindAggregated(e ast.ExprNode, sc *scope, agg *aggScope) (Expr, bool, error) {
	if c, ok := e.(*ast.AggregateFuncExpr); ok {
		_, _, key, err := b.bindAggCall(c, sc)
		if err != nil {
			return nil, true, err
		}
		i, ok := agg.aggStrs[key]
		if !ok {
			return nil, true, errAt(ErrUnsupported, b.pos(e), "", "aggregate %s was not planned", key)
		}
		a := agg.aggs[i]
		return &ColumnRef{Index: len(agg.keyStrs) + i, Name: a.Name, T: a.T}, true, nil
	}
	if _, ok := e.(ast.ValueExpr); ok {
		return nil, false, nil
	}
	if agg.needsAgg(e) {
		// An aggregate call or a group-window function below e: e is no
		// group key; bind its parts.
		return nil, false, nil
	}
	// e reads only the FROM scope: bind it once, then replace the
	// subexpressions equal to group keys by the key columns. Whatever
	// column is left is neither grouped nor aggregated.
	x, err := b.bindExpr(e, sc, nil)
	if err != nil {
		return nil, false, nil
	}
	y, err := agg.substitute(b, x)
	return y, true, err
}

// needsAgg reports whether e has an aggregate call or a group-window
// function (TUMBLE_START, ...) outside of subqueries: one pass over the
// top-level expression answers for all its subexpressions.
func (a *aggScope) needsAgg(e ast.ExprNode) bool {
	if has, ok := a.special[e]; ok {
		return has
	}
	if a.special == nil {
		a.special = map[ast.ExprNode]bool{}
	}
	v := &specialFinder{into: a.special}
	e.Accept(v)
	return a.special[e]
}

// specialFinder records, for every expression node it visits, whether an
// aggregate call or a group-window function lies under it.
type specialFinder struct {
	into  map[ast.ExprNode]bool
	stack []bool
}

func (v *specialFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.AggregateFuncExpr:
		v.stack = append(v.stack, true)
		return n, true
	case *ast.FuncCallExpr:
		name := n.FnName.L
		for fn := range groupWindowKinds {
			if strings.HasPrefix(name, fn) {
				v.stack = append(v.stack, true)
				return n, false
			}
		}
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		v.stack = append(v.stack, false)
		return n, true
	}
	v.stack = append(v.stack, false)
	return n, false
}

func (v *specialFinder) Leave(n ast.Node) (ast.Node, bool) {
	top := len(v.stack) - 1
	has := v.stack[top]
	v.stack = v.stack[:top]
	if e, ok := n.(ast.ExprNode); ok {
		v.into[e] = has
	}
	if top > 0 && has {
		v.stack[top-1] = true
	}
	return n, true
}

// substitute replaces, top-down, each subexpression of x (bound over the
// FROM scope) that equals a group key by that key's column, and fails on a
// column reference that is left. Only subexpressions no larger than the
// largest key are printed and compared, so the time is linear in the size
// of x for given keys.
func (a *aggScope) substitute(b *binder, x Expr) (Expr, error) {
	if a.maxKeyNodes == 0 {
		for _, k := range a.keyExprs {
			a.maxKeyNodes = max(a.maxKeyNodes, exprNodes(k, nil))
		}
	}
	sizes := map[Expr]int{}
	exprNodes(x, sizes)
	var sub func(e Expr) (Expr, error)
	sub = func(e Expr) (Expr, error) {
		if sizes[e] <= a.maxKeyNodes {
			s := e.String()
			for i, k := range a.keyStrs {
				if k == s {
					name := fmt.Sprintf("$key%d", i)
					if c, ok := e.(*ColumnRef); ok {
						name = c.Name
					}
					return &ColumnRef{Index: i, Name: name, T: a.keyT[i]}, nil
				}
			}
		}
		switch e := e.(type) {
		case *ColumnRef:
			return nil, errAt(ErrNotGrouped, b.identPos(e.Name), "add it to GROUP BY or wrap it in an aggregate such as MAX()",
				"column '%s' is neither grouped nor aggregated", e.Name)
		case *Call:
			c := *e
			c.Args = make([]Expr, len(e.Args))
			for i, arg := range e.Args {
				y, err := sub(arg)
				if err != nil {
					return nil, err
				}
				c.Args[i] = y
			}
			return &c, nil
		case *Cast:
			c := *e
			y, err := sub(e.Arg)
			if err != nil {
				return nil, err
			}
			c.Arg = y
			return &c, nil
		}
		return e, nil
	}
	return sub(x)
}

// exprNodes returns the number of nodes of e, recording each
// subexpression's count in sizes if it is not nil.
func exprNodes(e Expr, sizes map[Expr]int) int {
	n := 1
	switch x := e.(type) {
	case *Call:
		for _, arg := range x.Args {
			n += exprNodes(arg, sizes)
		}
	case *Cast:
		n += exprNodes(x.Arg, sizes)
	}
	if sizes != nil {
		sizes[e] = n
	}
	return n
}

// rebind maps a direct column reference of the FROM scope (from SELECT *)
// onto the aggregate's output.
func (a *aggScope) rebind(ref *ColumnRef, b *binder, pos sql.Pos) (Expr, error) {
	for i, k := range a.keyStrs {
		if k == ref.String() {
			return &ColumnRef{Index: i, Name: ref.Name, T: ref.T}, nil
		}
	}
	return nil, errAt(ErrNotGrouped, pos, "list the grouped columns instead of *", "column '%s' is neither grouped nor aggregated", ref.Name)
}

func (s *scope) find(name string) int {
	for i, c := range s.cols {
		if strings.EqualFold(c.name, name) {
			return i
		}
	}
	return -1
}
