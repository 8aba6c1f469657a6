package planner

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Set operations: UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL], planned on
// the group aggregate (so that they take retractions, and keep their state
// in checkpoints under the state TTL as any GROUP BY):
//
//   - UNION ALL is a Union of the inputs;
//   - UNION is a Union grouped by all its columns (Calcite's
//     UNION_TO_DISTINCT);
//   - INTERSECT [ALL] and EXCEPT [ALL] are a Union of both inputs, each row
//     marked with its side ($left TRUE on the left input's rows, $right TRUE
//     on the right's), grouped by all the columns with COUNT($left) and
//     COUNT($right), then ReplicateRows: each group's row as many times as
//     the operation says (for the ALL forms, Flink's
//     RewriteIntersectAllRule and RewriteMinusAllRule with the
//     REPLICATE_ROWS table function):
//     INTERSECT ALL min(l, r), EXCEPT ALL l - r, INTERSECT 1 if l > 0 and
//     r > 0, EXCEPT 1 if l > 0 and r = 0.
//
// Grouping compares NULLs as equal, which is SQL's rule for set operations.
// INTERSECT binds tighter than UNION and EXCEPT, which associate to the
// left (the TiDB parser gives a flat list; precedence is applied here). The
// inputs' column types are widened to common ones, and the result has the
// first input's column names. Flink plans INTERSECT and EXCEPT (without
// ALL) as semi and anti joins followed by a DISTINCT; the counted form
// here gives the same rows with one keyed state instead of three.

// setTerm is one input of a list of set operations.
type setTerm struct {
	node Node
	// op joins the input to what precedes it (unused for the first).
	op ast.SetOprType
	// pos is where the input is written: its first select item.
	pos sql.Pos
}

func (b *binder) bindSetOpr(q *ast.SetOprStmt) (Node, error) {
	done, err := b.withCTEs(q.With)
	if err != nil {
		return nil, err
	}
	defer done()
	out, _, err := b.bindSetList(q.SelectList)
	if err != nil {
		return nil, err
	}
	return b.orderLimit(out, scopeOf(out, ""), nil, q.OrderBy, q.Limit)
}

