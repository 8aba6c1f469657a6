package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Planner plans statements against a catalog with a session's options.
type Planner struct {
	Catalog *catalog.Catalog
	// Options are the job's options, parsed (ParseJobOptions); zero fields
	// are their defaults.
	Options JobOptions
	// RunQuery, if set, runs a bounded plan to completion and returns its
	// rows. The binder uses it for uncorrelated subqueries in expressions
	// (scalar, IN, EXISTS), which it replaces by their result. Without it,
	// such subqueries are an error.
	RunQuery func(n Node) ([][]types.Value, error)
	// Ctx, if not nil, bounds planning: once it is done, Query and Insert
	// stop within a bounded amount of work and return Ctx.Err().
	Ctx context.Context
}

// Context returns Ctx, or context.Background() if it is nil.
func (p *Planner) Context() context.Context {
	if p.Ctx == nil {
		return context.Background()
	}
	return p.Ctx
}

// ctxErr is the error of the planning context, nil while it is live.
func (p *Planner) ctxErr() error {
	if p.Ctx == nil {
		return nil
	}
	return p.Ctx.Err()
}

// Query plans a query statement into a logical plan (rules applied) whose
// root is a client-collecting Sink.
func (p *Planner) Query(stmt sql.Statement, q ast.ResultSetNode) (*Sink, error) {
	if err := p.ctxErr(); err != nil {
		return nil, err
	}
	b := &binder{p: p, stmt: stmt, hints: &hintLog{}}
	n, err := b.bindQuery(q)
	if err != nil {
		return nil, err
	}
	if err := markEmit(stmt, n); err != nil {
		return nil, err
	}
	o, err := p.optimize(&Sink{Input: n, Name: "collect"})
	if err != nil {
		return nil, err
	}
	out := o.(*Sink)
	if err := checkEmit(out); err != nil {
		return nil, err
	}
	if err := checkModes(out, stmt); err != nil {
		return nil, err
	}
	if err := p.checkJoins(out, stmt.Pos()); err != nil {
		return nil, err
	}
	if err := checkTTLHints(b.hints); err != nil {
		return nil, err
	}
	return out, nil
}

// Insert plans INSERT INTO into a logical plan rooted at the table's Sink.
func (p *Planner) Insert(ins *sql.Insert) (*Sink, error) {
	if err := p.ctxErr(); err != nil {
		return nil, err
	}
	b := &binder{p: p, stmt: ins, hints: &hintLog{}}
	t, ok := p.Catalog.Table(ins.Table)
	if !ok {
		hint := ""
		if m := catalog.Closest(ins.Table, p.Catalog.Names()); m != "" {
			hint = fmt.Sprintf("did you mean '%s'?", m)
		}
		return nil, errAt(ErrUnknownTable, ins.TablePos, hint, "table '%s' does not exist", ins.Table)
	}
	c, ok := catalog.LookupConnector(t.Connector)
	if !ok || !c.Sink {
		return nil, errAt(ErrUnsupported, ins.TablePos, "", "table '%s' (connector '%s') cannot be written", t.Name, t.Connector)
	}
	var src Node
	var err error
	var fields []ast.ExprNode
	if ins.Values != nil {
		src, err = b.valuesInto(ins.Values, t, ins.Columns, ins.TablePos)
	} else {
		fields = selectFields(ins.Query)
		if src, err = b.bindQuery(ins.Query); err == nil {
			err = markEmit(ins, src)
		}
	}
	if err != nil {
		return nil, err
	}
	src, err = b.fitToTable(src, t, ins.Columns, ins.TablePos, fields)
	if err != nil {
		return nil, err
	}
	o, err := p.optimize(&Sink{Input: src, Table: t, Name: t.Name})
	if err != nil {
		return nil, err
	}
	out := o.(*Sink)
	if err := checkEmit(out); err != nil {
		return nil, err
	}
	if err := checkModes(out, ins); err != nil {
		return nil, err
	}
	if err := p.checkJoins(out, ins.Pos()); err != nil {
		return nil, err
	}
	if err := checkTTLHints(b.hints); err != nil {
		return nil, err
	}
	return out, nil
}

