package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
)

// bindJoin binds a join tree of FROM, left-deep as written: [INNER] JOIN,
// LEFT / RIGHT / FULL [OUTER] JOIN, CROSS JOIN and comma joins, with ON,
// USING (...) or NATURAL. The scope is the left input's columns followed
// by the right's, each under its table's name or alias; the columns of
// USING and NATURAL come first, once, unqualified (see usingJoin).
func (b *binder) bindJoin(j *ast.Join) (Node, *scope, error) {
	if j.Right == nil {
		n, sc, err := b.bindTableRef(j.Left)
		if err == nil {
			err = b.noAsOf(n)
		}
		return n, sc, err
	}
	left, lsc, err := b.bindTableRef(j.Left)
	if err == nil {
		err = b.noAsOf(left)
	}
	if err != nil {
		return nil, nil, err
	}
	right, rsc, err := b.bindTableRef(j.Right)
	if err != nil {
		return nil, nil, err
	}
	var typ JoinType
	switch j.Tp {
	case ast.CrossJoin, 0: // 0: NATURAL JOIN
		typ = InnerJoin
	case ast.LeftJoin:
		typ = LeftJoin
	case ast.RightJoin:
		typ = RightJoin
	case sql.FullJoin:
		typ = FullJoin
	default:
		return nil, nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "join type %v is not supported", j.Tp)
	}
	pos := b.stmt.Pos()
	if j.On != nil {
		pos = b.pos(j.On.Expr)
	}
	if n := len(lsc.cols) + len(rsc.cols); n > MaxColumns {
		return nil, nil, errAt(ErrUnsupported, pos, "select the columns the query needs rather than *",
			"the join has %d columns; at most %d are supported", n, MaxColumns)
	}
	join := &Join{Left: left, Right: right, Type: typ, Pos: pos}
	sc := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)}
	if a, ok := b.takeAsOf(right); ok {
		return b.bindTemporalJoin(j, typ, left, right, sc, a)
	}
	if j.NaturalJoin {
		var using []string
		for _, c := range lsc.cols {
			if !c.hidden && rsc.findUnqualified(c.name) >= 0 && !containsFold(using, c.name) {
				using = append(using, c.name)
			}
		}
		if len(using) == 0 {
			return join, sc, nil // no common column: a cross join
		}
		return b.usingJoin(join, lsc, rsc, using)
	}
	if len(j.Using) > 0 {
		var using []string
		for _, c := range j.Using {
			using = append(using, c.Name.O)
		}
		return b.usingJoin(join, lsc, rsc, using)
	}
	if j.On != nil {
		cond, err := b.bindBool(j.On.Expr, sc, nil, "ON")
		if err != nil {
			return nil, nil, err
		}
		join.Cond = cond
	} else if typ != InnerJoin {
		return nil, nil, errAt(ErrUnsupported, pos, "add ON <condition> or USING (<columns>)", "%s needs a join condition", typ.SQL())
	}
	return join, sc, nil
}

// bindTableRef binds one item of FROM: a table, view, subquery, window
// table function or a nested join.
func (b *binder) bindTableRef(r ast.ResultSetNode) (Node, *scope, error) {
	switch x := r.(type) {
	case *ast.Join:
		return b.bindJoin(x)
	case *ast.TableSource:
		return b.bindTableSource(x)
	}
	return nil, nil, errAt(ErrUnsupported, b.stmt.Pos(), "", "unsupported FROM clause %T", r)
}

