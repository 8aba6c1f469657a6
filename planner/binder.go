package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Sentinel errors of planning; the *sql.Error the planner returns wraps one
// of them where it applies, so callers and tests can check with errors.Is.
var (
	ErrUnknownColumn  = errors.New("unknown column")
	ErrUnknownTable   = errors.New("unknown table")
	ErrTypeMismatch   = errors.New("type mismatch")
	ErrUnsupported    = errors.New("not supported")
	ErrUpdatingToSink = errors.New("sink does not accept updates")
	ErrNotGrouped     = errors.New("column not grouped")
)

// planError is a positioned error wrapping a sentinel.
type planError struct {
	pos  *sql.Error
	kind error
}

func (e *planError) Error() string   { return e.pos.Error() }
func (e *planError) Unwrap() []error { return []error{e.pos, e.kind} }

func errAt(kind error, pos sql.Pos, hint string, format string, args ...any) error {
	return &planError{pos: &sql.Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint}, kind: kind}
}

// scopeCol is one column visible to expressions.
type scopeCol struct {
	qual string // table name or alias ("" for derived columns)
	name string
	t    types.T
	// hidden: a column of a join's USING, visible only qualified (l.k)
	// and to l.*, while the merged column is k.
	hidden bool
	// outer, if not nil, makes this a column of an enclosing query seen
	// by a subquery (subquery.go): resolved only when no column of the
	// subquery's own has the name, never part of *, and its use recorded
	// (as column outerIdx of the enclosing scope).
	outer    *corrUse
	outerIdx int
}

// scope is the set of columns an expression may name.
type scope struct {
	cols []scopeCol
}

func (s *scope) schema() types.Schema {
	out := make(types.Schema, len(s.cols))
	for i, c := range s.cols {
		out[i] = types.Column{Name: c.name, Type: c.t}
	}
	return out
}

func scopeOf(n Node, qual string) *scope {
	sc := &scope{}
	for _, c := range n.Schema() {
		sc.cols = append(sc.cols, scopeCol{qual: qual, name: c.Name, t: c.Type})
	}
	return sc
}

// binder binds one statement's AST against the catalog.
type binder struct {
	p    *Planner
	stmt sql.Statement
	// views being expanded, to catch a view that reads itself.
	viewDepth int
	// ctes are the WITH clauses around the query being bound, innermost
	// last (cte.go).
	ctes []*cteScope
	// groupWin is the group window (GROUP BY TUMBLE(...)) of the SELECT
	// being bound, nil if none (groupwindow.go).
	groupWin *groupWindow
	// consts remembers which bound expressions are constant (call).
	consts constFolder
	// depth is the nesting of the expression being bound; steps counts
	// bindExpr calls, to look at the planning context now and then.
	depth, steps int
	// asOf holds the tables bound with FOR SYSTEM_TIME AS OF until their
	// join takes them (temporal_join.go).
	asOf map[Node]asOfTable
	// inputs are the FROM inputs of the SELECT block being bound, hints
	// the statement's STATE_TTL hints (state_ttl.go).
	inputs []blockInput
	hints  *hintLog
	// inject, when set, is the domain of a correlated subquery whose
	// SELECT block is about to be bound (subquery.go); sub is the input
	// that the subqueries of the expressions being bound join onto.
	inject *corrInject
	sub    *subqInput
	// groupExtra are scope columns the next bindAggregate groups by as
	// well (a decorrelated subquery's domain).
	groupExtra []int
	// over maps the select list's ROW_NUMBER() OVER calls to the row
	// number column of their Rank (rank.go).
	over map[*ast.WindowFuncExpr]*ColumnRef
	// proctime is the column PROCTIME() of the select list being bound
	// reads (proctime_attr.go), nil if none.
	proctime *ColumnRef
	// work is what planning the statement has bound so far, shared with
	// the binders of its views (planWork).
	work *planWork
	// subq is what the binder knows of the subqueries of expressions
	// (subquery.go).
	subq subqMemo
}

