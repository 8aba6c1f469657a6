package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
)

// Change plans the read of an UPDATE or DELETE (st is a *sql.Update or a
// *sql.Delete) as a query over its table: SELECT the table's physical
// columns of the rows WHERE keeps (the rows the statement removes), and
// for UPDATE after them the rows' new values, each SET expression fitted to
// its column as INSERT fits a value (fitValue; a column not SET keeps its
// value). The caller runs the query and applies its rows as the changes
// -D (DELETE) or -U and +U (UPDATE) to the table it returns.
//
// Only tables whose connector can commit such changes (catalog.Connector's
// Change: the tables created without WITH) can be changed: a connector's table is a stream the engine reads or writes, not
// rows it holds, and Flink has no UPDATE or DELETE on streaming tables.
func (p *Planner) Change(st sql.Statement) (*Sink, *catalog.Table, error) {
	if err := p.ctxErr(); err != nil {
		return nil, nil, err
	}
	var (
		table, verb string
		tablePos    sql.Pos
		where       ast.ExprNode
		set         []sql.Assignment
	)
	switch st := st.(type) {
	case *sql.Update:
		table, tablePos, where, set, verb = st.Table, st.TablePos, st.Where, st.Set, "UPDATE"
	case *sql.Delete:
		table, tablePos, where, verb = st.Table, st.TablePos, st.Where, "DELETE"
	default:
		return nil, nil, errAt(ErrUnsupported, st.Pos(), "", "cannot plan %T as a change of a table", st)
	}
	t, err := p.changedTable(table, tablePos, verb)
	if err != nil {
		return nil, nil, err
	}
	b := &binder{p: p, stmt: st, hints: &hintLog{}}
	phys, _ := t.Physical()
	n := len(phys)

	// The new value of each column: its column, or its rightmost SET.
	newVals := make([]ast.ExprNode, n)
	for i, c := range phys {
		newVals[i] = &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(c.Name)}}
	}
	setFields := make([]ast.ExprNode, n)
	for _, a := range set {
		i := phys.Index(a.Column)
		if _, computed := t.ComputedExpr(a.Column); computed {
			return nil, nil, errAt(ErrUnsupported, a.Pos, "", "column '%s' of table '%s' is computed and cannot be SET", a.Column, t.Name)
		}
		if i < 0 {
			hint := ""
			if m := catalog.Closest(a.Column, phys.Names()); m != "" {
				hint = fmt.Sprintf("did you mean '%s'?", m)
			}
			return nil, nil, errAt(ErrUnknownColumn, a.Pos, hint, "table '%s' has no column '%s'", t.Name, a.Column)
		}
		newVals[i], setFields[i] = a.Expr, a.Expr
	}

	fields := &ast.FieldList{}
	for _, c := range phys {
		fields.Fields = append(fields.Fields, &ast.SelectField{
			Expr: &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(c.Name)}}})
	}
	if set != nil {
		for i, e := range newVals {
			fields.Fields = append(fields.Fields, &ast.SelectField{Expr: e, AsName: ast.NewCIStr("new$" + phys[i].Name)})
		}
	}
	q := &ast.SelectStmt{
		Kind:   ast.SelectStmtKindSelect,
		Fields: fields,
		From: &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &ast.TableName{Name: ast.NewCIStr(t.Name)}}}},
		Where: where,
	}
	src, err := b.bindQuery(q)
	if err != nil {
		return nil, nil, err
	}
	if set != nil {
		if src, err = b.fitNewValues(src, t, n, tablePos, setFields); err != nil {
			return nil, nil, err
		}
	}
	o, err := p.optimize(&Sink{Input: src, Name: "collect"})
	if err != nil {
		return nil, nil, err
	}
	out := o.(*Sink)
	if err := checkModes(out, st); err != nil {
		return nil, nil, err
	}
	if err := p.checkJoins(out, st.Pos()); err != nil {
		return nil, nil, err
	}
	return out, t, nil
}

