package planner

import (
	"errors"
	"fmt"
	"slices"
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
	// userKeys is the number of GROUP BY's expressions, the first keys;
	// sets are its grouping sets (sets[i][j]: set i groups by key j; nil
	// for a plain GROUP BY), and setIndex the aggregate's output column
	// of the row's set (Expand's $e).
	userKeys int
	sets     [][]bool
	setIndex int
}

// hasAggregate reports whether e contains an aggregate call outside of a
// subquery.
func hasAggregate(e ast.ExprNode) bool {
	v := &aggFinder{}
	e.Accept(v)
	return len(v.found) > 0
}

type aggFinder struct {
	found []aggNode
}

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	if a, ok := asAggNode(n); ok {
		v.found = append(v.found, a)
		return n, true
	}
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

// aggNode is an aggregate call as parsed: a TiDB AggregateFuncExpr, or a
// call of a function the TiDB parser does not know as an aggregate
// (BOOL_AND, BOOL_OR, LISTAGG, and FIRST_VALUE / LAST_VALUE without OVER,
// which the sql package renames), possibly wrapped in the call the sql
// package makes of FILTER (WHERE cond) (sql.FilterFunc).
type aggNode struct {
	node     ast.ExprNode // as it stands in the expression
	call     ast.ExprNode // the aggregate call itself (positions)
	name     string       // upper case
	args     []ast.ExprNode
	distinct bool
	filter   ast.ExprNode
}

// funcAggregates maps the names of aggregates parsed as function calls.
var funcAggregates = map[string]AggFunc{
	"bool_and": AggBoolAnd, "bool_or": AggBoolOr, "listagg": AggListAgg, "string_agg": AggListAgg,
	sql.FirstValueFunc: AggFirstValue, sql.LastValueFunc: AggLastValue,
	sql.JSONArrayAggFunc: AggJSONArrayAgg, sql.JSONObjectAggFunc: AggJSONObjectAgg,
}

