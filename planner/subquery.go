package planner

import (
	"fmt"
	"sort"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Subqueries in expressions, decorrelated into joins as Calcite does for
// Flink.
//
// A subquery may read the columns of the query around it (correlated). It
// is bound twice: first with every column of the enclosing scope visible
// (outer columns, resolved only where the subquery's own FROM has no such
// column), to learn which it reads; then over its domain D, the distinct
// values of those columns (an Aggregate over the enclosing input), which
// its SELECT block joins to its FROM (corrInject). Its result R is its
// select list followed by D's columns, joined back to the enclosing input
// on D's columns (null-safe: two NULLs are the same outer value):
//
//   - IN / NOT IN / EXISTS / NOT EXISTS as a conjunct of WHERE: a semi or
//     anti join of the input and R (NOT IN's condition x = y OR x IS NULL
//     OR y IS NULL, as Flink plans it, so that a NULL on either side
//     excludes the row);
//   - elsewhere (in OR, CASE, the select list): a left join of the input
//     and an aggregate of R per D value that counts its rows (EXISTS), or
//     its rows for which x op y is TRUE and is NULL (IN, ANY, SOME, ALL);
//   - a scalar subquery: a left join of the input and R, which has one row
//     per D value when it is an aggregate without GROUP BY (then D is LEFT
//     JOINed to its FROM first, and its aggregates see only real rows, so
//     that COUNT over no row is 0), or an aggregate of R per D value that
//     checks there is at most one row.
//
// Uncorrelated subqueries over bounded tables are run while planning and
// replaced by their result (Planner.RunQuery), as before; over unbounded
// ones they are the same joins with an empty domain.

// corrUse records which columns of an enclosing scope a subquery reads.
type corrUse struct {
	used map[int]bool
}

// corrInject is what the SELECT block of a subquery being decorrelated
// joins to its FROM: the domain of the outer values it reads.
type corrInject struct {
	// newD builds the domain (a new node each call).
	newD func() Node
	// cols are D's columns as the subquery's scope sees them: outer
	// columns, or hidden ones (an IN's left side).
	cols []scopeCol
	// keys are the positions of D's columns in the scope after the FROM
	// (set by bindSelect), which the SELECT block groups by and outputs.
	keys []int
	// marker is the scope column that is NULL on the padded rows of D
	// LEFT JOIN FROM (an aggregate without GROUP BY), else -1.
	marker int
	// scalarAgg: the block is an aggregate without GROUP BY.
	scalarAgg bool
}

// subqInput is the input the expressions being bound read; a subquery in
// them joins onto it, and the expression reads the joined columns.
type subqInput struct {
	input Node
	sc    *scope
	// agg: above GROUP BY, input is the aggregate's output (its group keys
	// first) and sc the scope of its input; a subquery reads the outer
	// columns through the group keys (outerCol).
	agg *aggScope
}

// withSubqInput binds with input (read through sc) as the node subqueries
// join onto; done returns the input, with what they joined.
func (b *binder) withSubqInput(input Node, sc *scope) (done func() Node) {
	saved := b.sub
	b.sub = &subqInput{input: input, sc: sc}
	return func() Node {
		n := b.sub.input
		b.sub = saved
		return n
	}
}

// withGroupedSubqInput is withSubqInput above GROUP BY: input is the
// aggregate's output (or a filter of it), sc the scope of the aggregate's
// input and agg its aggregate scope.
func (b *binder) withGroupedSubqInput(input Node, sc *scope, agg *aggScope) (done func() Node) {
	done = b.withSubqInput(input, sc)
	b.sub.agg = agg
	return done
}

// outerCol is column i of the enclosing scope sc as the input subqueries
// join onto has it: the column, or above GROUP BY its group key. A
// correlated subquery above GROUP BY may read only grouped columns, as
// SQL requires.
func (b *binder) outerCol(sc *scope, i int, pos sql.Pos) (Expr, error) {
	c := sc.cols[i]
	ref := &ColumnRef{Index: i, Name: c.name, T: c.t}
	if b.sub == nil || b.sub.sc != sc || b.sub.agg == nil {
		return ref, nil
	}
	e, err := b.sub.agg.rebind(ref, b, pos)
	if err != nil {
		return nil, errAt(ErrNotGrouped, pos, "group by "+c.name+", or aggregate it in the query around",
			"a correlated subquery above GROUP BY reads column '%s' of the outer query, which is not grouped", c.name)
	}
	return e, nil
}

// trimTo projects n onto its first width columns when it has more.
func trimTo(n Node, width int) Node {
	s := n.Schema()
	if len(s) == width {
		return n
	}
	p := &Project{Input: n}
	for i := 0; i < width; i++ {
		p.Exprs = append(p.Exprs, &ColumnRef{Index: i, Name: s[i].Name, T: s[i].Type})
		p.Names = append(p.Names, s[i].Name)
	}
	return p
}

// subqSelect is the SELECT block of a subquery, or an error at pos naming
// the shape when it is another form.
func (b *binder) subqSelect(e ast.ExprNode, pos sql.Pos) (*ast.SelectStmt, *ast.SubqueryExpr, error) {
	sq, ok := e.(*ast.SubqueryExpr)
	if !ok {
		return nil, nil, errAt(ErrUnsupported, pos, "write the subquery in parentheses: (SELECT ...)", "unsupported subquery form %T", e)
	}
	sel, _ := sq.Query.(*ast.SelectStmt)
	return sel, sq, nil
}

// subqMemo is what a binder knows of the subqueries of expressions, so
// that none is bound more often than its enclosing query.
//
// A subquery is bound twice: once with every column of the enclosing
// scope visible, to learn which it reads (correlation), then for real
// (decorrelated, or uncorrelated and run while planning). Binding the
// first way is done once per enclosing scope (corr), and in it the
// subqueries it holds are bound the first way only (pass > 0): their
// result is a stand-in of the right columns (standIn) or, when they would
// be run, no rows. So a subquery nested n deep is bound n times, not 2ⁿ.
type subqMemo struct {
	// corr holds what correlation learned, by subquery and scope.
	corr map[corrKey]*corrInfo
	// out holds the columns of each subquery correlation has bound.
	out map[ast.ResultSetNode]types.Schema
	// pass counts the correlation passes under way: while it is above
	// zero, what is bound is thrown away once its correlation is known.
	pass int
}

type corrKey struct {
	q     ast.ResultSetNode
	sc    *scope
	width int
}

// corrInfo is what binding a subquery with every column of a scope
// visible learned.
type corrInfo struct {
	// corr are the columns of the scope it reads, in order.
	corr []int
	// out are its own columns.
	out types.Schema
	// n is that binding: out, then the scope's columns (none for a set
	// operation or VALUES). It reads the tables the subquery reads.
	n Node
}

// correlationOf is correlation(q, sc), once per q and sc.
func (b *binder) correlationOf(q ast.ResultSetNode, sc *scope, pos sql.Pos) (*corrInfo, error) {
	k := corrKey{q: q, sc: sc, width: len(sc.cols)}
	if ci, ok := b.subq.corr[k]; ok {
		return ci, nil
	}
	ci, err := b.correlation(q, sc, pos)
	if err != nil {
		return nil, err
	}
	if b.subq.corr == nil {
		b.subq.corr = map[corrKey]*corrInfo{}
		b.subq.out = map[ast.ResultSetNode]types.Schema{}
	}
	b.subq.corr[k] = ci
	b.subq.out[q] = ci.out
	return ci, nil
}

// correlation binds the subquery q with every column of sc visible and
// returns the columns of sc it reads, in order, with its own columns.
func (b *binder) correlation(q ast.ResultSetNode, sc *scope, pos sql.Pos) (*corrInfo, error) {
	b.subq.pass++
	defer func() { b.subq.pass-- }()
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Kind == ast.SelectStmtKindValues {
		// A set operation or VALUES: correlation is not supported there.
		n, err := b.bindQuery(q)
		if err != nil {
			if isUnknownColumn(err) {
				return nil, errAt(ErrUnsupported, pos, "move the outer column into a WHERE of a plain SELECT",
					"a correlated subquery that is a set operation or VALUES is not supported (%v)", err)
			}
			return nil, err
		}
		return &corrInfo{out: n.Schema(), n: n}, nil
	}
	use := &corrUse{used: map[int]bool{}}
	inj := &corrInject{marker: -1}
	all := make(types.Schema, len(sc.cols))
	for i, c := range sc.cols {
		all[i] = types.Column{Name: fmt.Sprintf("$outer%d", i), Type: c.t}
		oc := c
		oc.outer, oc.outerIdx = use, i
		inj.cols = append(inj.cols, oc)
	}
	inj.newD = func() Node { return &Values{Cols: all} }
	saved := b.inject
	b.inject = inj
	n, err := b.bindSelect(sel)
	b.inject = saved
	if err != nil {
		return nil, err
	}
	ci := &corrInfo{n: n}
	for i := range use.used {
		ci.corr = append(ci.corr, i)
	}
	sort.Ints(ci.corr)
	s := n.Schema()
	ci.out = s[:len(s)-len(sc.cols)]
	return ci, nil
}

// standIn is what a correlation pass takes for the subquery of ci in sc,
// carrying extra: its columns, then the domain's (as decorrelated returns
// them), over the tables it reads. The columns it reads of sc are marked
// read where sc has them from further out, as decorrelated does.
func standIn(ci *corrInfo, sc *scope, extra []Expr) Node {
	s := ci.n.Schema()
	p := &Project{Input: ci.n}
	for i := range ci.out {
		p.Exprs = append(p.Exprs, &ColumnRef{Index: i, Name: s[i].Name, T: s[i].Type})
		p.Names = append(p.Names, s[i].Name)
	}
	for _, k := range ci.corr {
		c := sc.cols[k]
		if c.outer != nil {
			c.outer.used[c.outerIdx] = true
		}
		p.Exprs = append(p.Exprs, &Literal{T: c.t.Nullable()})
		p.Names = append(p.Names, fmt.Sprintf("$corr%d", len(p.Names)-len(ci.out)))
	}
	for _, x := range extra {
		p.Exprs = append(p.Exprs, &Literal{T: x.Type().Nullable()})
		p.Names = append(p.Names, fmt.Sprintf("$corr%d", len(p.Names)-len(ci.out)))
	}
	return p
}

// runsWhilePlanning reports whether the subquery q (in scope sc, at pos) is
// run while planning and replaced by its result: uncorrelated, over
// bounded tables, with a way to run it. While a correlation pass is under
// way, it is not run: runSubquery returns no rows for it.
func (b *binder) runsWhilePlanning(q ast.ResultSetNode, sc *scope, pos sql.Pos) (bool, error) {
	ci, err := b.correlationOf(q, sc, pos)
	if err != nil {
		return false, err
	}
	return len(ci.corr) == 0 && b.p.RunQuery != nil && IsBounded(ci.n), nil
}

func isUnknownColumn(err error) bool {
	pe, ok := err.(*planError)
	return ok && pe.kind == ErrUnknownColumn
}

// decorrelated binds sel over the domain of the columns corr of sc and the
// expressions extra (over sc) read from input: its result is the select
// list followed by the domain's columns (corr, then extra).
func (b *binder) decorrelated(sel *ast.SelectStmt, input Node, sc *scope, corr []int, extra []Expr, pos sql.Pos) (Node, error) {
	use := &corrUse{used: map[int]bool{}}
	inj := &corrInject{marker: -1}
	var dExprs []Expr
	var dNames []string
	for _, k := range corr {
		c := sc.cols[k]
		if c.outer != nil {
			c.outer.used[c.outerIdx] = true // read through from further out
		}
		x, err := b.outerCol(sc, k, pos)
		if err != nil {
			return nil, err
		}
		dExprs = append(dExprs, x)
		dNames = append(dNames, fmt.Sprintf("$corr%d", len(dNames)))
		oc := c
		oc.outer, oc.outerIdx = use, k
		inj.cols = append(inj.cols, oc)
	}
	for _, x := range extra {
		dExprs = append(dExprs, x)
		dNames = append(dNames, fmt.Sprintf("$corr%d", len(dNames)))
		inj.cols = append(inj.cols, scopeCol{t: x.Type(), hidden: true, outer: use, outerIdx: -1})
	}
	inj.newD = func() Node {
		p := &Project{Input: input, Exprs: dExprs, Names: dNames}
		keys := make([]int, len(dExprs))
		for i := range keys {
			keys[i] = i
		}
		return &Aggregate{Input: p, Keys: keys}
	}
	saved := b.inject
	b.inject = inj
	r, err := b.bindSelect(sel)
	b.inject = saved
	return r, err
}

// injectDomain joins the domain to the FROM of a subquery's SELECT block
// (bindSelect): an inner join, the domain's columns after the FROM's.
func (inj *corrInject) join(input Node, sc *scope) (Node, *scope) {
	d := inj.newD()
	j := &Join{Left: input, Right: d, Type: InnerJoin}
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	inj.keys = inj.keys[:0]
	for _, c := range inj.cols {
		inj.keys = append(inj.keys, len(out.cols))
		out.cols = append(out.cols, c)
	}
	return j, out
}

// padEmpty makes the filtered input of an aggregate without GROUP BY (its
// FROM joined to the domain, scope sc) the domain LEFT JOIN it, so that
// each outer value has its group, and marks the real rows: the aggregates
// count those only (markerFilters).
func (b *binder) padEmpty(inj *corrInject, input Node, sc *scope) (Node, *scope, error) {
	s := input.Schema()
	right := &Project{Input: input}
	for i, c := range s {
		right.Exprs = append(right.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		right.Names = append(right.Names, c.Name)
	}
	right.Exprs = append(right.Exprs, &Literal{Value: true, T: types.T{Kind: types.Boolean, NotNull: true}})
	right.Names = append(right.Names, "$marker")
	d := inj.newD()
	nd := len(d.Schema())
	var cond Expr
	for k, at := range inj.keys {
		l := &ColumnRef{Index: k, Name: d.Schema()[k].Name, T: d.Schema()[k].Type}
		r := &ColumnRef{Index: nd + at, Name: s[at].Name, T: s[at].Type}
		eq, err := b.nullSafeEq(l, r)
		if err != nil {
			return nil, nil, err
		}
		cond = andMaybe(cond, eq)
	}
	j := &Join{Left: d, Right: right, Type: LeftJoin, Cond: cond, Pos: b.stmt.Pos()}
	js := j.Schema()
	out := &scope{}
	for k, c := range inj.cols {
		c.t = js[k].Type
		out.cols = append(out.cols, c)
	}
	isKey := map[int]bool{}
	for _, at := range inj.keys {
		isKey[at] = true
	}
	for i, c := range sc.cols {
		if isKey[i] {
			c = scopeCol{hidden: true}
		}
		c.t = js[nd+i].Type
		out.cols = append(out.cols, c)
	}
	out.cols = append(out.cols, scopeCol{hidden: true, t: js[len(js)-1].Type})
	for k := range inj.keys {
		inj.keys[k] = k
	}
	inj.marker = len(out.cols) - 1
	return j, out, nil
}

// markerFilters makes each aggregate of a (over the padded input of
// padEmpty) skip the padded rows: its FILTER becomes marker AND it.
func markerFilters(a *Aggregate, marker int, mt types.T) {
	pre, ok := a.Input.(*Project)
	if !ok {
		return
	}
	m := &ColumnRef{Index: marker, Name: "$marker", T: mt}
	pre.Exprs = append(pre.Exprs, m)
	pre.Names = append(pre.Names, "$marker")
	mi := len(pre.Exprs) - 1
	for i := range a.Aggs {
		c := &a.Aggs[i]
		if !c.HasFilter {
			c.HasFilter, c.Filter = true, mi
			continue
		}
		pre.Exprs = append(pre.Exprs, and(m, pre.Exprs[c.Filter]))
		pre.Names = append(pre.Names, fmt.Sprintf("$filter%d", i))
		c.Filter = len(pre.Exprs) - 1
	}
	a.cols = nil
}

// zeroOf is a value of t to stand for NULL in a null-safe join key, nil
// when there is none at hand.
func zeroOf(t types.T) *Literal {
	t = t.Nullable()
	src := &Literal{Value: int64(0), T: types.IntType}
	switch {
	case t.Kind == types.String:
		return &Literal{Value: "", T: t}
	case t.Kind == types.Boolean:
		return &Literal{Value: false, T: t}
	case t.IsNumeric():
		if l, err := castConst(src, t); err == nil {
			return l
		}
	}
	return nil
}

// nullSafeEq is l IS NOT DISTINCT FROM r written as equalities a join can
// hash on: (l IS NULL) = (r IS NULL) AND COALESCE(l, 0) = COALESCE(r, 0);
// l = r when neither may be NULL.
func (b *binder) nullSafeEq(l, r Expr) (Expr, error) {
	pos := b.stmt.Pos()
	if l.Type().NotNull && r.Type().NotNull {
		return b.call("=", pos, l, r)
	}
	z := zeroOf(l.Type())
	if z == nil || !l.Type().Nullable().Equal(r.Type().Nullable()) {
		return b.call("IS NOT DISTINCT FROM", pos, l, r)
	}
	ln, err := b.call("IS NULL", pos, l)
	if err != nil {
		return nil, err
	}
	rn, err := b.call("IS NULL", pos, r)
	if err != nil {
		return nil, err
	}
	nulls, err := b.call("=", pos, ln, rn)
	if err != nil {
		return nil, err
	}
	lc, err := b.call("COALESCE", pos, l, z)
	if err != nil {
		return nil, err
	}
	rc, err := b.call("COALESCE", pos, r, z)
	if err != nil {
		return nil, err
	}
	vals, err := b.call("=", pos, lc, rc)
	if err != nil {
		return nil, err
	}
	return and(nulls, vals), nil
}

// subquery is a subquery of an expression, bound: its result R (the select
// list, then the domain's columns), the columns of the enclosing scope it
// reads and the outer expressions it carries.
type subquery struct {
	r     Node
	nOut  int
	corr  []int
	extra []Expr
	// scalarAgg: R has one row per domain value (an aggregate without
	// GROUP BY).
	scalarAgg bool
}

// bindSubquery binds the subquery e (an *ast.SubqueryExpr) of an expression
// over sc, with extra outer expressions to carry (IN's left side). It
// returns nil (and no error) when the subquery is uncorrelated and reads
// bounded tables and constant is set: the caller runs it while planning.
func (b *binder) bindSubquery(e ast.ExprNode, sc *scope, extra []Expr, constant bool) (*subquery, error) {
	pos := b.pos(e)
	sel, sq, err := b.subqSelect(e, pos)
	if err != nil {
		return nil, err
	}
	leave, err := b.enterSubquery(pos)
	if err != nil {
		return nil, err
	}
	defer leave()
	ci, err := b.correlationOf(sq.Query, sc, pos)
	if err != nil {
		return nil, err
	}
	corr := ci.corr
	if constant {
		if run, err := b.runsWhilePlanning(sq.Query, sc, pos); err != nil || run {
			return nil, err
		}
	}
	if b.sub == nil || b.sub.sc != sc {
		if len(corr) > 0 {
			return nil, errAt(ErrUnsupported, pos, "compute it in the FROM clause: join the table and aggregate it there",
				"a correlated subquery here (in ORDER BY, a join's ON, GROUP BY or an aggregate's argument) is not supported yet")
		}
		return nil, errAt(ErrUnsupported, pos, "compute it in the FROM clause as a join",
			"a subquery over unbounded tables here (in ORDER BY, a join's ON, GROUP BY or an aggregate's argument) is not supported yet")
	}
	if sel == nil {
		return nil, errAt(ErrUnsupported, pos, "write it as one SELECT", "a set operation as a subquery of an unbounded or correlated query is not supported yet")
	}
	if sel.Limit != nil {
		return nil, errAt(ErrUnsupported, pos, "leave out LIMIT", "LIMIT in a correlated subquery or one over unbounded tables is not supported")
	}
	if b.subq.pass > 0 {
		return &subquery{r: standIn(ci, sc, extra), nOut: len(ci.out), corr: corr, extra: extra, scalarAgg: isScalarAgg(sel)}, nil
	}
	if len(corr) == 0 && len(extra) == 0 {
		r, err := b.bindQuery(sel)
		if err != nil {
			return nil, err
		}
		return &subquery{r: r, nOut: len(r.Schema()), scalarAgg: isScalarAgg(sel)}, nil
	}
	r, err := b.decorrelated(sel, b.sub.input, sc, corr, extra, pos)
	if err != nil {
		return nil, err
	}
	nOut := len(r.Schema()) - len(corr) - len(extra)
	return &subquery{r: r, nOut: nOut, corr: corr, extra: extra, scalarAgg: isScalarAgg(sel)}, nil
}

// isScalarAgg reports whether sel is an aggregate without GROUP BY (it
// yields one row, per domain value when it is decorrelated).
func isScalarAgg(sel *ast.SelectStmt) bool {
	if sel.GroupBy != nil || sel.Distinct {
		return false
	}
	if sel.Having != nil {
		return false // it may yield no row
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && hasAggregate(f.Expr) {
			return true
		}
	}
	return false
}

// domainCond is the condition that joins the enclosing input (left, whose
// first columns are sc's) to a per-domain relation whose columns from
// shift on are the domain's (corr, then extra): null-safe equalities.
func (b *binder) domainCond(s *subquery, sc *scope, nl, shift int, right types.Schema) (Expr, error) {
	var cond Expr
	k := 0
	add := func(l Expr) error {
		c := right[shift+k]
		r := &ColumnRef{Index: nl + shift + k, Name: c.Name, T: c.Type}
		eq, err := b.nullSafeEq(l, r)
		if err != nil {
			return err
		}
		cond = andMaybe(cond, eq)
		k++
		return nil
	}
	for _, i := range s.corr {
		x, err := b.outerCol(sc, i, b.stmt.Pos())
		if err != nil {
			return nil, err
		}
		if err := add(x); err != nil {
			return nil, err
		}
	}
	for _, x := range s.extra {
		if err := add(x); err != nil {
			return nil, err
		}
	}
	return cond, nil
}

// perDomain aggregates R per domain value: keys the domain's columns,
// then the aggregates aggs over R's columns and the expressions exprs
// (arguments and FILTER conditions, over R; an AggCall's Arg and Filter
// index exprs, offset by the domain's width).
func perDomain(s *subquery, aggs []AggCall, exprs []Expr) *Aggregate {
	rs := s.r.Schema()
	nd := len(rs) - s.nOut
	pre := &Project{Input: s.r}
	keys := make([]int, nd)
	for k := 0; k < nd; k++ {
		c := rs[s.nOut+k]
		pre.Exprs = append(pre.Exprs, &ColumnRef{Index: s.nOut + k, Name: c.Name, T: c.Type})
		pre.Names = append(pre.Names, c.Name)
		keys[k] = k
	}
	for i, x := range exprs {
		pre.Exprs = append(pre.Exprs, x)
		pre.Names = append(pre.Names, fmt.Sprintf("$arg%d", i))
	}
	for i := range aggs {
		if aggs[i].Arg >= 0 {
			aggs[i].Arg += nd
		}
		if aggs[i].HasFilter {
			aggs[i].Filter += nd
		}
		aggs[i].Name = fmt.Sprintf("$agg%d", i)
	}
	return &Aggregate{Input: pre, Keys: keys, Aggs: aggs}
}

var countT = types.T{Kind: types.BigInt, NotNull: true}

// joinBack left-joins rel (the domain's columns, then values) to the
// enclosing input and returns the column of the first value in the result.
func (b *binder) joinBack(s *subquery, rel Node) (int, error) {
	in := b.sub.input
	nl := len(in.Schema())
	rs := rel.Schema()
	nd := len(s.corr) + len(s.extra)
	cond, err := b.domainCond(s, b.sub.sc, nl, 0, rs)
	if err != nil {
		return 0, err
	}
	b.sub.input = &Join{Left: in, Right: rel, Type: LeftJoin, Cond: cond, Pos: b.stmt.Pos()}
	return nl + nd, nil
}

// colOf is a reference to column i of the enclosing input.
func (b *binder) colOf(i int) *ColumnRef {
	s := b.sub.input.Schema()
	return &ColumnRef{Index: i, Name: s[i].Name, T: s[i].Type}
}

// scalarSubqueryJoin binds a scalar subquery as a join.
func (b *binder) scalarSubqueryJoin(e *ast.SubqueryExpr, sc *scope) (Expr, error) {
	s, err := b.bindSubquery(e, sc, nil, true)
	if err != nil || s == nil {
		return nil, err
	}
	pos := b.pos(e)
	if s.nOut != 1 {
		return nil, errAt(ErrTypeMismatch, pos, "", "scalar subquery must return one column, it returns %d", s.nOut)
	}
	rs := s.r.Schema()
	vt := rs[0].Type
	var rel Node
	if s.scalarAgg {
		// One row per domain value already: the domain's columns, then the value.
		p := &Project{Input: s.r}
		for k := s.nOut; k < len(rs); k++ {
			p.Exprs = append(p.Exprs, &ColumnRef{Index: k, Name: rs[k].Name, T: rs[k].Type})
			p.Names = append(p.Names, rs[k].Name)
		}
		p.Exprs = append(p.Exprs, &ColumnRef{Index: 0, Name: rs[0].Name, T: vt})
		p.Names = append(p.Names, "$value")
		rel = p
	} else {
		// At most one row per domain value: the value (any: there is one),
		// and the count, which must not be above one.
		aggs := []AggCall{
			{Func: AggMax, Arg: 0, T: vt.Nullable(), ArgT: vt, Text: "scalar subquery at " + pos.String()},
			{Func: AggCount, Arg: -1, T: countT, Text: "scalar subquery at " + pos.String()},
		}
		if !orderable(vt) {
			aggs[0].Func = AggFirstValue
		}
		rel = perDomain(s, aggs, []Expr{&ColumnRef{Index: 0, Name: rs[0].Name, T: vt}})
	}
	at, err := b.joinBack(s, rel)
	if err != nil {
		return nil, err
	}
	v := b.colOf(at)
	if s.scalarAgg {
		return v, nil
	}
	return b.singleRow(v, b.colOf(at+1), pos)
}

// orderable reports whether MIN / MAX take values of t.
func orderable(t types.T) bool {
	return t.IsNumeric() || t.Kind == types.String || t.Kind == types.Boolean || t.Kind == types.Date ||
		t.Kind == types.Time || t.Kind == types.Timestamp
}

// singleRow is v, or a runtime error when the scalar subquery's count of
// rows cnt is above one (Flink: "more than one row").
func (b *binder) singleRow(v, cnt Expr, pos sql.Pos) (Expr, error) {
	one := &Literal{Value: int64(1), T: types.T{Kind: types.BigInt, NotNull: true}}
	many, err := b.call(">", pos, cnt, one)
	if err != nil {
		return nil, err
	}
	fail, err := b.call(functions.SingleValueFunc, pos, many, v)
	if err != nil {
		return nil, err
	}
	return fail, nil
}

// existsJoin binds EXISTS (subquery) (NOT EXISTS when not) as a join.
func (b *binder) existsJoin(sqe ast.ExprNode, not bool, sc *scope, pos sql.Pos) (Expr, error) {
	s, err := b.bindSubquery(sqe, sc, nil, true)
	if err != nil || s == nil {
		return nil, err
	}
	rel := perDomain(s, []AggCall{{Func: AggCount, Arg: -1, T: countT, Text: "EXISTS at " + pos.String()}}, nil)
	at, err := b.joinBack(s, rel)
	if err != nil {
		return nil, err
	}
	cnt, err := b.call("COALESCE", pos, b.colOf(at), &Literal{Value: int64(0), T: countT})
	if err != nil {
		return nil, err
	}
	op := ">"
	if not {
		op = "="
	}
	return b.call(op, pos, cnt, &Literal{Value: int64(0), T: countT})
}

// quantifiedJoin binds x op ANY (subquery) (all: op ALL) as a join; IN is
// = ANY. The subquery's rows are counted per outer value: all of them,
// those for which x op y is TRUE, and those for which it is NULL.
func (b *binder) quantifiedJoin(x Expr, op string, all bool, sqe ast.ExprNode, sc *scope, pos sql.Pos) (Expr, error) {
	s, err := b.bindSubquery(sqe, sc, []Expr{x}, false)
	if err != nil {
		return nil, err
	}
	if s.nOut != 1 {
		return nil, errAt(ErrTypeMismatch, pos, "", "the subquery of %s must return one column, it returns %d", op, s.nOut)
	}
	rs := s.r.Schema()
	y := &ColumnRef{Index: 0, Name: rs[0].Name, T: rs[0].Type}
	xi := len(rs) - 1 // x is the domain's last column
	xr := &ColumnRef{Index: xi, Name: rs[xi].Name, T: rs[xi].Type}
	cmp, err := b.call(op, pos, xr, y)
	if err != nil {
		return nil, err
	}
	isTrue, err := b.call("IS TRUE", pos, cmp)
	if err != nil {
		return nil, err
	}
	isNull, err := b.call("IS NULL", pos, cmp)
	if err != nil {
		return nil, err
	}
	text := op + " subquery at " + pos.String()
	aggs := []AggCall{
		{Func: AggCount, Arg: -1, T: countT, Text: text},
		{Func: AggCount, Arg: -1, T: countT, Text: text, HasFilter: true, Filter: 0},
		{Func: AggCount, Arg: -1, T: countT, Text: text, HasFilter: true, Filter: 1},
	}
	rel := perDomain(s, aggs, []Expr{isTrue, isNull})
	at, err := b.joinBack(s, rel)
	if err != nil {
		return nil, err
	}
	zero := &Literal{Value: int64(0), T: countT}
	count := func(i int) (Expr, error) { return b.call("COALESCE", pos, b.colOf(at+i), zero) }
	nAll, err := count(0)
	if err != nil {
		return nil, err
	}
	nTrue, err := count(1)
	if err != nil {
		return nil, err
	}
	nNull, err := count(2)
	if err != nil {
		return nil, err
	}
	tru := &Literal{Value: true, T: types.BooleanType}
	fls := &Literal{Value: false, T: types.BooleanType}
	null := &Literal{T: types.BooleanType}
	if !all {
		// TRUE when some comparison is TRUE, else NULL when some is NULL.
		c1, err := b.call(">", pos, nTrue, zero)
		if err != nil {
			return nil, err
		}
		c2, err := b.call(">", pos, nNull, zero)
		if err != nil {
			return nil, err
		}
		return b.call("CASE", pos, c1, tru, c2, null, fls)
	}
	// TRUE when every comparison is (none: TRUE), else NULL when the rest
	// are NULL, else FALSE.
	c1, err := b.call("=", pos, nTrue, nAll)
	if err != nil {
		return nil, err
	}
	sum, err := b.call("+", pos, nTrue, nNull)
	if err != nil {
		return nil, err
	}
	c2, err := b.call("=", pos, sum, nAll)
	if err != nil {
		return nil, err
	}
	return b.call("CASE", pos, c1, tru, c2, null, fls)
}

// compareOps are the operators of x op ANY / ALL (subquery).
var compareOps = map[opcode.Op]string{
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
}

// bindCompareSubquery binds x op ANY / SOME / ALL (subquery).
func (b *binder) bindCompareSubquery(e *ast.CompareSubqueryExpr, sc *scope, agg *aggScope) (Expr, error) {
	op, ok := compareOps[e.Op]
	if !ok {
		return nil, errAt(ErrUnsupported, b.pos(e), "", "operator %s before ANY / ALL is not supported", e.Op)
	}
	x, err := b.bindExpr(e.L, sc, agg)
	if err != nil {
		return nil, err
	}
	if agg != nil && (b.sub == nil || b.sub.agg != agg) {
		return nil, errAt(ErrUnsupported, b.pos(e), "compute it in the FROM clause", "ANY / ALL subqueries above GROUP BY are supported only in HAVING and the select list")
	}
	return b.quantifiedJoin(x, op, e.All, e.R, sc, b.pos(e))
}

// semiAntiConjunct plans a conjunct of WHERE that is [NOT] EXISTS or
// x [NOT] IN (subquery) as a semi or anti join of input (scope sc): ok is
// false when c is another expression, or an uncorrelated subquery over
// bounded tables (run while planning instead).
func (b *binder) semiAntiConjunct(c ast.ExprNode, input Node, sc *scope) (Node, bool, error) {
	for {
		p, ok := c.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		c = p.Expr
	}
	not := false
	if u, ok := c.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Not || u.Op == opcode.Not2) {
		if _, ok := u.V.(*ast.ExistsSubqueryExpr); ok {
			not, c = true, u.V
		}
	}
	var sqe ast.ExprNode
	var x Expr
	pos := b.pos(c)
	switch e := c.(type) {
	case *ast.ExistsSubqueryExpr:
		sqe, not = e.Sel, not != e.Not
	case *ast.PatternInExpr:
		if e.Sel == nil {
			return nil, false, nil
		}
		sqe, not = e.Sel, e.Not
		var err error
		if x, err = b.bindExpr(e.Expr, sc, nil); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, nil
	}
	if sel, ok := subquerySelect(sqe); ok {
		if n, ok, err := b.windowSemiAnti(sel, x, not, input, sc, pos); ok || err != nil {
			return n, ok, err
		}
	}
	done := b.withSubqInput(input, sc)
	s, err := b.bindSubquery(sqe, sc, nil, true)
	if in := done(); in != input && err == nil {
		err = errAt(ErrUnsupported, pos, "", "a subquery in the left side of IN is not supported")
	}
	if err != nil || s == nil {
		return nil, false, err
	}
	nl := len(input.Schema())
	rs := s.r.Schema()
	cond, err := b.domainCond(&subquery{corr: s.corr}, sc, nl, s.nOut, rs)
	if err != nil {
		return nil, false, err
	}
	if x != nil {
		if s.nOut != 1 {
			return nil, false, errAt(ErrTypeMismatch, pos, "", "IN subquery must return one column, it returns %d", s.nOut)
		}
		y := &ColumnRef{Index: nl, Name: rs[0].Name, T: rs[0].Type}
		eq, err := b.inCond(x, y, not, pos)
		if err != nil {
			return nil, false, err
		}
		cond = andMaybe(cond, eq)
	}
	typ := LeftSemi
	if not {
		typ = LeftAnti
	}
	return &Join{Left: input, Right: s.r, Type: typ, Cond: cond, Pos: pos}, true, nil
}

// inCond is the condition on which a row x of the enclosing query matches
// a row y of an IN subquery: x = y; for NOT IN, Flink's x = y OR x IS NULL
// OR y IS NULL, so that a NULL on either side excludes the row.
func (b *binder) inCond(x, y Expr, not bool, pos sql.Pos) (Expr, error) {
	eq, err := b.call("=", pos, x, y)
	if err != nil || !not {
		return eq, err
	}
	xn, err := b.call("IS NULL", pos, x)
	if err != nil {
		return nil, err
	}
	yn, err := b.call("IS NULL", pos, y)
	if err != nil {
		return nil, err
	}
	if eq, err = b.call("OR", pos, eq, xn); err != nil {
		return nil, err
	}
	return b.call("OR", pos, eq, yn)
}

// subquerySelect is the SELECT block of the subquery e, if it is one.
func subquerySelect(e ast.ExprNode) (*ast.SelectStmt, bool) {
	sq, ok := e.(*ast.SubqueryExpr)
	if !ok {
		return nil, false
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	return sel, ok
}

// whereConjuncts splits a WHERE condition into its top-level AND terms.
func whereConjuncts(e ast.ExprNode) []ast.ExprNode {
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd {
			return append(whereConjuncts(x.L), whereConjuncts(x.R)...)
		}
	case *ast.ParenthesesExpr:
		if inner := whereConjuncts(x.Expr); len(inner) > 1 {
			return inner
		}
	}
	return []ast.ExprNode{e}
}
