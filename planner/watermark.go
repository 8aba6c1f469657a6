package planner

import (
	"fmt"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Watermark is a table's WATERMARK FOR clause, bound: the source emits, after
// each batch, the maximum of Expr over the rows it has read so far (Flink's
// bounded out-of-orderness strategy when Expr is ts - INTERVAL ...).
type Watermark struct {
	// Column is the table column index of the row-time column.
	Column int
	// Expr is the watermark expression over the table's columns (ColumnRef
	// indexes are table column indexes, not scan field positions).
	Expr Expr
	// IdleTimeout is how long a split may produce nothing before it stops
	// holding the watermark back: the table's 'scan.watermark.idle-timeout',
	// else the job's 'table.exec.source.idle-timeout' (0, the default:
	// never).
	IdleTimeout time.Duration
	// Alignment is the table's watermark alignment group and max drift
	// (none: no group).
	Alignment catalog.WatermarkAlignment
}

// String is the expression as EXPLAIN shows it.
func (w *Watermark) String() string { return w.Expr.String() }

// columns returns the table columns the watermark needs: the row-time
// column and those its expression reads.
func (w *Watermark) columns() map[int]bool {
	used := map[int]bool{w.Column: true}
	columnsUsed(w.Expr, used)
	return used
}

// OverFields returns the watermark expression over a scan producing the
// table columns fields, in order (a scan keeps every column the watermark
// needs through projection pruning, so all are found).
func (w *Watermark) OverFields(fields []int) (Expr, error) {
	pos := map[int]int{}
	for i, f := range fields {
		pos[f] = i
	}
	for c := range w.columns() {
		if _, ok := pos[c]; !ok {
			return nil, fmt.Errorf("the scan does not read column %d, which the watermark needs", c)
		}
	}
	return remapColumns(w.Expr, pos), nil
}

// RowtimeField returns the position of the row-time column among fields
// (-1 if the scan does not read it).
func (w *Watermark) RowtimeField(fields []int) int {
	for i, f := range fields {
		if f == w.Column {
			return i
		}
	}
	return -1
}

// bindWatermark binds t's WATERMARK FOR expression against t's columns; nil
// when the table has none.
func (b *binder) bindWatermark(t *catalog.Table) (*Watermark, error) {
	if t.WatermarkExpr == "" {
		return nil, nil
	}
	col := t.Columns.Index(t.WatermarkColumn)
	if col < 0 {
		return nil, errAt(ErrUnknownColumn, b.identPos(t.Name), "", "table '%s': WATERMARK FOR column '%s' is not a column", t.Name, t.WatermarkColumn)
	}
	bad := func(err error) error {
		return errAt(ErrUnsupported, b.identPos(t.Name), "", "table '%s': WATERMARK FOR %s AS %s: %v", t.Name, t.WatermarkColumn, t.WatermarkExpr, err)
	}
	stmts, err := sql.Parse("SELECT " + t.WatermarkExpr)
	if err != nil {
		return nil, bad(err)
	}
	sel, ok := stmts[0].(*sql.Select)
	if !ok || len(stmts) != 1 {
		return nil, bad(fmt.Errorf("not an expression"))
	}
	ss, ok := sel.Query.(*ast.SelectStmt)
	if !ok || ss.Fields == nil || len(ss.Fields.Fields) != 1 || ss.Fields.Fields[0].Expr == nil || ss.From != nil {
		return nil, bad(fmt.Errorf("not one expression"))
	}
	sc := &scope{}
	for _, c := range t.Columns {
		sc.cols = append(sc.cols, scopeCol{qual: t.Name, name: c.Name, t: c.Type})
	}
	inner := &binder{p: b.p, stmt: sel}
	e, err := inner.bindExpr(ss.Fields.Fields[0].Expr, sc, nil)
	if err != nil {
		return nil, bad(err)
	}
	if e.Type().Kind != types.Timestamp {
		return nil, bad(fmt.Errorf("the watermark must be a TIMESTAMP, the expression is %s", e.Type()))
	}
	if !deterministic([]Expr{e}) {
		return nil, bad(fmt.Errorf("the watermark expression must be deterministic"))
	}
	timeout, set, err := catalog.IdleTimeout(t)
	if err != nil {
		return nil, errAt(ErrUnsupported, b.identPos(t.Name), "", "table '%s': %v", t.Name, err)
	}
	if !set {
		timeout = b.p.Options.SourceIdleTimeout
	}
	align, err := catalog.Alignment(t)
	if err != nil {
		return nil, errAt(ErrUnsupported, b.identPos(t.Name), "", "table '%s': %v", t.Name, err)
	}
	return &Watermark{Column: col, Expr: foldExpr(e), IdleTimeout: timeout, Alignment: align}, nil
}

// watermarkNeed extends need (over s's fields) with the fields s's
// watermark reads, so that projection pruning keeps them.
func watermarkNeed(s *Scan, need []bool) []bool {
	if s.Watermark == nil {
		return need
	}
	cols := s.Watermark.columns()
	out := append([]bool(nil), need...)
	for i, f := range s.Fields {
		if cols[f] {
			out[i] = true
		}
	}
	return out
}

// watermarkSuffix is what EXPLAIN adds to a scan with a watermark.
func watermarkSuffix(s *Scan) string {
	if s.Watermark == nil {
		return ""
	}
	idle := ""
	if d := s.Watermark.IdleTimeout; d > 0 {
		idle = ", idle-timeout=" + d.String()
	}
	return fmt.Sprintf(", watermark=[%s: %s%s]", s.Table.Columns[s.Watermark.Column].Name, watermarkText(s), idle)
}

// watermarkText prints the watermark expression with column names.
func watermarkText(s *Scan) string {
	e := mapExpr(s.Watermark.Expr, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			return &namedRef{c}
		}
		return x
	})
	return e.String()
}

// namedRef prints a column reference by name only.
type namedRef struct{ *ColumnRef }

func (n *namedRef) String() string { return n.Name }
