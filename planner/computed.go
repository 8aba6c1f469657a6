package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Computed columns (Flink's "c AS expr" in CREATE TABLE).
//
// A computed column is a deterministic expression over the physical
// columns of the same row (not over other computed columns; no aggregate,
// no subquery). It is part of the table's schema, so SELECT * shows it and a
// WATERMARK FOR may name it, but the connector never sees it: the source
// subtask computes it over each batch it reads, right after the connector
// returned the batch, and INSERT INTO the table gives values to the
// physical columns only.
//
// "pt AS PROCTIME()" is the table's processing-time attribute: the wall
// clock of the source subtask, read once per batch when the batch is read,
// TIMESTAMP(3) NOT NULL (ProctimeType). PROCTIME() anywhere else is an error.
// A scan that reads it and whose table declares no WATERMARK emits
// processing-time watermarks (exec/proctime.go), so window aggregation over
// it fires on the wall clock.

// ProctimeType is the type of a PROCTIME() column: TIMESTAMP(3) NOT NULL.
// Flink's is TIMESTAMP_LTZ(3); there is no TIMESTAMP_LTZ here and the
// session time zone is UTC, so the values are the same (DESCRIBE marks
// the column *PROCTIME*).
func ProctimeType() types.T {
	t := types.TimestampOf(3)
	t.NotNull = true
	return t
}

// IsProctimeCall reports whether e is the call PROCTIME() (parentheses
// allowed): a computed column defined so is the table's processing-time
// attribute.
func IsProctimeCall(e ast.ExprNode) bool {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	f, ok := e.(*ast.FuncCallExpr)
	return ok && f.FnName.L == "proctime" && len(f.Args) == 0
}

// ComputedColumnType binds the expression e of a computed column of t, as
// written in the CREATE TABLE statement stmt (for positions in errors),
// over t's physical columns and returns its type. The columns of t already
// list the computed ones (their types are not read).
func (p *Planner) ComputedColumnType(stmt sql.Statement, t *catalog.Table, e ast.ExprNode) (types.T, error) {
	if IsProctimeCall(e) {
		return ProctimeType(), nil
	}
	b := &binder{p: p.withoutSubqueries(), stmt: stmt}
	x, err := b.bindComputed(t, e)
	if err != nil {
		return types.T{}, err
	}
	return x.Type(), nil
}

// withoutSubqueries is p without RunQuery: subqueries are errors.
func (p *Planner) withoutSubqueries() *Planner {
	c := *p
	c.RunQuery = nil
	return &c
}

// bindComputed binds a computed column's expression over t's physical
// columns; ColumnRef indexes are indexes into t.Columns.
func (b *binder) bindComputed(t *catalog.Table, e ast.ExprNode) (Expr, error) {
	var bad ast.ExprNode
	walkAST(e, func(n ast.Node) {
		if c, ok := n.(*ast.ColumnNameExpr); ok && bad == nil {
			// person.dateTime is a field of the ROW column person, not the
			// computed column dateTime.
			qual := c.Name.Table.O
			column := qual == "" || (strings.EqualFold(qual, t.Name) && t.Columns.Index(qual) < 0)
			if _, computed := t.ComputedExpr(c.Name.Name.O); computed && column {
				bad = c
			}
		}
	})
	if bad != nil {
		name := bad.(*ast.ColumnNameExpr).Name.Name.O
		return nil, errAt(ErrUnsupported, b.pos(bad), "repeat its expression instead", "a computed column cannot read the computed column '%s'", name)
	}
	phys, idx := t.Physical()
	sc := &scope{}
	for _, c := range phys {
		sc.cols = append(sc.cols, scopeCol{qual: t.Name, name: c.Name, t: c.Type})
	}
	x, err := b.bindExpr(e, sc, nil)
	if err != nil {
		return nil, err
	}
	if !deterministic([]Expr{x}) {
		return nil, errAt(ErrUnsupported, b.pos(e), "compute it in the query instead", "a computed column must be deterministic (PROCTIME() only on its own: pt AS PROCTIME())")
	}
	m := map[int]int{}
	for i, c := range idx {
		m[i] = c
	}
	return foldExpr(remapColumns(x, m)), nil
}

// bindTableComputed binds the computed columns of t for a scan: the
// expressions by table column index (nil for physical columns and for the
// PROCTIME() column) and the index of the PROCTIME() column (-1: none).
func (b *binder) bindTableComputed(t *catalog.Table) ([]Expr, int, error) {
	if len(t.Computed) == 0 {
		return nil, -1, nil
	}
	exprs := make([]Expr, len(t.Columns))
	proctime := -1
	for _, c := range t.Computed {
		i := t.Columns.Index(c.Name)
		bad := func(err error) error {
			return errAt(ErrUnsupported, b.identPos(t.Name), "", "table '%s': computed column %s AS %s: %v", t.Name, c.Name, c.Expr, err)
		}
		if i < 0 {
			return nil, -1, bad(fmt.Errorf("not a column of the table"))
		}
		sel, e, err := ParseColumnExpr(c.Expr)
		if err != nil {
			return nil, -1, bad(err)
		}
		if IsProctimeCall(e) {
			proctime = i
			continue
		}
		inner := &binder{p: b.p.withoutSubqueries(), stmt: sel}
		x, err := inner.bindComputed(t, e)
		if err != nil {
			return nil, -1, bad(err)
		}
		if !x.Type().Equal(t.Columns[i].Type) {
			return nil, -1, bad(fmt.Errorf("the expression is %s now, the table says %s", x.Type(), t.Columns[i].Type))
		}
		exprs[i] = x
	}
	return exprs, proctime, nil
}

// ParseColumnExpr parses the stored text of a computed column (or of a
// watermark expression): the SELECT that holds it, and the expression.
func ParseColumnExpr(text string) (*sql.Select, ast.ExprNode, error) {
	stmts, err := sql.Parse("SELECT " + text)
	if err != nil {
		return nil, nil, err
	}
	sel, ok := stmts[0].(*sql.Select)
	if !ok || len(stmts) != 1 {
		return nil, nil, fmt.Errorf("not an expression")
	}
	ss, ok := sel.Query.(*ast.SelectStmt)
	if !ok || ss.Fields == nil || len(ss.Fields.Fields) != 1 || ss.Fields.Fields[0].Expr == nil || ss.From != nil {
		return nil, nil, fmt.Errorf("not one expression")
	}
	return sel, ss.Fields.Fields[0].Expr, nil
}

// ProctimeColumn returns the name of t's PROCTIME() column, if it has one.
func ProctimeColumn(t *catalog.Table) (string, bool) {
	for _, c := range t.Computed {
		if _, e, err := ParseColumnExpr(c.Expr); err == nil && IsProctimeCall(e) {
			return c.Name, true
		}
	}
	return "", false
}

// PhysicalFields returns what the connector of scan s must produce: the
// indexes into the table's physical columns (catalog.Table.Physical) of the
// physical fields of the scan and of the physical columns its computed
// fields read, in that order, without repeats.
func (s *Scan) PhysicalFields() []int {
	_, idx := s.Table.Physical()
	pos := make(map[int]int, len(idx))
	for i, c := range idx {
		pos[c] = i
	}
	var out []int
	seen := map[int]bool{}
	add := func(col int) {
		if !seen[col] {
			seen[col] = true
			out = append(out, pos[col])
		}
	}
	for _, f := range s.Fields {
		if s.Computed == nil || (s.Computed[f] == nil && f != s.Proctime) {
			add(f)
		}
	}
	for _, f := range s.Fields {
		if s.Computed != nil && s.Computed[f] != nil {
			used := map[int]bool{}
			columnsUsed(s.Computed[f], used)
			for _, c := range slices.Sorted(maps.Keys(used)) {
				add(c)
			}
		}
	}
	return out
}

// ComputedOverPhysical returns the expression of computed field i of s
// (an index into s.Fields) over the batch the connector produces for
// PhysicalFields; nil for a physical field and for the PROCTIME() field.
func (s *Scan) ComputedOverPhysical(i int) Expr {
	f := s.Fields[i]
	if s.Computed == nil || s.Computed[f] == nil {
		return nil
	}
	_, idx := s.Table.Physical()
	m := map[int]int{}
	for j, p := range s.PhysicalFields() {
		m[idx[p]] = j
	}
	return remapColumns(narrowFields(s.Computed[f], s.rowFields()), m)
}

// ProctimeField returns the position of the PROCTIME() column among the
// scan's fields, -1 if the scan does not read it.
func (s *Scan) ProctimeField() int {
	if s.Proctime < 0 {
		return -1
	}
	for i, f := range s.Fields {
		if f == s.Proctime {
			return i
		}
	}
	return -1
}

// HasComputed reports whether the scan reads a computed column (the
// PROCTIME() column included), so the source subtask must compute fields.
func (s *Scan) HasComputed() bool {
	for _, f := range s.Fields {
		if f == s.Proctime || (s.Computed != nil && s.Computed[f] != nil) {
			return true
		}
	}
	return false
}

// proctimeSuffix is what EXPLAIN adds to a scan that reads a PROCTIME()
// column (its processing-time attribute) and computed columns.
func proctimeSuffix(s *Scan) string {
	var parts []string
	for _, f := range s.Fields {
		if f == s.Proctime {
			parts = append(parts, fmt.Sprintf("proctime=[%s]", s.Table.Columns[f].Name))
		}
	}
	var comp []string
	for _, f := range s.Fields {
		if s.Computed != nil && s.Computed[f] != nil {
			e, _ := s.Table.ComputedExpr(s.Table.Columns[f].Name)
			comp = append(comp, s.Table.Columns[f].Name+" AS "+e)
		}
	}
	if len(comp) > 0 {
		parts = append(parts, "computed=["+strings.Join(comp, ", ")+"]")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// walkAST calls f on every node of e.
func walkAST(e ast.Node, f func(ast.Node)) {
	e.Accept(&astVisitor{f: f})
}

type astVisitor struct{ f func(ast.Node) }

func (v *astVisitor) Enter(n ast.Node) (ast.Node, bool) { v.f(n); return n, false }
func (v *astVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
