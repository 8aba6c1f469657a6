package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Field access: the TiDB parser reads a.b as table a, column b and a.b.c
// as schema a, table b, column c. When a is a ROW column in scope, they
// may also be fields: a.b is field b of column a; a.b.c is field c of
// column b of table a, or field c of field b of column a. bindField
// lists the readings that name something in scope: none, and the
// reference is an ordinary column (resolveColumn reports it missing);
// one, and that is it; several, and the reference is ambiguous, an error
// at it.

// fieldReading is one way to read a dotted reference: a column
// (qualified by qual, or not), then a path of fields.
type fieldReading struct {
	qual, col string
	path      []string
}

// bindField binds cn as a field access when a reading of it as one names
// a ROW field in scope; ok is false when cn is to be bound as a column.
func (b *binder) bindField(cn *ast.ColumnName, sc *scope, e ast.ExprNode) (x Expr, ok bool, err error) {
	s, t, n := cn.Schema.O, cn.Table.O, cn.Name.O
	if t == "" {
		return nil, false, nil
	}
	var readings []fieldReading
	if s == "" {
		readings = []fieldReading{{col: t, path: []string{n}}}
	} else {
		readings = []fieldReading{{qual: s, col: t, path: []string{n}}, {col: s, path: []string{t, n}}}
	}
	var found []fieldReading
	var missing error
	for _, r := range readings {
		idx := sc.lookup(r.qual, r.col)
		if idx == -2 && !(sc.lookup(t, n) >= 0) {
			return nil, true, errAt(ErrUnknownColumn, b.pos(e), "qualify it with its table: t.col.field", "column '%s' is ambiguous", r.col)
		}
		if idx < 0 {
			continue
		}
		ct := sc.cols[idx].t
		if ct.Kind != types.Row {
			continue
		}
		if ft, err := fieldPath(r.col, ct, r.path); err != nil {
			if missing == nil {
				missing = errAt(ErrUnknownColumn, b.pos(e), fieldHint(ft), "%s", err.Error())
			}
			continue
		}
		found = append(found, r)
	}
	// The reading as a column of a table (or of a window: w.start).
	column := (s == "" && (sc.lookup(t, n) >= 0 || sc.windowField(t, n) >= 0)) || (s != "" && sc.lookup(t, n) >= 0)
	full := strings.Join(nonEmpty(s, t, n), ".")
	switch {
	case len(found) == 0 && !column && missing != nil:
		return nil, true, missing
	case len(found) == 0:
		return nil, false, nil
	case len(found) > 1 || column:
		return nil, true, errAt(ErrUnknownColumn, b.pos(e), "give the table another alias, or write the ROW column qualified by its table (t.col.field)",
			"'%s' is ambiguous: it may name a column of a table and a field of a ROW column", full)
	}
	r := found[0]
	base, err := b.resolveColumn(&ast.ColumnName{Table: ast.NewCIStr(r.qual), Name: ast.NewCIStr(r.col)}, sc, e)
	if err != nil {
		return nil, true, err
	}
	x = base
	for _, f := range r.path {
		if x, err = fieldOf(x, f); err != nil {
			return nil, true, errAt(ErrUnknownColumn, b.pos(e), "", "%v", err)
		}
	}
	return x, true, nil
}

// fieldOf is the access to field name of x, a ROW.
func fieldOf(x Expr, name string) (Expr, error) {
	t := x.Type()
	i := t.FieldIndex(name)
	if i < 0 {
		return nil, fmt.Errorf("ROW %s has no field '%s'", t, name)
	}
	r, err := functions.ResolveField(t, i)
	if err != nil {
		return nil, err
	}
	return &Call{Func: functions.FieldAccess, Args: []Expr{x, &Literal{Value: int64(i), T: types.T{Kind: types.BigInt, NotNull: true}}}, Resolved: r}, nil
}

// fieldPath checks that path names nested fields of t, the type of column
// col; on error it returns the type that lacks the field.
func fieldPath(col string, t types.T, path []string) (types.T, error) {
	for k, f := range path {
		name := strings.Join(append([]string{col}, path[:k]...), ".")
		if t.Kind != types.Row {
			return t, fmt.Errorf("'%s' is not a ROW: it has no field '%s'", name, f)
		}
		i := t.FieldIndex(f)
		if i < 0 {
			return t, fmt.Errorf("'%s' (%s) has no field '%s'", name, t, f)
		}
		t = t.Fields[i].Type
	}
	return t, nil
}