// changedTable returns the table an UPDATE, DELETE or REPLACE (verb)
// changes, or the error that says why it cannot be changed.
func (p *Planner) changedTable(name string, pos sql.Pos, verb string) (*catalog.Table, error) {
	t, ok := p.Catalog.Table(name)
	if !ok {
		if _, isView := p.Catalog.View(name); isView {
			return nil, errAt(ErrUnsupported, pos, "", "cannot %s view '%s': a view holds no rows", strings.ToLower(verb), name)
		}
		hint := ""
		if m := catalog.Closest(name, p.Catalog.Names()); m != "" {
			hint = fmt.Sprintf("did you mean '%s'?", m)
		}
		return nil, errAt(ErrUnknownTable, pos, hint, "table '%s' does not exist", name)
	}
	if c, ok := catalog.LookupConnector(t.Connector); !ok || c.Change == nil {
		if verb == "REPLACE" {
			return nil, errAt(ErrUnsupported, pos, "use INSERT INTO: into a table with a PRIMARY KEY and an upserting connector (upsert-kafka) it upserts",
				"REPLACE INTO is not supported on table '%s' (connector '%s'): it is a streaming table, whose rows the engine does not hold", t.Name, t.Connector)
		}
		return nil, errAt(ErrUnsupported, pos, "UPDATE and DELETE change tables created without WITH",
			"%s is not supported on table '%s' (connector '%s'): it is a streaming table, whose rows the engine does not hold (Flink has no UPDATE or DELETE on streaming tables)",
			verb, t.Name, t.Connector)
	}
	if t.AppendOnly && verb != "REPLACE" {
		return nil, errAt(ErrUnsupported, pos, "", "%s is not supported on table '%s': it is APPEND ONLY", verb, t.Name)
	}
	return t, nil
}

// CheckReplace returns the error of a REPLACE INTO (INSERT OR REPLACE) of a
// table that is not one created without WITH.
func (p *Planner) CheckReplace(ins *sql.Insert) error {
	_, err := p.changedTable(ins.Table, ins.TablePos, "REPLACE")
	return err
}

// fitNewValues fits the last n columns of src (the new values of an
// UPDATE) to the table's columns as INSERT does (fitToTable), keeping the
// first n (the old rows) as they are. fields are the SET expressions by
// column (nil where a column is not SET), for the positions of errors.
func (b *binder) fitNewValues(src Node, t *catalog.Table, n int, pos sql.Pos, fields []ast.ExprNode) (Node, error) {
	// Fit a projection of the new values, over src's own input when src is
	// a projection, so that fitValue sees constants as constants.
	proj, ok := src.(*Project)
	var newPart *Project
	if ok && len(proj.Exprs) == 2*n {
		newPart = &Project{Input: proj.Input, Exprs: proj.Exprs[n:], Names: proj.Names[n:]}
	} else {
		proj = &Project{Input: src}
		for i, c := range src.Schema() {
			proj.Exprs = append(proj.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
			proj.Names = append(proj.Names, c.Name)
		}
		newPart = &Project{Input: src, Exprs: proj.Exprs[n:], Names: proj.Names[n:]}
	}
	fitted, err := b.fitToTable(newPart, t, nil, pos, fields)
	if err != nil {
		return nil, err
	}
	out := &Project{Input: proj.Input, Exprs: append([]Expr(nil), proj.Exprs[:n]...), Names: append([]string(nil), proj.Names[:n]...)}
	if fitted == Node(newPart) {
		out.Exprs = append(out.Exprs, newPart.Exprs...)
	} else {
		fp := fitted.(*Project)
		for _, e := range fp.Exprs {
			out.Exprs = append(out.Exprs, mapExpr(e, func(x Expr) Expr {
				if c, ok := x.(*ColumnRef); ok {
					return newPart.Exprs[c.Index]
				}
				return x
			}))
		}
	}
	for _, name := range newPart.Names {
		out.Names = append(out.Names, name)
	}
	return out, nil
}