// usingJoin joins on the equality of the named columns of both sides and
// projects them first, once: the left column for inner and left joins,
// the right for right joins, COALESCE of both for full joins. A qualified
// name (l.k) still reads that side's own column.
func (b *binder) usingJoin(j *Join, lsc, rsc *scope, names []string) (Node, *scope, error) {
	nl := len(lsc.cols)
	var cond Expr
	type pair struct{ l, r int }
	var pairs []pair
	for _, name := range names {
		li, ri := lsc.findUnqualified(name), rsc.findUnqualified(name)
		if li < 0 || ri < 0 {
			side := "left"
			if li >= 0 {
				side = "right"
			}
			return nil, nil, errAt(ErrUnknownColumn, b.identPos(name), "USING names columns that both sides have", "column '%s' of USING is not in the %s side of the join", name, side)
		}
		if li == -2 || ri == -2 {
			return nil, nil, errAt(ErrUnknownColumn, b.identPos(name), "qualify the columns and use ON instead", "column '%s' of USING is ambiguous", name)
		}
		lc, rc := lsc.cols[li], rsc.cols[ri]
		eq, err := b.call("=", b.identPos(name), &ColumnRef{Index: li, Name: lc.name, T: lc.t}, &ColumnRef{Index: nl + ri, Name: rc.name, T: rc.t})
		if err != nil {
			return nil, nil, err
		}
		if cond == nil {
			cond = eq
		} else {
			cond = and(cond, eq)
		}
		pairs = append(pairs, pair{li, ri})
	}
	j.Cond = cond
	js := j.Schema()
	p := &Project{Input: j}
	sc := &scope{}
	merged := map[int]bool{}
	for i, pr := range pairs {
		l := &ColumnRef{Index: pr.l, Name: js[pr.l].Name, T: js[pr.l].Type}
		r := &ColumnRef{Index: nl + pr.r, Name: js[nl+pr.r].Name, T: js[nl+pr.r].Type}
		var e Expr = l
		switch j.Type {
		case RightJoin:
			e = r
		case FullJoin:
			c, err := b.call("COALESCE", b.identPos(names[i]), l, r)
			if err != nil {
				return nil, nil, err
			}
			e = c
		}
		p.Exprs = append(p.Exprs, e)
		p.Names = append(p.Names, lsc.cols[pr.l].name)
		sc.cols = append(sc.cols, scopeCol{name: lsc.cols[pr.l].name, t: e.Type()})
		merged[pr.l], merged[nl+pr.r] = true, true
	}
	all := append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)
	// The other columns in order, then the merged ones under their
	// tables' names, hidden from * and from unqualified names.
	for pass := 0; pass < 2; pass++ {
		for i, c := range all {
			if merged[i] != (pass == 1) {
				continue
			}
			p.Exprs = append(p.Exprs, &ColumnRef{Index: i, Name: js[i].Name, T: js[i].Type})
			p.Names = append(p.Names, c.name)
			c.t = js[i].Type
			c.hidden = c.hidden || pass == 1
			sc.cols = append(sc.cols, c)
		}
	}
	return p, sc, nil
}

// findUnqualified returns the index of the visible column name, -1 when
// there is none, -2 when there are several.
func (s *scope) findUnqualified(name string) int {
	found := -1
	for i, c := range s.cols {
		if c.hidden || !strings.EqualFold(c.name, name) {
			continue
		}
		if found >= 0 {
			return -2
		}
		found = i
	}
	return found
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// checkJoins rejects joins the runtime cannot run as planned: one with no
// equality between its inputs runs on one subtask, which an unbounded
// input allows only at parallelism 1 (bounded inputs end, so one subtask
// does for them).
func (p *Planner) checkJoins(s *Sink, stmtPos sql.Pos) error {
	par, err := p.Parallelism()
	if err != nil {
		return nil // a bad value is reported where the plan is laid out, at its place
	}
	if err := checkIntervalJoins(s, par); err != nil {
		return err
	}
	return Inspect(s, func(n Node) error {
		if err := checkWindowJoin(n); err != nil {
			return err
		}
		j, ok := n.(*Join)
		if !ok || par <= 1 || IsBounded(j) {
			return nil
		}
		if keys := splitJoinCond(j.Cond, len(j.Left.Schema()), len(j.Right.Schema())); len(keys.pairs) == 0 {
			pos := j.Pos
			if pos.Line == 0 {
				pos = stmtPos // a join a subquery became has no place of its own
			}
			return errAt(ErrUnsupported, pos, "add an equality between the two sides (a.k = b.k), or SET 'parallelism.default' = '1'",
				"a join of unbounded inputs without an equality between them runs on one subtask, but 'parallelism.default' is %d", par)
		}
		return nil
	})
}