func fieldHint(t types.T) string {
	if t.Kind != types.Row {
		return ""
	}
	names := types.Schema(t.Fields).Names()
	if len(names) > 12 {
		return ""
	}
	return "its fields: " + strings.Join(names, ", ")
}

// fieldName is the name of the field x reads when x is a field access.
func fieldName(x Expr) (string, bool) {
	c, ok := x.(*Call)
	if !ok || c.Func != functions.FieldAccess || len(c.Args) != 2 {
		return "", false
	}
	l, ok := c.Args[1].(*Literal)
	if !ok {
		return "", false
	}
	fs := c.Args[0].Type().Fields
	i, ok := l.Value.(int64)
	if !ok || int(i) >= len(fs) {
		return "", false
	}
	return fs[i].Name, true
}

// lookup returns the index of the column name (qualified by qual unless
// qual is empty) that resolveColumn would find: the scope's own columns
// first, then those of enclosing queries; -1 when there is none, -2 when
// there are several.
func (s *scope) lookup(qual, name string) int {
	for _, outer := range []bool{false, true} {
		found := -1
		for i, c := range s.cols {
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
				return -2
			}
			found = i
		}
		if found >= 0 {
			return found
		}
	}
	return -1
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// bindRow binds the value constructor ROW(a, b, ...).
func (b *binder) bindRow(e *ast.RowExpr, sc *scope, agg *aggScope) (Expr, error) {
	args := make([]Expr, len(e.Values))
	ts := make([]types.T, len(e.Values))
	for i, v := range e.Values {
		x, err := b.bindExpr(v, sc, agg)
		if err != nil {
			return nil, err
		}
		args[i], ts[i] = x, x.Type()
	}
	r, err := functions.ResolveRow(ts)
	if err != nil {
		return nil, errAt(ErrTypeMismatch, b.pos(e), "", "%v", err)
	}
	c := &Call{Func: functions.RowConstructor, Args: args, Resolved: r}
	if b.viewDepth == 0 {
		c.Pos = b.pos(e)
	}
	return c, nil
}

// refuseRowKey refuses a whole ROW as a key of clause (GROUP BY, ORDER
// BY, DISTINCT): rows are neither hashed nor ordered; their fields are.
func refuseRowKey(pos sql.Pos, clause string, t types.T) error {
	if t.Kind != types.Row {
		return nil
	}
	return errAt(ErrUnsupported, pos, "use its fields (col.field) instead", "%s on a ROW is not supported", clause)
}

// sortKeyType is the type of the ORDER BY key idx of out, hidden the
// expressions appended to out's select list for ORDER BY.
func sortKeyType(out Node, idx int, hidden []Expr) types.T {
	s := out.Schema()
	if idx < len(s) {
		return s[idx].Type
	}
	if k := idx - len(s); k < len(hidden) {
		return hidden[k].Type()
	}
	return types.T{}
}

// Field pruning at the source: a ROW column that a scan reads only for its
// computed columns, and there only through field accesses (Flink
// nexmark's dateTime AS CASE ... person.dateTime ... END), is read by the
// connector as a ROW of those fields alone, so a connector that builds
// rows builds no other field (connectors bind a ROW's declared fields by
// name, any subset in any order).