func (b *binder) pos(e ast.Node) sql.Pos {
	if ex, ok := e.(ast.ExprNode); ok {
		return sql.ExprPos(b.stmt, ex)
	}
	return b.stmt.Pos()
}

func (b *binder) identPos(name string) sql.Pos {
	if p, ok := sql.FindIdent(b.stmt, name); ok {
		return p
	}
	return b.stmt.Pos()
}

// bindQuery binds a SELECT, a set operation or VALUES.
func (b *binder) bindQuery(q ast.ResultSetNode) (Node, error) {
	switch q := q.(type) {
	case *ast.SelectStmt:
		return b.bindSelect(q)
	case *ast.SetOprStmt:
		return b.bindSetOpr(q)
	}
	return nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "unsupported query form %T", q)
}

// castTo projects n onto the column types of target where they differ.
func castTo(n Node, target types.Schema) (Node, error) {
	s := n.Schema()
	same := true
	for i := range s {
		if !s[i].Type.Equal(target[i].Type) {
			same = false
		}
	}
	if same {
		return n, nil
	}
	p := &Project{Input: n}
	for i := range s {
		var e Expr = &ColumnRef{Index: i, Name: s[i].Name, T: s[i].Type}
		if !s[i].Type.Equal(target[i].Type) {
			var err error
			if e, err = implicitCast(e, target[i].Type); err != nil {
				return nil, err
			}
		}
		p.Exprs = append(p.Exprs, e)
		p.Names = append(p.Names, target[i].Name)
	}
	return p, nil
}

// bindFrom binds the FROM clause.
func (b *binder) bindFrom(from *ast.TableRefsClause) (Node, *scope, error) {
	if from == nil {
		// SELECT without FROM reads one empty row.
		v := &Values{Rows: [][]Expr{{}}}
		return v, &scope{}, nil
	}
	return b.bindJoin(from.TableRefs)
}

// bindTableSource binds a table, view, subquery or window table function
// of FROM under its alias.
func (b *binder) bindTableSource(ts *ast.TableSource) (Node, *scope, error) {
	alias := ts.AsName.O
	switch src := ts.Source.(type) {
	case *ast.TableName:
		name := src.Name.O
		if w, ok := sql.WindowOf(b.stmt, src); ok {
			if alias == "" {
				alias = w.Table
			}
			n, err := b.bindWindow(w)
			if err != nil {
				return nil, nil, err
			}
			b.inputs = append(b.inputs, blockInput{name: alias, table: w.Table, node: n, window: true})
			return n, scopeOf(n, alias), nil
		}
		if alias == "" {
			alias = name
		}
		n, err := b.bindTableName(name, sql.TableOptions(b.stmt, src))
		if err != nil {
			return nil, nil, err
		}
		if src.AsOf != nil {
			b.markAsOf(n, name, src.AsOf.TsExpr) // a temporal join's right input (temporal_join.go)
		}
		if n, err = b.aliasColumns(ts, n); err != nil {
			return nil, nil, err
		}
		b.inputs = append(b.inputs, blockInput{name: alias, table: name, node: n})
		return n, scopeOf(n, alias), nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		n, err := b.bindQuery(src)
		if err == nil {
			n, err = b.aliasColumns(ts, n)
		}
		if err != nil {
			return nil, nil, err
		}
		b.inputs = append(b.inputs, blockInput{name: alias, node: n})
		return n, scopeOf(n, alias), nil
	}
	return nil, nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "unsupported FROM source %T", ts.Source)
}