// targetColumns maps the table's physical columns onto the n columns the
// query gives: by position, or through an explicit column list. The result
// holds, per table column, the index of the query column that fills it, or
// -1 (NULL).
func (b *binder) targetColumns(t *catalog.Table, cols []string, n int, pos sql.Pos) ([]int, error) {
	phys, _ := t.Physical()
	mapping := make([]int, len(phys)) // table column -> source column or -1
	if len(cols) == 0 {
		if n != len(phys) {
			hint := "list the target columns: INSERT INTO t (a, b) ..."
			if len(phys) < len(t.Columns) {
				hint = "computed columns take no value"
			}
			return nil, errAt(ErrTypeMismatch, pos, hint,
				"query has %d columns but table '%s' has %d (%s)", n, t.Name, len(phys), strings.Join(phys.Names(), ", "))
		}
		for i := range mapping {
			mapping[i] = i
		}
		return mapping, nil
	}
	if len(cols) != n {
		return nil, errAt(ErrTypeMismatch, pos, "", "%d target columns but the query has %d", len(cols), n)
	}
	for i := range mapping {
		mapping[i] = -1
	}
	for j, c := range cols {
		i := phys.Index(c)
		if _, computed := t.ComputedExpr(c); computed {
			return nil, errAt(ErrUnsupported, b.identPos(c), "leave it out of the column list", "column '%s' of table '%s' is computed and takes no value", c, t.Name)
		}
		if i < 0 {
			hint := ""
			if m := catalog.Closest(c, t.Columns.Names()); m != "" {
				hint = fmt.Sprintf("did you mean '%s'?", m)
			}
			return nil, errAt(ErrUnknownColumn, b.identPos(c), hint, "table '%s' has no column '%s'", t.Name, c)
		}
		mapping[i] = j
	}
	for i, col := range phys {
		if mapping[i] < 0 && col.Type.NotNull {
			return nil, errAt(ErrTypeMismatch, pos, "", "column '%s' is NOT NULL and needs a value", col.Name)
		}
	}
	return mapping, nil
}

// valuesInto binds INSERT ... VALUES rows with each value fitted to the
// table column it fills (fitValue), so that a value that cannot go into its
// column is an error at the value.
func (b *binder) valuesInto(rows [][]ast.ExprNode, t *catalog.Table, cols []string, pos sql.Pos) (Node, error) {
	if len(rows) == 0 {
		return nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "VALUES needs at least one row")
	}
	phys, _ := t.Physical()
	width := len(rows[0])
	for i, r := range rows {
		if len(r) != width {
			return nil, errAt(ErrTypeMismatch, b.pos(r[0]), "", "VALUES row %d has %d values, the first row has %d", i+1, len(r), width)
		}
	}
	mapping, err := b.targetColumns(t, cols, width, pos)
	if err != nil {
		return nil, err
	}
	target := make([]int, width) // value index -> table column
	for i, j := range mapping {
		if j >= 0 {
			target[j] = i
		}
	}
	out := &Values{Rows: make([][]Expr, len(rows)), Cols: make(types.Schema, width)}
	for j := range out.Cols {
		col := phys[target[j]]
		out.Cols[j] = types.Column{Name: col.Name, Type: col.Type.Nullable()}
	}
	empty := &scope{}
	for i, r := range rows {
		for j, e := range r {
			x, err := b.bindExpr(e, empty, nil)
			if err != nil {
				return nil, err
			}
			if x, err = fitValue(x, t, phys[target[j]], b.pos(e), ""); err != nil {
				return nil, err
			}
			out.Rows[i] = append(out.Rows[i], x)
		}
	}
	return out, nil
}

// sinkCast reports whether a value of type from goes into a column of type
// to without an explicit CAST: Flink's implicit casts (functions.ImplicitCast)
// and, as Flink's LogicalTypeCasts, TIMESTAMP into DATE and TIME. One
// addition: DECIMAL(p, 0), what an UNSIGNED integer column becomes (MySQL's
// and Arroyo's DDL), goes into an integer column, each value checked while
// running, as Arroyo accepts it.
func sinkCast(from, to types.T) bool {
	if functions.ImplicitCast(from, to) {
		return true
	}
	if from.Kind == types.Decimal && from.Scale == 0 && to.IsInteger() {
		return true
	}
	return from.Kind == types.Timestamp && (to.Kind == types.Date || to.Kind == types.Time)
}