// narrowed lists, for each table column narrowed, the fields kept (their
// positions in the table's ROW type, in order).
func (s *Scan) narrowed() map[int][]int {
	if c, ok := catalog.LookupConnector(s.Table.Connector); s.Computed == nil || !ok || !c.ReadsRowFields {
		return nil
	}
	direct := map[int]bool{}
	for _, f := range s.Fields {
		if s.Computed[f] == nil {
			direct[f] = true
		}
	}
	refs, viaField := map[int]int{}, map[int]int{}
	kept := map[int]map[int]bool{}
	for _, f := range s.Fields {
		if s.Computed[f] == nil {
			continue
		}
		walkExpr(s.Computed[f], func(x Expr) {
			switch x := x.(type) {
			case *ColumnRef:
				refs[x.Index]++
			case *Call:
				c, ok := x.Args[0].(*ColumnRef)
				if x.Func != functions.FieldAccess || len(x.Args) != 2 || !ok {
					return
				}
				l, ok := x.Args[1].(*Literal)
				if !ok {
					return
				}
				viaField[c.Index]++
				if kept[c.Index] == nil {
					kept[c.Index] = map[int]bool{}
				}
				kept[c.Index][int(l.Value.(int64))] = true
			}
		})
	}
	var out map[int][]int
	for c, n := range viaField {
		if direct[c] || refs[c] != n || s.Table.Columns[c].Type.Kind != types.Row {
			continue
		}
		if out == nil {
			out = map[int][]int{}
		}
		for i := range s.Table.Columns[c].Type.Fields {
			if kept[c][i] {
				out[c] = append(out[c], i)
			}
		}
	}
	return out
}

// narrowType is t with only the fields keep.
func narrowType(t types.T, keep []int) types.T {
	n := t
	n.Fields = make([]types.Column, len(keep))
	for i, k := range keep {
		n.Fields[i] = t.Fields[k]
	}
	return n
}

// PhysicalSchema returns the schema of the table's physical columns as the
// connector of s reads them: a ROW column the scan reads only for field
// accesses of its computed columns has only those fields.
func (s *Scan) PhysicalSchema() types.Schema {
	phys, idx := s.Table.Physical()
	nw := s.rowFields()
	if nw == nil {
		return phys
	}
	out := append(types.Schema(nil), phys...)
	for i, c := range idx {
		if keep, ok := nw[c]; ok {
			out[i].Type = narrowType(out[i].Type, keep)
		}
	}
	return out
}

// rowFields is every narrowed ROW column of s (by table column index):
// those the rule narrowed (RowFields) and those read only by its computed
// columns.
func (s *Scan) rowFields() map[int][]int {
	nw := s.narrowed()
	if len(s.RowFields) == 0 {
		return nw
	}
	out := map[int][]int{}
	for c, k := range nw {
		out[c] = k
	}
	for c, k := range s.RowFields {
		out[c] = k
	}
	return out
}

// narrowFields rewrites the field accesses of e (over table column
// indexes) to the narrowed ROW columns of nw.
func narrowFields(e Expr, nw map[int][]int) Expr {
	if nw == nil {
		return e
	}
	return narrowFieldsBy(e, func(c int) ([]int, bool) {
		k, ok := nw[c]
		return k, ok
	})
}

// rowFieldsSuffix is what EXPLAIN adds to a scan whose ROW columns are
// narrowed to the fields read: rowFields=[person(dateTime), bid(auction,
// price, dateTime)].
func rowFieldsSuffix(s *Scan) string {
	rf := s.rowFields()
	var parts []string
	for f, c := range s.Table.Columns {
		if keep, ok := rf[f]; ok {
			parts = append(parts, c.Name+"("+strings.Join(types.Schema(narrowType(c.Type, keep).Fields).Names(), ", ")+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", rowFields=[" + strings.Join(parts, ", ") + "]"
}

// ErrRowState is the error of a plan that would keep a ROW column in an
// operator's keyed state (a join, an aggregate, a TopN, ...): the state
// encodings hold flat values only for now.
var ErrRowState = errors.New("ROW column in keyed state")

// refuseRowState refuses a graph in which an operator that keeps keyed
// state receives a ROW column.
func refuseRowState(g *Graph) error {
	for _, o := range g.Operators {
		if !o.HasKeyedState() {
			continue
		}
		for _, in := range o.Inputs {
			for _, c := range in.From.Schema {
				if c.Type.Kind == types.Row {
					return rowStateError(fmt.Sprintf("%s would keep the ROW column '%s' in its state, which is not supported yet (hint: select the fields it needs, col.field, before it)", o.Kind(), c.Name))
				}
			}
		}
	}
	return nil
}

type rowStateError string

func (e rowStateError) Error() string { return string(e) }
func (e rowStateError) Unwrap() error { return ErrRowState }
