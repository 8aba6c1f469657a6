package planner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Planner plans statements against a catalog with a session's options.
type Planner struct {
	Catalog *catalog.Catalog
	// Options are the session's SET options (parallelism.default, ...).
	Options map[string]string
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
	b := &binder{p: p, stmt: stmt}
	n, err := b.bindQuery(q)
	if err != nil {
		return nil, err
	}
	if err := markEmit(stmt, n); err != nil {
		return nil, err
	}
	if err := p.ctxErr(); err != nil {
		return nil, err
	}
	s := &Sink{Input: n, Name: "collect"}
	out := Optimize(s).(*Sink)
	if err := checkEmit(out); err != nil {
		return nil, err
	}
	if err := checkModes(out, stmt); err != nil {
		return nil, err
	}
	return out, nil
}

// Insert plans INSERT INTO into a logical plan rooted at the table's Sink.
func (p *Planner) Insert(ins *sql.Insert) (*Sink, error) {
	if err := p.ctxErr(); err != nil {
		return nil, err
	}
	b := &binder{p: p, stmt: ins}
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
	if ins.Values != nil {
		src, err = b.valuesOf(ins.Values, nil)
	} else {
		if src, err = b.bindQuery(ins.Query); err == nil {
			err = markEmit(ins, src)
		}
	}
	if err != nil {
		return nil, err
	}
	src, err = b.fitToTable(src, t, ins.Columns, ins.TablePos)
	if err != nil {
		return nil, err
	}
	if err := p.ctxErr(); err != nil {
		return nil, err
	}
	s := &Sink{Input: src, Table: t, Name: t.Name}
	out := Optimize(s).(*Sink)
	if err := checkEmit(out); err != nil {
		return nil, err
	}
	if err := checkModes(out, ins); err != nil {
		return nil, err
	}
	return out, nil
}

// fitToTable maps the query's columns onto the table's: by position, or
// through an explicit column list (missing columns are NULL), casting where
// Flink would implicitly.
//
// A table with computed columns takes values for its physical columns only,
// as in Flink: they are what its sink writes (catalog.Table.Physical).
func (b *binder) fitToTable(src Node, t *catalog.Table, cols []string, pos sql.Pos) (Node, error) {
	in := src.Schema()
	phys, _ := t.Physical()
	mapping := make([]int, len(phys)) // table column -> source column or -1
	if len(cols) == 0 {
		if len(in) != len(phys) {
			hint := "list the target columns: INSERT INTO t (a, b) ..."
			if len(phys) < len(t.Columns) {
				hint = "computed columns take no value"
			}
			return nil, errAt(ErrTypeMismatch, pos, hint,
				"query has %d columns but table '%s' has %d (%s)", len(in), t.Name, len(phys), strings.Join(phys.Names(), ", "))
		}
		for i := range mapping {
			mapping[i] = i
		}
	} else {
		if len(cols) != len(in) {
			return nil, errAt(ErrTypeMismatch, pos, "", "%d target columns but the query has %d", len(cols), len(in))
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
	}
	p := &Project{Input: src}
	identity := len(in) == len(phys)
	for i, col := range phys {
		var e Expr
		if mapping[i] < 0 {
			if col.Type.NotNull {
				return nil, errAt(ErrTypeMismatch, pos, "", "column '%s' is NOT NULL and needs a value", col.Name)
			}
			e = &Literal{T: col.Type.Nullable()}
			identity = false
		} else {
			j := mapping[i]
			if j != i {
				identity = false
			}
			e = &ColumnRef{Index: j, Name: in[j].Name, T: in[j].Type}
			if !in[j].Type.Equal(col.Type) {
				identity = false
				var err error
				if e, err = implicitCast(e, col.Type.Nullable()); err != nil {
					return nil, errAt(ErrTypeMismatch, pos, "add an explicit CAST", "column '%s' is %s but the query gives %s", col.Name, col.Type, in[j].Type)
				}
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
	s := Optimize(&Sink{Input: n, Name: "collect"}).(*Sink)
	rows, err := b.p.RunQuery(s)
	if err != nil {
		return nil, nil, err
	}
	return rows, n.Schema(), nil
}

// Parallelism returns 'parallelism.default' (1 when unset).
func (p *Planner) Parallelism() (int, error) {
	return intOption(p.Options, "parallelism.default", 1)
}

// MaxParallelism returns 'pipeline.max-parallelism' (128 when unset): the
// number of key groups.
func (p *Planner) MaxParallelism() (int, error) {
	n, err := intOption(p.Options, "pipeline.max-parallelism", 128)
	if err == nil && n > 32768 {
		return 0, fmt.Errorf("option 'pipeline.max-parallelism' must be at most 32768 (as Flink), got %d", n)
	}
	return n, err
}

func intOption(opts map[string]string, key string, def int) (int, error) {
	s, ok := opts[key]
	if !ok || s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("option '%s' must be a positive integer, got '%s'", key, s)
	}
	return n, nil
}