// fitValue fits e, the value written into column col of table t, to the
// column's type. A constant is cast now: NULL into a NOT NULL column, a
// string constant that does not parse as the column's type and a number
// that does not fit the column are errors at pos. A constant string goes
// into any column its text can be cast to, and an integer constant into
// any numeric column it fits, as Flink does with literals. Any other
// expression must be implicitly castable (sinkCast). name, if not empty,
// names e in the hint.
func fitValue(e Expr, t *catalog.Table, col types.Column, pos sql.Pos, name string) (Expr, error) {
	from, to := e.Type(), col.Type.Nullable()
	if l, ok := foldExpr(e).(*Literal); ok {
		if l.Value == nil {
			if col.Type.NotNull {
				return nil, errAt(ErrTypeMismatch, pos, "", "column '%s' of table '%s' is NOT NULL: cannot insert NULL", col.Name, t.Name)
			}
			return &Literal{T: to}, nil
		}
		if from.Equal(to) {
			return l, nil
		}
		literalCast := (from.Kind == types.String && to.Kind != types.String && to.Kind != types.Bytes && !to.IsInterval()) ||
			(from.IsInteger() && to.IsNumeric())
		if sinkCast(from, to) || literalCast {
			v, err := castConst(l, to)
			if err == nil {
				return v, nil
			}
			hint := fmt.Sprintf("write a valid %s constant, or CAST(<expr> AS %s) to convert while running", to, to)
			if to.Kind == types.Row {
				hint = "write a ROW(...) of as many values as the column has fields, each of its field's type"
			}
			return nil, errAt(ErrTypeMismatch, pos, hint,
				"column '%s' of table '%s' is %s: cannot insert %s value %s (%v)", col.Name, t.Name, to, from.Nullable(), l, err)
		}
		return nil, errAt(ErrTypeMismatch, pos, fmt.Sprintf("use CAST(%s AS %s)", l, to),
			"column '%s' of table '%s' is %s but the value %s is %s", col.Name, t.Name, to, l, from.Nullable())
	}
	if from.Equal(to) {
		return e, nil
	}
	if !sinkCast(from, to) {
		if name == "" {
			name = "<expr>"
		}
		return nil, errAt(ErrTypeMismatch, pos, fmt.Sprintf("use CAST(%s AS %s)", name, to),
			"column '%s' of table '%s' is %s but the query gives %s, which does not cast to it implicitly", col.Name, t.Name, to, from.Nullable())
	}
	return implicitCast(e, to)
}

// castConst casts the constant l to t now.
func castConst(l *Literal, t types.T) (*Literal, error) {
	k, err := functions.Cast(l.T, t)
	if err != nil {
		return nil, err
	}
	v, err := evalConst(k, []functions.Vec{{Type: l.T, Const: true, Value: l.Value}})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("cannot cast %s to %s", l, t)
	}
	return &Literal{Value: v, T: t}, nil
}

// fitToTable maps the query's columns onto the table's: by position, or
// through an explicit column list (missing columns are NULL), fitting each
// to its column's type (fitValue: Flink's implicit casts; constants cast
// now). fields, if not nil, are the select list's expressions, one per
// query column, for the positions of errors.
//
// A table with computed columns takes values for its physical columns only,
// as in Flink: they are what its sink writes (catalog.Table.Physical).
func (b *binder) fitToTable(src Node, t *catalog.Table, cols []string, pos sql.Pos, fields []ast.ExprNode) (Node, error) {
	in := src.Schema()
	phys, _ := t.Physical()
	mapping, err := b.targetColumns(t, cols, len(in), pos)
	if err != nil {
		return nil, err
	}
	proj, _ := src.(*Project)
	p := &Project{Input: src}
	identity := len(in) == len(phys)
	for i, col := range phys {
		var e Expr
		if mapping[i] < 0 {
			e = &Literal{T: col.Type.Nullable()}
			identity = false
		} else {
			j := mapping[i]
			if j != i {
				identity = false
			}
			e = &ColumnRef{Index: j, Name: in[j].Name, T: in[j].Type}
			if !in[j].Type.Equal(col.Type) {
				at, name := pos, in[j].Name
				if j < len(fields) && fields[j] != nil {
					at = b.pos(fields[j])
				}
				if strings.HasPrefix(name, "EXPR$") {
					name = ""
				}
				var v Expr = e
				if proj != nil && j < len(proj.Exprs) && isConst(proj.Exprs[j]) {
					v = proj.Exprs[j]
				}
				fitted, err := fitValue(v, t, col, at, name)
				if err != nil {
					return nil, err
				}
				if _, ok := fitted.(*Literal); ok {
					e = fitted
				} else if e, err = implicitCast(e, col.Type.Nullable()); err != nil {
					return nil, errAt(ErrTypeMismatch, at, "add an explicit CAST", "column '%s' is %s but the query gives %s", col.Name, col.Type, in[j].Type)
				}
				identity = false
			}
		}
		p.Exprs = append(p.Exprs, e)
		p.Names = append(p.Names, col.Name)
	}
	if identity {
		return src, nil
	}
	return p, nil
}

