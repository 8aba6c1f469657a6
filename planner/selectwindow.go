package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
)

// Windows in the select list (Arroyo's form):
//
//	SELECT TUMBLE(INTERVAL '1 minute') AS window, k, COUNT(*) AS n
//	FROM t GROUP BY window, k          -- or GROUP BY 1, 2
//
// TUMBLE(size), HOP(slide, size) or SESSION(gap) without a time column is a
// group window over the time attribute of the input (the column with a
// watermark: WATERMARK FOR, or Arroyo's 'event_time_field' option). It must
// be grouped by, through its alias or its position. It is the group-window
// form GROUP BY TUMBLE(ts, size) (groupwindow.go) with the call moved: the
// binder puts TUMBLE(ts, size) in GROUP BY, where the alias or position
// was, and replaces the select item by TUMBLE_START(ts, size) and
// TUMBLE_END(ts, size), named w.start and w.end for an alias w. An outer
// query reads them as w.start and w.end (resolveColumn), as Arroyo reads
// the fields of its window struct.

// selectWindow finds a window call without a time column in sel's select
// list and returns sel rewritten to the group-window form; sel itself when
// there is none.
func (b *binder) selectWindow(sel *ast.SelectStmt, input Node, sc *scope) (*ast.SelectStmt, error) {
	if sel.Fields == nil {
		return sel, nil
	}
	at := -1
	var call *ast.FuncCallExpr
	for i, f := range sel.Fields.Fields {
		c, ok := f.Expr.(*ast.FuncCallExpr)
		if !ok || f.WildCard != nil {
			continue
		}
		if _, ok := groupWindowKinds[c.FnName.L]; !ok || len(c.Args) == 0 {
			continue
		}
		if _, ok := sql.IntervalOf(b.stmt, c.Args[0]); !ok {
			continue // TUMBLE(ts, ...): the group-window function, misplaced
		}
		if call != nil {
			return nil, errAt(ErrUnsupported, b.pos(c), "", "a SELECT may have only one window")
		}
		at, call = i, c
	}
	if call == nil {
		return sel, nil
	}
	kind := groupWindowKinds[call.FnName.L]
	pos := b.pos(call)
	alias := sel.Fields.Fields[at].AsName.O
	if alias == "" {
		alias = "window"
	}

	// The time attribute of the input.
	probe := windowJoins(windowAggregates(input))
	timeCol := -1
	for i := range sc.cols {
		if isRowtime(probe, i) {
			if timeCol >= 0 {
				return nil, errAt(ErrUnsupported, pos, "use GROUP BY "+kind+"(ts, ...) naming the time column",
					"%s without a time column is ambiguous: the input has the time attributes '%s' and '%s'", kind, sc.cols[timeCol].name, sc.cols[i].name)
			}
			timeCol = i
		}
	}
	if timeCol < 0 {
		return nil, errAt(ErrUnsupported, pos, "declare WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, or 'event_time_field' = 'ts', in the table",
			"%s without a time column needs a time attribute in its input (a column with a watermark)", kind)
	}
	ts := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(sc.cols[timeCol].qual), Name: ast.NewCIStr(sc.cols[timeCol].name)}}
	ts.SetOriginTextPosition(call.OriginTextPosition())
	args := append([]ast.ExprNode{ts}, call.Args...)
	group := &ast.FuncCallExpr{Tp: call.Tp, FnName: call.FnName, Args: args}
	group.SetOriginTextPosition(call.OriginTextPosition())

	// GROUP BY: the alias or position becomes the group window.
	if sel.GroupBy == nil {
		return nil, errAt(ErrUnsupported, pos, "add GROUP BY "+alias, "the window %s must be in GROUP BY", alias)
	}
	gb := *sel.GroupBy
	gb.Items = nil
	grouped := false
	for _, item := range sel.GroupBy.Items {
		e := item.Expr
		switch x := e.(type) {
		case *ast.PositionExpr:
			if x.N == at+1 {
				e, grouped = group, true
			} else if x.N > at+1 {
				e = shiftedPosition(x)
			}
		case *ast.ColumnNameExpr:
			if x.Name.Table.O == "" && strings.EqualFold(x.Name.Name.O, alias) && sc.find(alias) < 0 {
				e, grouped = group, true
			}
		}
		it := *item
		it.Expr = e
		gb.Items = append(gb.Items, &it)
	}
	if !grouped {
		return nil, errAt(ErrUnsupported, pos, "add "+alias+" to GROUP BY", "the window %s must be in GROUP BY", alias)
	}

	// The select list: the window becomes its start and end.
	fields := *sel.Fields
	fields.Fields = nil
	for i, f := range sel.Fields.Fields {
		if i != at {
			fields.Fields = append(fields.Fields, f)
			continue
		}
		for _, part := range []string{"start", "end"} {
			aux := &ast.FuncCallExpr{Tp: call.Tp, FnName: ast.NewCIStr(call.FnName.L + "_" + part), Args: args}
			aux.SetOriginTextPosition(call.OriginTextPosition())
			fields.Fields = append(fields.Fields, &ast.SelectField{Expr: aux, AsName: ast.NewCIStr(alias + "." + part)})
		}
	}
	s := *sel
	s.Fields, s.GroupBy = &fields, &gb
	if sel.OrderBy != nil {
		ob := *sel.OrderBy
		ob.Items = nil
		for _, item := range sel.OrderBy.Items {
			it := *item
			if p, ok := it.Expr.(*ast.PositionExpr); ok && p.N > at+1 {
				it.Expr = shiftedPosition(p)
			}
			ob.Items = append(ob.Items, &it)
		}
		s.OrderBy = &ob
	}
	return &s, nil
}

// shiftedPosition is the select-list position p after the window before it
// became two columns.
func shiftedPosition(p *ast.PositionExpr) *ast.PositionExpr {
	q := *p
	q.N++
	return &q
}

// windowField finds, for a reference qual.name that names no column, the
// column of a window in the select list below, named qual.name (w.start,
// w.end); -1 if there is none.
func (s *scope) windowField(qual, name string) int {
	if qual == "" {
		return -1
	}
	return s.find(qual + "." + name)
}