func asAggNode(n ast.Node) (aggNode, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		return aggNode{node: x, call: x, name: strings.ToUpper(x.F), args: x.Args, distinct: x.Distinct}, true
	case *ast.FuncCallExpr:
		if x.FnName.L == sql.FilterFunc && len(x.Args) == 2 {
			a, ok := asAggNode(x.Args[0])
			if !ok {
				// FILTER after a call that is no aggregate: bindAggCall
				// says the function is not one.
				a = aggNode{call: x}
				if f, isCall := x.Args[0].(*ast.FuncCallExpr); isCall {
					a.name, a.args, a.call = strings.ToUpper(f.FnName.O), f.Args, f
				}
			}
			if a.filter != nil {
				return aggNode{}, false
			}
			a.node, a.filter = x, x.Args[1]
			return a, true
		}
		if f, ok := funcAggregates[x.FnName.L]; ok {
			return aggNode{node: x, call: x, name: string(f), args: x.Args}, true
		}
	}
	return aggNode{}, false
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
	// sets are the grouping sets over GROUP BY's expressions (as exprs
	// lists them); keyOf maps an expression to its key.
	var sets [][]int
	var keyOf []int
	grouped := false
	if sel.GroupBy != nil {
		exprs, ss, g, err := b.groupingItems(sel.GroupBy)
		if err != nil {
			return nil, nil, err
		}
		sets, grouped = ss, g
		for _, e := range exprs {
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
			if err := refuseRowKey(b.pos(e), "GROUP BY", x.Type()); err != nil {
				return nil, nil, err
			}
			if j := slices.Index(agg.keyStrs, x.String()); j >= 0 {
				keyOf = append(keyOf, j) // the same key written twice
				continue
			}
			name := fmt.Sprintf("$key%d", len(keys))
			if c, ok := x.(*ColumnRef); ok {
				name = c.Name
			} else if f, ok := fieldName(x); ok {
				name = f
			}
			k := add(x, name)
			keyOf = append(keyOf, len(keys))
			keys = append(keys, k)
			agg.keyStrs = append(agg.keyStrs, x.String())
			agg.keyExprs = append(agg.keyExprs, x)
			agg.keyT = append(agg.keyT, x.Type())
		}
	}
	agg.userKeys = len(keys)
	if grouped {
		agg.sets = make([][]bool, len(sets))
		for i, s := range sets {
			agg.sets[i] = make([]bool, len(keys))
			for _, e := range s {
				agg.sets[i][keyOf[e]] = true
			}
		}
		for j := range keys {
			for _, s := range agg.sets {
				if !s[j] {
					agg.keyT[j] = agg.keyT[j].Nullable()
					break
				}
			}
		}
	}
	extra := b.groupExtra
	b.groupExtra = nil
	for _, k := range extra {
		// The domain of a decorrelated subquery (subquery.go).
		c := sc.cols[k]
		x := &ColumnRef{Index: k, Name: c.name, T: c.t}
		keys = append(keys, add(x, fmt.Sprintf("$corr%d", len(keys))))
		agg.keyStrs = append(agg.keyStrs, x.String())
		agg.keyExprs = append(agg.keyExprs, x)
		agg.keyT = append(agg.keyT, x.Type())
	}
	nKeys := len(pre.Exprs)
	// Collect the aggregate calls.
	var calls []aggNode
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
		call   AggCall
		arg    Expr
		filter Expr
	}
	var aggs []pending
	updating := ModeOf(input) == Updating
	for _, c := range calls {
		call, arg, filter, key, err := b.bindAggCall(c, sc)
		if err != nil {
			return nil, nil, err
		}
		if updating && (call.Func == AggFirstValue || call.Func == AggLastValue || call.Func == AggListAgg || call.Func == AggJSONArrayAgg || call.Func == AggJSONObjectAgg) {
			return nil, nil, errAt(ErrUnsupported, b.pos(c.call), "aggregate an append-only table or view",
				"%s over an updating input (from %s) is not supported: it depends on the order of the rows and cannot take retractions", call.Func, producer(input))
		}
		if _, dup := agg.aggStrs[key]; dup {
			continue
		}
		agg.aggStrs[key] = len(aggs)
		aggs = append(aggs, pending{call, arg, filter})
	}
	for i := range aggs {
		if aggs[i].arg != nil {
			aggs[i].call.Arg = add(aggs[i].arg, fmt.Sprintf("$arg%d", i))
		}
		if aggs[i].filter != nil {
			aggs[i].call.HasFilter = true
			aggs[i].call.Filter = add(aggs[i].filter, fmt.Sprintf("$filter%d", i))
		}
		aggs[i].call.Name = fmt.Sprintf("EXPR$%d", i)
		agg.aggs = append(agg.aggs, aggs[i].call)
	}
	_ = nKeys
	if agg.sets == nil {
		return &Aggregate{Input: pre, Keys: keys, Aggs: agg.aggs}, agg, nil
	}
	// Grouping sets: the keys of a decorrelated subquery's domain are in
	// every set; the row's set is the last key.
	for i := range agg.sets {
		for len(agg.sets[i]) < len(keys) {
			agg.sets[i] = append(agg.sets[i], true)
		}
	}
	ex := &Expand{Input: pre, Keys: keys, Sets: agg.sets}
	agg.setIndex = len(agg.keyStrs)
	agg.keyStrs = append(agg.keyStrs, "\x00"+ExpandIDName) // no expression's text
	id := &ColumnRef{Index: len(pre.Exprs), Name: ExpandIDName, T: notNullBigInt()}
	agg.keyExprs = append(agg.keyExprs, id)
	agg.keyT = append(agg.keyT, id.T)
	return &Aggregate{Input: ex, Keys: append(keys, len(pre.Exprs)), Aggs: agg.aggs}, agg, nil
}