// bindSetList binds a list of set operations (a parenthesized one may have
// its own ORDER BY and LIMIT); pos is where its first input is written.
func (b *binder) bindSetList(l *ast.SetOprSelectList) (Node, sql.Pos, error) {
	done, err := b.withCTEs(l.With)
	if err != nil {
		return nil, sql.Pos{}, err
	}
	defer done()
	var terms []setTerm
	for i, s := range l.Selects {
		var t setTerm
		var op *ast.SetOprType
		var err error
		switch s := s.(type) {
		case *ast.SelectStmt:
			op, t.pos = s.AfterSetOperator, b.selectPos(s)
			t.node, err = b.bindSelect(s)
		case *ast.SetOprSelectList:
			op = s.AfterSetOperator
			t.node, t.pos, err = b.bindSetList(s)
			if err == nil {
				t.node, err = b.orderLimit(t.node, scopeOf(t.node, ""), nil, s.OrderBy, s.Limit)
			}
		default:
			err = errAt(ErrUnsupported, b.stmt.Pos(), "", "unsupported set operation input %T", s)
		}
		if err != nil {
			return nil, sql.Pos{}, err
		}
		if i > 0 {
			if op == nil {
				return nil, sql.Pos{}, errAt(ErrUnsupported, t.pos, "", "set operation without an operator")
			}
			t.op = *op
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return nil, sql.Pos{}, errAt(ErrUnsupported, b.stmt.Pos(), "", "empty set operation")
	}
	n, err := b.setChain(terms)
	return n, terms[0].pos, err
}

// selectPos is where a SELECT of a set operation is written: its first
// select item (the statement's start if that has no position).
func (b *binder) selectPos(s *ast.SelectStmt) sql.Pos {
	if s.Fields != nil && len(s.Fields.Fields) > 0 && s.Fields.Fields[0].Expr != nil {
		return b.pos(s.Fields.Fields[0].Expr)
	}
	if s.Kind == ast.SelectStmtKindValues && len(s.Lists) > 0 && len(s.Lists[0].Values) > 0 {
		return b.pos(s.Lists[0].Values[0])
	}
	return b.stmt.Pos()
}

// setChain combines the inputs of a list of set operations: first each run
// of INTERSECT [ALL], then UNION [ALL] and EXCEPT [ALL] from left to right.
// Consecutive UNION ALLs are one Union, and a UNION over a UNION's result
// groups once.
func (b *binder) setChain(terms []setTerm) (Node, error) {
	var groups []setTerm
	for _, t := range terms {
		if len(groups) > 0 && (t.op == ast.Intersect || t.op == ast.IntersectAll) {
			last := &groups[len(groups)-1]
			n, err := b.setOp(t.op, *last, t)
			if err != nil {
				return nil, err
			}
			last.node = n
			continue
		}
		groups = append(groups, t)
	}
	pending := groups[:1:1]
	for _, t := range groups[1:] {
		switch t.op {
		case ast.UnionAll:
			pending = append(pending, t)
		case ast.Union:
			pending = append(pending, t)
			var flat []setTerm
			for _, p := range pending {
				// distinct(distinct(x) ∪ y) is distinct(x ∪ y).
				if a, ok := p.node.(*Aggregate); ok && a.setOp == "UNION" {
					if u, ok := a.Input.(*Union); ok {
						for _, in := range u.Inputs {
							flat = append(flat, setTerm{node: in, pos: p.pos})
						}
						continue
					}
				}
				flat = append(flat, p)
			}
			u, err := b.unionAll(flat, "UNION")
			if err != nil {
				return nil, err
			}
			pending = []setTerm{{node: distinctAll(u, "UNION"), pos: pending[0].pos}}
		case ast.Except, ast.ExceptAll:
			left, err := b.unionAll(pending, "UNION ALL")
			if err != nil {
				return nil, err
			}
			n, err := b.setOp(t.op, setTerm{node: left, pos: pending[0].pos}, t)
			if err != nil {
				return nil, err
			}
			pending = []setTerm{{node: n, pos: pending[0].pos}}
		default:
			return nil, errAt(ErrUnsupported, t.pos, "", "set operation %s is not supported", t.op.String())
		}
	}
	return b.unionAll(pending, "UNION ALL")
}

// distinctAll groups n by all its columns; setOp names the operation.
func distinctAll(n Node, setOp string) *Aggregate {
	keys := make([]int, len(n.Schema()))
	for i := range keys {
		keys[i] = i
	}
	return &Aggregate{Input: n, Keys: keys, setOp: setOp}
}

// unionAll widens the inputs to common column types and unions them (the
// one input itself if there is one). what names the operation for errors.
func (b *binder) unionAll(inputs []setTerm, what string) (Node, error) {
	if len(inputs) == 1 {
		return inputs[0].node, nil
	}
	out, err := b.unify(inputs, what)
	if err != nil {
		return nil, err
	}
	return &Union{Inputs: out}, nil
}

// unify casts the inputs of a set operation to their common column types
// (commonTypes).
func (b *binder) unify(inputs []setTerm, what string) ([]Node, error) {
	target, err := b.commonTypes(inputs, what)
	if err != nil {
		return nil, err
	}
	out := make([]Node, len(inputs))
	for i, in := range inputs {
		if out[i], err = castTo(in.node, target); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// commonTypes is the row type of a set operation over the inputs: the
// first input's column names, each column of the common type of the
// inputs' (Flink's least restrictive type), nullable if any input's is.
func (b *binder) commonTypes(inputs []setTerm, what string) (types.Schema, error) {
	first := inputs[0].node.Schema()
	target := make(types.Schema, len(first))
	copy(target, first)
	for i := range target {
		if target[i].Type.Kind == types.Null {
			target[i].Type.NotNull = false
		}
	}
	for _, in := range inputs[1:] {
		s := in.node.Schema()
		if len(s) != len(first) {
			return nil, errAt(ErrTypeMismatch, in.pos, "give every input of "+what+" the same number of columns",
				"%s inputs have %d and %d columns", what, len(first), len(s))
		}
		for i := range s {
			t, ok := commonType(target[i].Type, s[i].Type)
			if !ok {
				return nil, errAt(ErrTypeMismatch, in.pos, "CAST one of them to the other's type",
					"%s column %d (%s) has types %s and %s", what, i+1, first[i].Name, target[i].Type, s[i].Type)
			}
			if !s[i].Type.NotNull || s[i].Type.Kind == types.Null || !target[i].Type.NotNull {
				t.NotNull = false
			}
			target[i].Type = t
		}
	}
	return target, nil
}

// setOp plans INTERSECT [ALL] or EXCEPT [ALL] of two inputs.
func (b *binder) setOp(op ast.SetOprType, left, right setTerm) (Node, error) {
	what := op.String()
	s, err := b.commonTypes([]setTerm{left, right}, what)
	if err != nil {
		return nil, err
	}
	n := len(s)
	tru := &Literal{Value: true, T: types.T{Kind: types.Boolean, NotNull: true}}
	null := &Literal{T: types.BooleanType}
	// Each input's columns, cast to the common types, and its side.
	mark := func(in Node, l, r Expr) (Node, error) {
		p := &Project{Input: in}
		for i, c := range in.Schema() {
			var e Expr = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
			if !c.Type.Equal(s[i].Type) {
				if e, err = implicitCast(e, s[i].Type); err != nil {
					return nil, err
				}
			}
			p.Exprs = append(p.Exprs, e)
			p.Names = append(p.Names, s[i].Name)
		}
		p.Exprs = append(p.Exprs, l, r)
		p.Names = append(p.Names, "$left", "$right")
		return p, nil
	}
	l, err := mark(left.node, tru, null)
	if err != nil {
		return nil, err
	}
	r, err := mark(right.node, null, tru)
	if err != nil {
		return nil, err
	}
	u := &Union{Inputs: []Node{l, r}}
	agg := distinctAll(u, what)
	agg.Keys = agg.Keys[:n]
	countT := types.T{Kind: types.BigInt, NotNull: true}
	for i, name := range []string{"$left_count", "$right_count"} {
		agg.Aggs = append(agg.Aggs, AggCall{Func: AggCount, Arg: n + i, T: countT, ArgT: types.BooleanType,
			Name: name, Text: fmt.Sprintf("%s at %s", what, right.pos)})
	}
	lc := &ColumnRef{Index: n, Name: "$left_count", T: countT}
	rc := &ColumnRef{Index: n + 1, Name: "$right_count", T: countT}
	zero := &Literal{Value: int64(0), T: countT}
	one := &Literal{Value: int64(1), T: countT}
	pos := right.pos
	var count Expr
	call := func(name string, args ...Expr) {
		if err == nil {
			count, err = b.call(name, pos, args...)
		}
	}
	switch op {
	case ast.IntersectAll:
		call("<", lc, rc)
		call("CASE", count, lc, rc)
	case ast.ExceptAll:
		call("-", lc, rc)
	case ast.Intersect, ast.Except:
		call(">", lc, zero)
		l := count
		if op == ast.Intersect {
			call(">", rc, zero)
		} else {
			call("=", rc, zero)
		}
		call("AND", l, count)
		call("CASE", count, one, zero)
	default:
		return nil, errAt(ErrUnsupported, pos, "", "set operation %s is not supported", what)
	}
	if err != nil {
		return nil, err
	}
	return &ReplicateRows{Input: agg, Count: count, Width: n, Distinct: op == ast.Intersect || op == ast.Except}, nil
}
