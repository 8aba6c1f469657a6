package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Processing-time lookup joins against a bounded table (Flink's lookup
// join with a full cache):
//
//	FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
//	JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON MOD(B.auction, 10000) = S.key
//
// The right side is a table whose connector is bounded (a filesystem
// table): each subtask of the join reads the whole table when it opens,
// keeps its rows in memory by the ON equalities' right sides, and joins
// each probe row with the rows of its key as it arrives (a LEFT join pads
// a probe row without one). The table is not an input of the job: it is
// read again when the job restarts (from a checkpoint too), and not while
// the job runs, so a change of its files shows after a restart. It keeps
// no state. The output has the probe side's changelog mode (each row
// keeps its op) and its time attributes; the time column named by FOR
// SYSTEM_TIME AS OF only says the join is processing-time.
//
// The ON condition needs at least one equality of a probe-side expression
// with an expression of the table's columns; other conjuncts are evaluated
// on the joined pair (in an inner join only).

// LookupJoin joins Left (the probe side) with the rows of the bounded
// table Right reads, looked up by the equalities of Cond. Right is not a
// child: the operator reads it itself.
type LookupJoin struct {
	Left  Node
	Right *Scan
	// Type is InnerJoin or LeftJoin.
	Type JoinType
	Cond Expr
	Pos  sql.Pos
	cols types.Schema
}

// Schema: as a regular join's (the right columns nullable for a LEFT join).
func (l *LookupJoin) Schema() types.Schema {
	if l.cols == nil {
		l.cols = (&Join{Left: l.Left, Right: l.Right, Type: l.Type}).Schema()
	}
	return l.cols
}

func (l *LookupJoin) Children() []Node { return []Node{l.Left} }
func (l *LookupJoin) WithChildren(ch []Node) Node {
	c := *l
	c.Left, c.cols = ch[0], nil
	return &c
}
func (l *LookupJoin) Expressions() []Expr { return []Expr{l.Cond} }
func (l *LookupJoin) WithExpressions(es []Expr) Node {
	c := *l
	c.Cond = es[0]
	return &c
}

// Mode: the probe side's (each probe row keeps its op).
func (*LookupJoin) Mode(in []Mode) Mode { return anyUpdating(in) }

// UpsertKey: none known (a probe row may match several rows).
func (*LookupJoin) UpsertKey([][]int) []int { return nil }

func (l *LookupJoin) Describe() string {
	j := &Join{Left: l.Left, Right: l.Right, Type: l.Type}
	return fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], where=[%s], select=[%s])",
		l.Right.Table.Name, l.Type, j.describeExpr(l.Cond), strings.Join(l.Schema().Names(), ", "))
}

// prune: the probe side and the table keep what is needed and what the
// condition reads.
func (l *LookupJoin) prune(need []bool) (Node, map[int]int) {
	j := &Join{Left: l.Left, Right: l.Right, Type: l.Type, Cond: l.Cond, Pos: l.Pos}
	n, m := j.prune(need)
	pj, ok := n.(*Join)
	if !ok {
		// The join prunes to a projection over itself when it keeps
		// columns only its condition reads.
		p := n.(*Project)
		pj = p.Input.(*Join)
		out := &LookupJoin{Left: pj.Left, Right: pj.Right.(*Scan), Type: l.Type, Cond: pj.Cond, Pos: l.Pos}
		return &Project{Input: out, Exprs: p.Exprs, Names: p.Names}, m
	}
	return &LookupJoin{Left: pj.Left, Right: pj.Right.(*Scan), Type: l.Type, Cond: pj.Cond, Pos: l.Pos}, m
}