// aliasColumns gives n, the source of table reference ts, the column
// names of the list after its alias (FROM (VALUES ...) AS t(a, b)), if it
// has one: as many as n has columns.
func (b *binder) aliasColumns(ts *ast.TableSource, n Node) (Node, error) {
	cols, pos, ok := sql.AliasColumns(b.stmt, ts)
	if !ok {
		return n, nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return listedNames(n, ts.AsName.O, names, pos, "source")
}

// listedNames is n with its columns named by the column list names that
// name writes at pos (after an alias, or of a name of WITH), which must
// name each of them: n is the list's source or query (of).
func listedNames(n Node, name string, names []string, pos sql.Pos, of string) (Node, error) {
	if s := n.Schema(); len(names) != len(s) {
		return nil, errAt(ErrTypeMismatch, pos, "name each column of the "+of+" once, in order",
			"'%s' names %d columns but its %s has %d", name, len(names), of, len(s))
	}
	return renamed(n, names), nil
}

// renamed is n with its columns named names, one each.
func renamed(n Node, names []string) Node {
	p := &Project{Input: n, Names: names}
	for i, c := range n.Schema() {
		p.Exprs = append(p.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
	}
	return p
}

// bindTableName binds the table or view called name, with the options of
// its OPTIONS hint, if any, over the table's (hintedTable).
func (b *binder) bindTableName(name string, options []sql.Option) (Node, error) {
	if n, ok, err := b.bindCTE(name); ok {
		if err == nil && len(options) > 0 {
			err = errAt(ErrUnsupported, options[0].Pos, "put the hint on a table its query reads",
				"an OPTIONS hint cannot apply to '%s', a name of WITH", name)
		}
		return n, err
	}
	if t, ok := b.p.Catalog.Table(name); ok {
		if len(options) > 0 {
			var err error
			if t, err = hintedTable(t, options); err != nil {
				return nil, err
			}
		}
		return b.scan(t)
	}
	if v, ok := b.p.Catalog.View(name); ok {
		if len(options) > 0 {
			return nil, errAt(ErrUnsupported, options[0].Pos, "put the hint on a table the view reads, in the view's query",
				"an OPTIONS hint cannot apply to view '%s': a view has no options", name)
		}
		return b.expandView(v)
	}
	hint := ""
	if m := catalog.Closest(name, b.p.Catalog.Names()); m != "" {
		hint = fmt.Sprintf("did you mean '%s'?", m)
	}
	if b.namedByWith(name) {
		hint = fmt.Sprintf("'%s' is a name of WITH, which its own query and the expressions before it cannot read", name)
	}
	return nil, errAt(ErrUnknownTable, b.identPos(name), hint, "table or view '%s' does not exist", name)
}

func (b *binder) scan(t *catalog.Table) (Node, error) {
	c, ok := catalog.LookupConnector(t.Connector)
	if !ok {
		return nil, errAt(catalog.ErrUnknownConnector, b.identPos(t.Name), "", "table '%s' uses unknown connector '%s'", t.Name, t.Connector)
	}
	if !c.Source {
		return nil, errAt(ErrUnsupported, b.identPos(t.Name), "", "connector '%s' of table '%s' cannot be read (it is a sink only)", t.Connector, t.Name)
	}
	fields := make([]int, len(t.Columns))
	for i := range fields {
		fields[i] = i
	}
	bounded := c.Bounded != nil && c.Bounded(t.Options)
	updating := c.ProducesUpdates != nil && c.ProducesUpdates(t.Options)
	wm, err := b.bindWatermark(t)
	if err != nil {
		return nil, err
	}
	computed, proctime, err := b.bindTableComputed(t)
	if err != nil {
		return nil, err
	}
	return &Scan{Table: t, Fields: fields, Bounded: bounded, Updating: updating, Watermark: wm, Computed: computed, Proctime: proctime}, nil
}

func (b *binder) expandView(v *catalog.View) (Node, error) {
	if b.viewDepth > 16 {
		return nil, errAt(ErrUnsupported, b.identPos(v.Name), "", "view '%s' refers to itself", v.Name)
	}
	stmts, err := sql.Parse(v.Query)
	if err != nil {
		return nil, fmt.Errorf("view %s: %w", v.Name, err)
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("view %s: stored query is not one statement", v.Name)
	}
	sel, ok := stmts[0].(*sql.Select)
	if !ok {
		return nil, fmt.Errorf("view %s: stored query is not a query", v.Name)
	}
	inner := &binder{p: b.p, stmt: sel, viewDepth: b.viewDepth + 1, hints: b.hints, work: b.planWork()}
	n, err := inner.bindQuery(sel.Query)
	if err == nil {
		err = markEmit(sel, n)
	}
	if err != nil {
		if inner.work.limited(err) {
			return nil, err // at the statement, not in the view
		}
		return nil, fmt.Errorf("in view %s: %w", v.Name, err)
	}
	if len(v.Columns) > 0 {
		s := n.Schema()
		if len(v.Columns) != len(s) {
			return nil, fmt.Errorf("view %s declares %d columns but its query has %d", v.Name, len(v.Columns), len(s))
		}
		n = renamed(n, v.Columns)
	}
	return n, nil
}

// bindSelect binds one SELECT block.
func (b *binder) bindSelect(sel *ast.SelectStmt) (Node, error) {
	if err := b.countSelect(); err != nil {
		return nil, err
	}
	if sel.Kind == ast.SelectStmtKindValues {
		return b.bindValues(sel.Lists)
	}
	if split, ok := groupedOver(sel); ok {
		// A window function over the groups (grouped_over.go).
		return b.bindSelect(split)
	}
	popCTEs, err := b.withCTEs(sel.With)
	if err != nil {
		return nil, err
	}
	defer popCTEs()
	hints, err := b.readTTLHints(sel)
	if err != nil {
		return nil, err
	}
	defer func(in []blockInput) { b.inputs = in }(b.inputs)
	b.inputs = nil
	// A decorrelated subquery's block: its FROM joined to the domain.
	inj := b.inject
	b.inject = nil
	defer func(s *subqInput) { b.sub = s }(b.sub)
	b.sub = nil
	input, sc, err := b.bindFrom(sel.From)
	if err != nil {
		return nil, err
	}
	from, inputs := input, b.inputs
	if inj != nil {
		input, sc = inj.join(input, sc)
	}
	if sel.Where != nil {
		if input, err = b.bindWhere(sel.Where, input, sc); err != nil {
			return nil, err
		}
	}
	if inj != nil && sel.GroupBy == nil && (sel.Having != nil || anyAggregate(sel.Fields.Fields)) {
		if input, sc, err = b.padEmpty(inj, input, sc); err != nil {
			return nil, err
		}
	}
	// Windows in the select list: TUMBLE(size) AS w ... GROUP BY w
	// (selectwindow.go), planned as group windows.
	if sel, err = b.selectWindow(sel, input, sc); err != nil {
		return nil, err
	}
	// Group windows: GROUP BY TUMBLE(ts, size) (groupwindow.go).
	defer func(gw *groupWindow) { b.groupWin = gw }(b.groupWin)
	b.groupWin = nil
	if sel, input, sc, err = b.bindGroupWindow(sel, input, sc); err != nil {
		return nil, err
	}

	// Expand the select list.
	fields, err := b.expandFields(sel.Fields.Fields, sc)
	if err != nil {
		return nil, err
	}

	var having ast.ExprNode
	if sel.Having != nil {
		having = sel.Having.Expr
	}
	var orderItems []*ast.ByItem
	if sel.OrderBy != nil {
		orderItems = sel.OrderBy.Items
	}
	needAgg := sel.GroupBy != nil || having != nil
	for _, f := range fields {
		if f.expr != nil && hasAggregate(f.expr) {
			needAgg = true
		}
	}
	for _, o := range orderItems {
		if hasAggregate(o.Expr) {
			needAgg = true
		}
	}

	// ROW_NUMBER() OVER (...) in the select list: a Rank (rank.go); other
	// window functions: Over nodes (over.go).
	bindOver := b.bindOver
	if needsOverNodes(fields, input) {
		bindOver = b.bindOverAggregates
	}
	if input, sc, err = bindOver(sel, fields, input, sc, needAgg); err != nil {
		return nil, err
	}

	// PROCTIME() in the select list: a column added to the input.
	defer func(c *ColumnRef) { b.proctime = c }(b.proctime)
	b.proctime = nil
	if input, sc, err = b.bindProctime(fields, input, sc, needAgg); err != nil {
		return nil, err
	}

	var agg *aggScope
	if needAgg {
		if inj != nil {
			b.groupExtra = inj.keys
		}
		input, agg, err = b.bindAggregate(input, sc, sel, fields, having, orderItems)
		if err != nil {
			return nil, err
		}
		if inj != nil && inj.marker >= 0 {
			markerFilters(input.(*Aggregate), inj.marker, sc.cols[inj.marker].t)
		}
		if having != nil {
			// Subqueries of HAVING join onto the aggregate's output.
			width := len(input.Schema())
			done := b.withGroupedSubqInput(input, sc, agg)
			cond, err := b.bindBool(having, sc, agg, "HAVING")
			joined := done()
			if err != nil {
				return nil, err
			}
			input = trimTo(&Filter{Input: joined, Cond: cond}, width)
		}
	}

	proj := &Project{Input: input}
	done := func() Node { return input }
	if agg == nil {
		// Subqueries of the select list join onto the input.
		done = b.withSubqInput(input, sc)
	} else {
		// Above GROUP BY, onto the aggregate's output.
		done = b.withGroupedSubqInput(input, sc, agg)
	}
	for i, f := range fields {
		var e Expr
		if f.ref != nil {
			e = f.ref
			if agg != nil {
				var err error
				if e, err = agg.rebind(f.ref, b, f.pos); err != nil {
					return nil, err
				}
			}
		} else {
			var err error
			if e, err = b.bindExpr(f.expr, sc, agg); err != nil {
				return nil, err
			}
		}
		name := f.name
		if name == "" {
			name = fmt.Sprintf("EXPR$%d", i)
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Names = append(proj.Names, name)
	}
	proj.Input = done()
	if inj != nil {
		// The domain's columns follow the select list.
		for k, at := range inj.keys {
			var e Expr = &ColumnRef{Index: at, Name: sc.cols[at].name, T: sc.cols[at].t}
			if agg != nil {
				if e, err = agg.rebind(e.(*ColumnRef), b, b.stmt.Pos()); err != nil {
					return nil, err
				}
			}
			proj.Exprs = append(proj.Exprs, e)
			proj.Names = append(proj.Names, fmt.Sprintf("$corr%d", k))
		}
	}
	var out Node = proj
	grouped, _ := input.(*Aggregate)
	if sel.Distinct {
		keys := make([]int, len(proj.Exprs))
		for i := range keys {
			keys[i] = i
			if err := refuseRowKey(b.stmt.Pos(), "SELECT DISTINCT", proj.Exprs[i].Type()); err != nil {
				return nil, err
			}
		}
		// With a GROUP BY too, the hint goes to the GROUP BY (the first
		// aggregate over the input).
		d := &Aggregate{Input: out, Keys: keys}
		if grouped == nil {
			grouped = d
		}
		out = d
	}
	if hints != nil {
		if err := b.applyTTLHints(hints, inputs, from, grouped); err != nil {
			return nil, err
		}
	}
	if inj != nil {
		return out, nil // ORDER BY has no meaning in a subquery without LIMIT
	}
	return b.orderLimit(out, sc, agg, sel.OrderBy, sel.Limit)
}

// anyAggregate reports whether a select list has an aggregate call.
func anyAggregate(fs []*ast.SelectField) bool {
	for _, f := range fs {
		if f.Expr != nil && hasAggregate(f.Expr) {
			return true
		}
	}
	return false
}

// bindWhere filters input (scope sc) by a WHERE condition: its conjuncts
// [NOT] EXISTS and x [NOT] IN (subquery) become semi and anti joins, the
// rest a Filter (whose subqueries join onto the input below it).
func (b *binder) bindWhere(where ast.ExprNode, input Node, sc *scope) (Node, error) {
	width := len(input.Schema())
	conj := whereConjuncts(where)
	rest := conj[:0:0]
	for _, c := range conj {
		n, ok, err := b.semiAntiConjunct(c, input, sc)
		if err != nil {
			return nil, err
		}
		if ok {
			input = n
			continue
		}
		rest = append(rest, c)
	}
	if len(rest) == 0 {
		return input, nil
	}
	done := b.withSubqInput(input, sc)
	var cond Expr
	if len(rest) == len(conj) {
		x, err := b.bindBool(where, sc, nil, "WHERE")
		if err != nil {
			done()
			return nil, err
		}
		cond = x
	} else {
		for _, c := range rest {
			x, err := b.bindBool(c, sc, nil, "WHERE")
			if err != nil {
				done()
				return nil, err
			}
			cond = andMaybe(cond, x)
		}
	}
	return trimTo(&Filter{Input: done(), Cond: cond}, width), nil
}

func (b *binder) bindValues(rows []*ast.RowExpr) (Node, error) {
	var exprs [][]ast.ExprNode
	for _, r := range rows {
		exprs = append(exprs, r.Values)
	}
	return b.valuesOf(exprs, nil)
}

// valuesOf binds literal rows; names may be nil (EXPR$i).
func (b *binder) valuesOf(rows [][]ast.ExprNode, names []string) (Node, error) {
	if len(rows) == 0 {
		return nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "VALUES needs at least one row")
	}
	width := len(rows[0])
	bound := make([][]Expr, len(rows))
	empty := &scope{}
	for i, r := range rows {
		if len(r) != width {
			return nil, errAt(ErrTypeMismatch, b.pos(r[0]), "", "VALUES row %d has %d values, the first row has %d", i+1, len(r), width)
		}
		for _, e := range r {
			x, err := b.bindExpr(e, empty, nil)
			if err != nil {
				return nil, err
			}
			bound[i] = append(bound[i], x)
		}
	}
	cols := make(types.Schema, width)
	for j := 0; j < width; j++ {
		t := bound[0][j].Type()
		for i := 1; i < len(bound); i++ {
			var ok bool
			if t, ok = commonType(t, bound[i][j].Type()); !ok {
				return nil, errAt(ErrTypeMismatch, b.pos(rows[i][j]), "", "VALUES column %d mixes %s and %s", j+1, bound[0][j].Type(), bound[i][j].Type())
			}
		}
		if t.Kind == types.Null {
			t = types.StringType
		}
		name := fmt.Sprintf("EXPR$%d", j)
		if j < len(names) {
			name = names[j]
		}
		cols[j] = types.Column{Name: name, Type: t.Nullable()}
		for i := range bound {
			e, err := implicitCast(bound[i][j], cols[j].Type)
			if err != nil {
				return nil, errAt(ErrTypeMismatch, b.pos(rows[i][j]), "", "%v", err)
			}
			bound[i][j] = e
		}
	}
	return &Values{Rows: bound, Cols: cols}, nil
}

// selectField is one entry of the expanded select list: either a direct
// column reference (from * or t.*) or an expression to bind.
type selectField struct {
	expr ast.ExprNode
	ref  *ColumnRef
	name string
	pos  sql.Pos
}

func (b *binder) expandFields(fs []*ast.SelectField, sc *scope) ([]selectField, error) {
	var out []selectField
	for _, f := range fs {
		if f.WildCard != nil {
			qual := f.WildCard.Table.O
			found := false
			for i, c := range sc.cols {
				if c.outer != nil {
					continue
				}
				if (qual == "" && !c.hidden) || (qual != "" && strings.EqualFold(c.qual, qual)) {
					out = append(out, selectField{ref: &ColumnRef{Index: i, Name: c.name, T: c.t}, name: c.name, pos: b.stmt.Pos()})
					found = true
				}
			}
			if !found && qual != "" {
				return nil, errAt(ErrUnknownTable, b.identPos(qual), "", "unknown table '%s' in %s.*", qual, qual)
			}
			continue
		}
		name := f.AsName.O
		if name == "" {
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
				name = cn.Name.Name.O
			}
		}
		out = append(out, selectField{expr: f.Expr, name: name})
	}
	return out, nil
}

// orderLimit adds ORDER BY / LIMIT on top of out, whose columns are the
// select list. ORDER BY may name a select-list alias, an ordinal, or an
// expression over the FROM scope (then it is computed as a hidden column).
func (b *binder) orderLimit(out Node, sc *scope, agg *aggScope, ob *ast.OrderByClause, lim *ast.Limit) (Node, error) {
	if ob == nil && lim == nil {
		return out, nil
	}
	s := &Sort{Limit: -1}
	outSchema := out.Schema()
	width := len(outSchema)
	var hidden []Expr
	if ob != nil {
		for _, item := range ob.Items {
			idx, err := b.orderIndex(item.Expr, out, sc, agg, &hidden)
			if err != nil {
				return nil, err
			}
			if err := refuseRowKey(b.pos(item.Expr), "ORDER BY", sortKeyType(out, idx, hidden)); err != nil {
				return nil, err
			}
			nullsFirst := !item.Desc // Flink's default: NULLs are the smallest
			if first, ok := sql.NullsFirst(b.stmt, item); ok {
				nullsFirst = first
			}
			s.Keys = append(s.Keys, SortKey{Index: idx, Desc: item.Desc, NullsFirst: nullsFirst})
		}
	}
	if len(hidden) > 0 {
		p, ok := out.(*Project)
		if !ok {
			return nil, errAt(ErrUnsupported, b.stmt.Pos(), "add the expression to the select list", "ORDER BY expression not in the select list of a DISTINCT or UNION query")
		}
		np := *p
		np.Exprs = append(append([]Expr{}, p.Exprs...), hidden...)
		np.Names = append([]string{}, p.Names...)
		for i := range hidden {
			np.Names = append(np.Names, fmt.Sprintf("$order%d", i))
		}
		out = &np
	}
	if lim != nil {
		n, err := b.constInt(lim.Count, "LIMIT")
		if err != nil {
			return nil, err
		}
		s.Limit = n
		if lim.Offset != nil {
			if s.Offset, err = b.constInt(lim.Offset, "OFFSET"); err != nil {
				return nil, err
			}
		}
	}
	s.Input = out
	var res Node = s
	if len(hidden) > 0 {
		p := &Project{Input: s}
		for i := 0; i < width; i++ {
			p.Exprs = append(p.Exprs, &ColumnRef{Index: i, Name: outSchema[i].Name, T: outSchema[i].Type})
			p.Names = append(p.Names, outSchema[i].Name)
		}
		res = p
	}
	return res, nil
}

func (b *binder) orderIndex(e ast.ExprNode, out Node, sc *scope, agg *aggScope, hidden *[]Expr) (int, error) {
	outSchema := out.Schema()
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.N < 1 || x.N > len(outSchema) {
			return 0, errAt(ErrUnknownColumn, b.pos(e), "", "ORDER BY position %d is not in the select list (1..%d)", x.N, len(outSchema))
		}
		return x.N - 1, nil
	case *ast.ColumnNameExpr:
		if x.Name.Table.O == "" {
			for i, c := range outSchema {
				if strings.EqualFold(c.Name, x.Name.Name.O) {
					return i, nil
				}
			}
		}
	}
	p, ok := out.(*Project)
	if !ok {
		return 0, errAt(ErrUnknownColumn, b.pos(e), "", "ORDER BY expression must name a column of the result")
	}
	bound, err := b.bindExpr(e, sc, agg)
	if err != nil {
		return 0, err
	}
	for i, pe := range p.Exprs {
		if pe.String() == bound.String() {
			return i, nil
		}
	}
	*hidden = append(*hidden, bound)
	return len(p.Exprs) + len(*hidden) - 1, nil
}