// scalarSubquery runs an uncorrelated scalar subquery and returns its value.
func (b *binder) scalarSubquery(e *ast.SubqueryExpr) (Expr, error) {
	rows, cols, err := b.runSubquery(e)
	if err != nil {
		return nil, err
	}
	if len(cols) != 1 {
		return nil, errAt(ErrTypeMismatch, b.pos(e), "", "scalar subquery must return one column, it returns %d", len(cols))
	}
	switch len(rows) {
	case 0:
		return &Literal{T: cols[0].Type.Nullable()}, nil
	case 1:
		return &Literal{Value: rows[0][0], T: cols[0].Type.Nullable()}, nil
	}
	return nil, errAt(ErrTypeMismatch, b.pos(e), "", "scalar subquery returned %d rows", len(rows))
}

func (b *binder) runSubquery(e *ast.SubqueryExpr) ([][]types.Value, types.Schema, error) {
	if b.p.RunQuery == nil {
		return nil, nil, errAt(ErrUnsupported, b.pos(e), "", "subqueries in expressions are not supported here")
	}
	if out, ok := b.subq.out[e.Query]; ok && b.subq.pass > 0 {
		// Only its columns matter to a correlation pass (subqMemo).
		return nil, out, nil
	}
	leave, err := b.enterSubquery(b.pos(e))
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	n, err := b.bindQuery(e.Query)
	if err != nil {
		if errors.Is(err, ErrUnknownColumn) {
			return nil, nil, errAt(ErrUnsupported, b.pos(e), "", "correlated subqueries are not supported (%v)", err)
		}
		return nil, nil, err
	}
	if !IsBounded(n) {
		return nil, nil, errAt(ErrUnsupported, b.pos(e), "", "a subquery in an expression must read bounded tables")
	}
	if b.subq.pass > 0 {
		return nil, n.Schema(), nil
	}
	s, err := b.p.optimize(&Sink{Input: n, Name: "collect"})
	if err != nil {
		return nil, nil, err
	}
	rows, err := b.p.RunQuery(s)
	if err != nil {
		return nil, nil, err
	}
	return rows, n.Schema(), nil
}

// Parallelism returns 'parallelism.default' (Options.Parallelism, 1 when
// zero); the error is that of an out-of-range value.
func (p *Planner) Parallelism() (int, error) {
	if err := p.Options.check(); err != nil {
		return 0, err
	}
	return p.Options.withDefaults().Parallelism, nil
}

// MaxParallelism returns 'pipeline.max-parallelism' (Options.MaxParallelism,
// 128 when zero): the number of key groups.
func (p *Planner) MaxParallelism() (int, error) {
	if err := p.Options.check(); err != nil {
		return 0, err
	}
	return p.Options.withDefaults().MaxParallelism, nil
}

// selectFields returns the expressions of q's select list, one per output
// column, or nil when q is not a plain SELECT or its list has a wildcard.
func selectFields(q ast.ResultSetNode) []ast.ExprNode {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Fields == nil {
		return nil
	}
	var out []ast.ExprNode
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil
		}
		out = append(out, f.Expr)
	}
	return out
}