// physical: beside the probe side (a forward edge): every subtask holds the
// whole table.
func (l *LookupJoin) physical(b *physBuilder, o *Operator) {
	in := b.build(l.Left)
	ls, rs := l.Left.Schema(), l.Right.Schema()
	cond := splitJoinCond(l.Cond, len(ls), len(rs))
	spec := &LookupJoinSpec{Type: l.Type, Scan: l.Right, Residual: cond.residual, LeftWidth: len(ls)}
	for _, p := range cond.pairs {
		lk := p.left.expr
		if lk == nil {
			lk = &ColumnRef{Index: p.left.col, Name: ls[p.left.col].Name, T: ls[p.left.col].Type}
		}
		rk := p.right.expr
		if rk == nil {
			rk = &ColumnRef{Index: p.right.col, Name: rs[p.right.col].Name, T: rs[p.right.col].Type}
		}
		spec.LeftKeys = append(spec.LeftKeys, lk)
		spec.RightKeys = append(spec.RightKeys, rk)
		spec.describeKeys = append(spec.describeKeys, fmt.Sprintf("=(%s, %s)", describeOver(lk, ls), describeOver(rk, rs)))
	}
	o.Spec, o.Parallelism = spec, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// KindLookupJoin is the kind of LookupJoin's operator.
const KindLookupJoin = "LookupJoin"

// LookupJoinSpec is a lookup join as the runtime runs it: on open, the
// subtask reads every row of Scan (the table's fields Scan.Fields, all its
// splits) and keys them by RightKeys (over the scan's columns); each probe
// row (input 0, LeftWidth columns) is keyed by LeftKeys (over the probe
// row; the key values compared as their class's encoding, a NULL matching
// nothing) and emitted once per row of its key for which Residual (over
// the output; nil: TRUE) holds, with the probe row's op; a LeftJoin
// emits a probe row without one padded with NULLs.
type LookupJoinSpec struct {
	Type                JoinType
	Scan                *Scan
	LeftKeys, RightKeys []Expr
	Residual            Expr
	LeftWidth           int
	describeKeys        []string
}

func (*LookupJoinSpec) Kind() string { return KindLookupJoin }
func (s *LookupJoinSpec) Describe(o *Operator) string {
	d := "LookupJoin(table=[" + s.Scan.Table.Name + "], joinType=[" + s.Type.String() + "], keys=[" + strings.Join(s.describeKeys, ", ") + "]"
	if s.Residual != nil {
		d += ", residual=[" + describeOver(s.Residual, o.Schema) + "]"
	}
	return d + ", select=[" + strings.Join(o.Schema.Names(), ", ") + "])"
}

// Identity: the table and its fields, the join type, keys and residual
// (it keeps no state).
func (s *LookupJoinSpec) Identity(w *IDWriter) {
	w.Table(s.Scan.Table)
	w.Ints(s.Scan.Fields)
	w.Int(int64(s.Type))
	w.Exprs(s.LeftKeys)
	w.Exprs(s.RightKeys)
	if s.Residual != nil {
		w.Expr(s.Residual)
	} else {
		w.Str("")
	}
	w.Int(int64(s.LeftWidth))
}

// bindLookupJoin binds a join whose right input was written FOR SYSTEM_TIME
// AS OF the probe side's processing-time attribute: the checks of a lookup
// join, each at its place.
func (b *binder) bindLookupJoin(typ JoinType, left, right Node, cond Expr, name string, tablePos, onPos sql.Pos) (Node, error) {
	sc, ok := right.(*Scan)
	if !ok {
		return nil, errAt(ErrUnsupported, tablePos, "join the table itself, and filter or project its rows after the join",
			"a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() column) reads a table, but '%s' is a view or a query", name)
	}
	if !sc.Bounded {
		return nil, errAt(ErrUnsupported, tablePos, "look up a bounded table (a 'filesystem' table), or join on event time against a versioned table",
			"a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() column) reads the whole table '%s' into memory, but its connector '%s' is not bounded, and no connector serves lookups by key", name, sc.Table.Connector)
	}
	if sc.HasComputed() {
		return nil, errAt(ErrUnsupported, tablePos, "compute the columns in the query after the join",
			"the lookup table '%s' has computed columns, which a lookup join does not read", name)
	}
	if sc.Updating {
		return nil, errAt(ErrUnsupported, tablePos, "look up a table of rows, not a changelog", "the lookup table '%s' reads a changelog", name)
	}
	nl := len(left.Schema())
	keys := splitJoinCond(cond, nl, len(right.Schema()))
	if len(keys.pairs) == 0 {
		return nil, errAt(ErrUnsupported, onPos, "add an equality of a column of '"+name+"' with the probe side, e.g. ON o.k = "+name+".k",
			"the ON condition of a lookup join needs an equality between the probe side and the table '%s'", name)
	}
	for _, p := range keys.pairs {
		lt, rt := pairType(p.left, left.Schema()), pairType(p.right, right.Schema())
		if !sameKeyClass(lt, rt) {
			return nil, errAt(ErrUnsupported, onPos, "CAST one side to the other's type",
				"the lookup join's equality compares %s with %s", lt, rt)
		}
	}
	if keys.residual != nil && typ == LeftJoin {
		return nil, errAt(ErrUnsupported, onPos, "filter after the join, or make it an inner join",
			"a LEFT lookup join takes only equalities in its ON condition")
	}
	return &LookupJoin{Left: left, Right: sc, Type: typ, Cond: cond, Pos: onPos}, nil
}

// pairType is the type of one side of a join equality.
func pairType(s joinSide, sch types.Schema) types.T {
	if s.expr != nil {
		return s.expr.Type()
	}
	return sch[s.col].Type
}

// sameKeyClass reports whether values of a and b encode alike as keys:
// both integers (of any width), or the same kind.
func sameKeyClass(a, b types.T) bool {
	if a.Kind == b.Kind {
		return a.Kind != types.Decimal || a.Scale == b.Scale
	}
	return a.IsInteger() && b.IsInteger()
}