// bindAggCall binds an aggregate call's argument (and FILTER condition)
// and types it as Flink does. key identifies the call among the query's.
func (b *binder) bindAggCall(c aggNode, sc *scope) (AggCall, Expr, Expr, string, error) {
	name := c.name
	pos := b.pos(c.call)
	call := AggCall{Func: AggFunc(name), Arg: -1, Distinct: c.distinct, Text: aggNodeText(c) + " at " + pos.String()}
	nargs := 1
	switch call.Func {
	case AggCount, AggSum, AggMin, AggMax, AggAvg, AggStddevPop, AggStddevSamp, AggVarPop, AggVarSamp,
		AggBoolAnd, AggBoolOr, AggFirstValue, AggLastValue:
	case AggListAgg:
		nargs = 2
	case AggJSONArrayAgg, AggJSONObjectAgg:
		return b.bindJSONAgg(c, sc, call)
	default:
		return call, nil, nil, "", errAt(ErrUnsupported, pos, "supported: COUNT, SUM, MIN, MAX, AVG, STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP, BOOL_AND, BOOL_OR, FIRST_VALUE, LAST_VALUE, LISTAGG, JSON_ARRAYAGG, JSON_OBJECTAGG", "aggregate function %s is not supported", name)
	}
	if len(c.args) < 1 || len(c.args) > nargs {
		if nargs == 2 {
			return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "%s takes one or two arguments", name)
		}
		return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "%s takes one argument", name)
	}
	if c.distinct && call.Func != AggCount && call.Func != AggSum && call.Func != AggAvg && call.Func != AggMin && call.Func != AggMax {
		return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "%s(DISTINCT ...) is not supported", name)
	}
	countStar := false
	if call.Func == AggCount && !c.distinct {
		if _, ok := c.args[0].(ast.ValueExpr); ok {
			countStar = true // COUNT(*) and COUNT(1) count rows
		}
	}
	for _, a := range c.args {
		if hasAggregate(a) {
			return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "aggregate calls cannot be nested")
		}
	}
	var arg Expr
	if !countStar {
		var err error
		if arg, err = b.bindExpr(c.args[0], sc, nil); err != nil {
			return call, nil, nil, "", err
		}
		call.ArgT = arg.Type()
	}
	switch call.Func {
	case AggCount:
		call.T = types.T{Kind: types.BigInt, NotNull: true}
	case AggSum, AggAvg:
		t := call.ArgT
		if !t.IsNumeric() && t.Kind != types.Null {
			return call, nil, nil, "", errAt(ErrTypeMismatch, b.pos(c.args[0]), "", "%s needs a numeric argument, got %s", name, t)
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
	case AggMin, AggMax, AggFirstValue, AggLastValue:
		call.T = call.ArgT.Nullable()
	case AggStddevPop, AggStddevSamp, AggVarPop, AggVarSamp:
		t := call.ArgT
		if !t.IsNumeric() && t.Kind != types.Null {
			return call, nil, nil, "", errAt(ErrTypeMismatch, b.pos(c.args[0]), "", "%s needs a numeric argument, got %s", name, t)
		}
		// Computed in DOUBLE (Flink keeps the argument's type).
		if t.Kind != types.Double {
			x, err := implicitCast(arg, types.DoubleType.Nullable())
			if err != nil {
				return call, nil, nil, "", errAt(ErrTypeMismatch, b.pos(c.args[0]), "", "%s: %v", name, err)
			}
			arg = x
			call.ArgT = types.DoubleType
		}
		call.T = types.DoubleType.Nullable()
	case AggBoolAnd, AggBoolOr:
		if call.ArgT.Kind != types.Boolean && call.ArgT.Kind != types.Null {
			return call, nil, nil, "", errAt(ErrTypeMismatch, b.pos(c.args[0]), "", "%s needs a BOOLEAN argument, got %s", name, call.ArgT)
		}
		if call.ArgT.Kind == types.Null {
			call.ArgT = types.BooleanType
		}
		call.T = types.BooleanType.Nullable()
	case AggListAgg:
		if call.ArgT.Kind != types.String && call.ArgT.Kind != types.Null {
			return call, nil, nil, "", errAt(ErrTypeMismatch, b.pos(c.args[0]), "cast it: LISTAGG(CAST(x AS STRING))", "%s needs a STRING argument, got %s", name, call.ArgT)
		}
		call.ArgT = types.StringType
		call.Separator = ","
		if len(c.args) == 2 {
			v, ok := c.args[1].(ast.ValueExpr)
			sep, isStr := "", false
			if ok {
				sep, isStr = v.GetValue().(string)
			}
			if !isStr {
				return call, nil, nil, "", errAt(ErrUnsupported, b.pos(c.args[1]), "", "LISTAGG's separator must be a string literal")
			}
			call.Separator = sep
		}
		call.T = types.StringType.Nullable()
	}
	key := name
	if c.distinct {
		key += " DISTINCT"
	}
	if arg != nil {
		key += "(" + arg.String() + ")"
	} else {
		key += "(*)"
	}
	if call.Func == AggListAgg {
		key += fmt.Sprintf(" SEPARATOR %q", call.Separator)
	}
	filter, err := b.bindAggFilter(c, sc)
	if err != nil {
		return call, nil, nil, "", err
	}
	if filter != nil {
		key += " FILTER(" + filter.String() + ")"
	}
	return call, arg, filter, key, nil
}