func (b *binder) constInt(e ast.ExprNode, what string) (int64, error) {
	x, err := b.bindExpr(e, &scope{}, nil)
	if err != nil {
		return 0, err
	}
	x = foldExpr(x)
	if l, ok := x.(*Literal); ok && l.T.IsInteger() && l.Value != nil && l.Value.(int64) >= 0 {
		return l.Value.(int64), nil
	}
	return 0, errAt(ErrTypeMismatch, b.pos(e), "", "%s needs a non-negative integer constant", what)
}

// bindBool binds a condition, which must be BOOLEAN.
func (b *binder) bindBool(e ast.ExprNode, sc *scope, agg *aggScope, clause string) (Expr, error) {
	x, err := b.bindExpr(e, sc, agg)
	if err != nil {
		return nil, err
	}
	if t := x.Type(); t.Kind != types.Boolean && t.Kind != types.Null {
		if t.IsNumeric() {
			// MySQL and SQLite treat a number as a truth value; Flink does not.
			// Accept it as x <> 0 so that sqllogictest suites run, and say so in the docs.
			zero := &Literal{Value: int64(0), T: types.IntType}
			return b.call("<>", b.pos(e), x, zero)
		}
		return nil, errAt(ErrTypeMismatch, b.pos(e), "", "%s condition must be BOOLEAN, got %s", clause, t)
	}
	return x, nil
}