// aggNodeText is the aggregate call c as SQL text: "SUM(DISTINCT v)",
// "COUNT(*) FILTER (WHERE v > 1)".
func aggNodeText(c aggNode) string {
	var text string
	if x, ok := c.call.(*ast.AggregateFuncExpr); ok {
		text = aggText(x)
	} else {
		parts := make([]string, len(c.args))
		for i, a := range c.args {
			parts[i] = restoreText(a)
		}
		text = c.name + "(" + strings.Join(parts, ", ") + ")"
	}
	if c.filter != nil {
		text += " FILTER (WHERE " + restoreText(c.filter) + ")"
	}
	return text
}

func restoreText(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase, &sb)); err != nil {
		return "?"
	}
	return sb.String()
}

// bindAggregated binds e above the aggregate: a whole subexpression equal to
// a group key reads the key column; an aggregate call reads its result.
// It returns handled=false when e must be bound by the generic rules.
func (b *binder) bindAggregated(e ast.ExprNode, sc *scope, agg *aggScope) (Expr, bool, error) {
	if c, ok := asAggNode(e); ok {
		_, _, _, key, err := b.bindAggCall(c, sc)
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
	if f, ok := e.(*ast.FuncCallExpr); ok && (f.FnName.L == "grouping" || f.FnName.L == "grouping_id") {
		x, err := b.bindGrouping(f, sc, agg)
		return x, true, err
	}
	if _, ok := e.(ast.ValueExpr); ok {
		return nil, false, nil
	}
	if agg.needsAgg(e) {
		// An aggregate call or a group-window function below e: e is no
		// group key; bind its parts.
		return nil, false, nil
	}
	if b.sub != nil && b.sub.agg == agg && hasSubquery(e) {
		// A subquery joins onto the aggregate's output (subquery.go):
		// bind the parts, so the rest reads group keys.
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
	if _, ok := asAggNode(n); ok {
		v.stack = append(v.stack, true)
		return n, true
	}
	switch n := n.(type) {
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

// aggText is the aggregate call c as SQL text: "SUM(DISTINCT v)".
func aggText(c *ast.AggregateFuncExpr) string {
	var sb strings.Builder
	if err := c.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase, &sb)); err != nil {
		return strings.ToUpper(c.F)
	}
	return sb.String()
}

// describe is c as EXPLAIN shows it (and operator identities hash):
// "SUM(DISTINCT v) FILTER (WHERE $filter1) AS EXPR$1".
func (c *AggCall) describe(in types.Schema) string {
	arg := "*"
	if c.Arg >= 0 {
		arg = in[c.Arg].Name
	}
	if c.Distinct {
		arg = "DISTINCT " + arg
	}
	if c.Func == AggListAgg {
		arg += fmt.Sprintf(", '%s'", strings.ReplaceAll(c.Separator, "'", "''"))
	}
	s := fmt.Sprintf("%s(%s)", c.Func, arg)
	if c.HasFilter {
		s += " FILTER (WHERE " + in[c.Filter].Name + ")"
	}
	return s + " AS " + c.Name
}

// aggInputs marks in need the input columns of calls (arguments and
// FILTER conditions), for projection pruning.
func aggInputs(calls []AggCall, need []bool) {
	for _, a := range calls {
		if a.Arg >= 0 {
			need[a.Arg] = true
		}
		if a.HasFilter {
			need[a.Filter] = true
		}
	}
}

// bindJSONAgg binds JSON_ARRAYAGG and JSON_OBJECTAGG (sql.JSONArrayAggFunc,
// sql.JSONObjectAggFunc): the argument is the JSON_ARRAY or JSON_OBJECT
// call of the row's value (its first argument the ON NULL clause), which
// the aggregate joins into one array or object.
func (b *binder) bindJSONAgg(c aggNode, sc *scope, call AggCall) (AggCall, Expr, Expr, string, error) {
	pos := b.pos(c.call)
	name, want := "JSON_ARRAY", 2
	if call.Func == AggJSONObjectAgg {
		name, want = "JSON_OBJECT", 3
	}
	if len(c.args) != want {
		return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "%s takes one value", call.Func)
	}
	if c.distinct {
		return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "%s(DISTINCT ...) is not supported", call.Func)
	}
	args := make([]Expr, len(c.args))
	for i, a := range c.args {
		if hasAggregate(a) {
			return call, nil, nil, "", errAt(ErrUnsupported, pos, "", "aggregate calls cannot be nested")
		}
		e, err := b.bindExpr(a, sc, nil)
		if err != nil {
			return call, nil, nil, "", err
		}
		args[i] = e
	}
	arg, err := b.call(name, pos, args...)
	if err != nil {
		// The aggregate's name, not the call it is built on.
		var pe *planError
		if errors.As(err, &pe) && pe.pos != nil {
			pe.pos.Msg = strings.Replace(pe.pos.Msg, name+":", string(call.Func)+":", 1)
		}
		return call, nil, nil, "", err
	}
	call.ArgT = types.StringType
	if !arg.Type().Equal(call.ArgT) {
		call.ArgT = arg.Type()
	}
	call.T = types.T{Kind: types.String, NotNull: true}
	key := string(call.Func) + "(" + arg.String() + ")"
	filter, err := b.bindAggFilter(c, sc)
	if err != nil {
		return call, nil, nil, "", err
	}
	if filter != nil {
		key += " FILTER(" + filter.String() + ")"
	}
	return call, arg, filter, key, nil
}

// bindAggFilter binds an aggregate call's FILTER (WHERE cond): a BOOLEAN
// condition over the FROM scope without aggregates (nil: none; a NULL
// literal becomes a BOOLEAN NULL).
func (b *binder) bindAggFilter(c aggNode, sc *scope) (Expr, error) {
	if c.filter == nil {
		return nil, nil
	}
	if hasAggregate(c.filter) {
		return nil, errAt(ErrUnsupported, b.pos(c.filter), "", "FILTER (WHERE ...) cannot hold an aggregate call")
	}
	f, err := b.bindExpr(c.filter, sc, nil)
	if err != nil {
		return nil, err
	}
	if f.Type().Kind != types.Boolean && f.Type().Kind != types.Null {
		return nil, errAt(ErrTypeMismatch, b.pos(c.filter), "", "FILTER (WHERE ...) needs a BOOLEAN condition, got %s", f.Type())
	}
	if f.Type().Kind == types.Null {
		f = &Literal{T: types.BooleanType}
	}
	return f, nil
}