// resolveColumn finds a column by (optional) qualifier and name.
func (b *binder) resolveColumn(cn *ast.ColumnName, sc *scope, e ast.ExprNode) (*ColumnRef, error) {
	name, qual := cn.Name.O, cn.Table.O
	found := -1
	// The subquery's own columns first, then those of enclosing queries.
	for _, outer := range []bool{false, true} {
		for i, c := range sc.cols {
			if (c.outer != nil) != outer || !strings.EqualFold(c.name, name) {
				continue
			}
			if qual != "" && !strings.EqualFold(c.qual, qual) {
				continue
			}
			if qual == "" && c.hidden {
				continue
			}
			if found >= 0 {
				return nil, errAt(ErrUnknownColumn, b.identPos(name), "qualify it with its table", "column '%s' is ambiguous", name)
			}
			found = i
		}
		if found >= 0 {
			if c := sc.cols[found]; c.outer != nil && c.outerIdx >= 0 {
				c.outer.used[c.outerIdx] = true
			}
			break
		}
	}
	if found < 0 {
		found = sc.windowField(qual, name) // w.start of a window w below
	}
	if found < 0 {
		var names []string
		for _, c := range sc.cols {
			names = append(names, c.name)
		}
		hint := ""
		if qual == "" && sc.find(name+".start") >= 0 {
			hint = fmt.Sprintf("the window %s is the pair %s.start, %s.end", name, name, name)
		} else if m := catalog.Closest(name, names); m != "" {
			hint = fmt.Sprintf("did you mean '%s'?", m)
		} else if len(names) > 0 && len(names) <= 12 {
			hint = "available columns: " + strings.Join(names, ", ")
		}
		full := name
		if qual != "" {
			full = qual + "." + name
		}
		return nil, errAt(ErrUnknownColumn, b.identPos(name), hint, "column '%s' not found", full)
	}
	c := sc.cols[found]
	return &ColumnRef{Index: found, Name: c.name, T: c.t}, nil
}
