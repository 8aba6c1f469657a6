package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Event-time temporal joins (Flink's TemporalRowTimeJoinOperator):
//
//	FROM orders o [LEFT] JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency
//
// The right input is a versioned table: it has a primary key (its upsert
// key) and a row-time attribute (a WATERMARK), and each of its rows is the
// version of its key valid from its row time on (a -D row ends the key's
// versions from its time; -U rows carry no version and are ignored, as
// Flink's planner drops them before the join). Each probe row (the left
// input, append-only) joins the version of its key valid at its time
// attribute, once the watermark (over both inputs) has passed that time;
// a LEFT join pads a probe row that has none. The output is append-only
// and keeps the probe side's time attributes; the versioned side's time
// column is a plain TIMESTAMP in it.
//
// The ON condition must equate every column of the versioned table's
// primary key with the probe side; other conjuncts are evaluated on the
// joined pair (a LEFT join pads a probe row whose version fails them).
// FOR SYSTEM_TIME AS OF a PROCTIME() column is a lookup join
// (lookup_join.go).

// TemporalJoin is an event-time temporal join of Left (the probe side) with
// Right (the versioned table). Its output is the left columns followed by
// the right ones; Cond reads them.
type TemporalJoin struct {
	Left, Right Node
	// Type is InnerJoin or LeftJoin.
	Type JoinType
	Cond Expr
	// LeftTime is the probe side's time attribute (FOR SYSTEM_TIME AS OF),
	// a column of Left; RightTime the versioned table's, a column of Right.
	LeftTime, RightTime int
	// Pos is where the join's condition is, for errors.
	Pos  sql.Pos
	cols types.Schema
}

// Schema: as a regular join's (the right columns nullable for a LEFT join).
func (t *TemporalJoin) Schema() types.Schema {
	if t.cols == nil {
		t.cols = (&Join{Left: t.Left, Right: t.Right, Type: t.Type}).Schema()
	}
	return t.cols
}

func (t *TemporalJoin) Children() []Node { return []Node{t.Left, t.Right} }
func (t *TemporalJoin) WithChildren(ch []Node) Node {
	c := *t
	c.Left, c.Right, c.cols = ch[0], ch[1], nil
	return &c
}

func (t *TemporalJoin) Expressions() []Expr { return []Expr{t.Cond} }
func (t *TemporalJoin) WithExpressions(es []Expr) Node {
	c := *t
	c.Cond = es[0]
	return &c
}

// Mode: append-only (the probe side is append-only; each probe row is
// joined once, when the watermark passes it).
func (*TemporalJoin) Mode([]Mode) Mode { return AppendOnly }

// UpsertKey: none (append-only).
func (*TemporalJoin) UpsertKey([][]int) []int { return nil }

func (t *TemporalJoin) Describe() string {
	s := t.Schema()
	nl := len(t.Left.Schema())
	j := &Join{Left: t.Left, Right: t.Right, Type: t.Type}
	return fmt.Sprintf("TemporalJoin(joinType=[%s], where=[%s], leftTimeAttribute=[%s], rightTimeAttribute=[%s], select=[%s])",
		t.Type, j.describeExpr(t.Cond), s[t.LeftTime].Name, s[nl+t.RightTime].Name, strings.Join(s.Names(), ", "))
}

// prune: as a regular join's, keeping both time attributes.
func (t *TemporalJoin) prune(need []bool) (Node, map[int]int) {
	nl := len(t.Left.Schema())
	need = append([]bool(nil), need...)
	need[t.LeftTime], need[nl+t.RightTime] = true, true
	j := &Join{Left: t.Left, Right: t.Right, Type: t.Type, Cond: t.Cond, Pos: t.Pos}
	n, m := j.prune(need)
	pj := n.(*Join)
	return &TemporalJoin{Left: pj.Left, Right: pj.Right, Type: t.Type, Cond: pj.Cond,
		LeftTime: m[t.LeftTime], RightTime: m[nl+t.RightTime] - len(pj.Left.Schema()), Pos: t.Pos}, m
}

// physical: hash edges on the join keys (an expression key is computed
// below the join, as for a regular join).
func (t *TemporalJoin) physical(b *physBuilder, o *Operator) {
	ls, rs := t.Left.Schema(), t.Right.Schema()
	nl, nr := len(ls), len(rs)
	cond := splitJoinCond(t.Cond, nl, nr)
	spec := &TemporalJoinSpec{Type: t.Type, Residual: cond.residual, LeftWidth: nl, RightWidth: nr, LeftTime: t.LeftTime, RightTime: t.RightTime}
	out := t.Schema()
	ki := layJoinKeys(b, t.Left, t.Right, cond.pairs, out)
	lin, rin := ki.left, ki.right
	spec.LeftKeys, spec.RightKeys = ki.lKeys, ki.rKeys
	for i := range ki.lNames {
		spec.describeKeys = append(spec.describeKeys, fmt.Sprintf("=(%s, %s)", ki.lNames[i], ki.rNames[i]))
	}
	spec.LeftSchema, spec.RightSchema = lin.Schema, rin.Schema
	spec.RightUpdating = rin.Mode == Updating
	spec.describeTimes = [2]string{out[t.LeftTime].Name, out[nl+t.RightTime].Name}
	o.Spec = spec
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: lin, Partition: Hash, Keys: spec.LeftKeys}, {From: rin, Partition: Hash, Keys: spec.RightKeys}}
}

// TemporalJoinSpec is an event-time temporal join as the runtime runs it.
//
// Input 0 is the probe side, input 1 the versioned table; their rows
// arrive hashed by LeftKeys and RightKeys. The output is the first
// LeftWidth columns of the probe input followed by the first RightWidth
// columns of the versioned one, append-only. A probe row waits until the
// operator's watermark reaches its LeftTime, then joins the latest version
// of its key (equal keys, none NULL) whose RightTime is at or before it,
// if that version is not a deletion and Residual (over the output; nil:
// TRUE) holds; a LeftJoin emits it padded otherwise. Versions older than
// the one valid at the watermark are dropped.
type TemporalJoinSpec struct {
	Type                  JoinType
	LeftKeys, RightKeys   []int
	Residual              Expr
	LeftWidth, RightWidth int
	LeftTime, RightTime   int
	LeftSchema            types.Schema
	RightSchema           types.Schema
	RightUpdating         bool
	describeKeys          []string
	describeTimes         [2]string
}

// The kind of an event-time temporal join.
const KindTemporalJoin = "TemporalJoin"

func (*TemporalJoinSpec) Kind() string          { return KindTemporalJoin }
func (*TemporalJoinSpec) KeepsKeyedState() bool { return true }
func (s *TemporalJoinSpec) Describe(o *Operator) string {
	d := "TemporalJoin(joinType=[" + s.Type.String() + "], keys=[" + strings.Join(s.describeKeys, ", ") + "]"
	d += ", leftTimeAttribute=[" + s.describeTimes[0] + "], rightTimeAttribute=[" + s.describeTimes[1] + "]"
	if s.Residual != nil {
		d += ", residual=[" + describeOver(s.Residual, o.Schema) + "]"
	}
	return d + ", select=[" + strings.Join(o.Schema.Names(), ", ") + "])"
}

// Identity: the join type, keys, residual, widths and time attributes,
// and the types of the columns kept in state.
func (s *TemporalJoinSpec) Identity(w *IDWriter) {
	w.Int(int64(s.Type))
	w.Ints(s.LeftKeys)
	w.Ints(s.RightKeys)
	if s.Residual != nil {
		w.Expr(s.Residual)
	} else {
		w.Str("")
	}
	w.Int(int64(s.LeftWidth))
	w.Int(int64(s.RightWidth))
	w.Int(int64(s.LeftTime))
	w.Int(int64(s.RightTime))
	for _, c := range s.LeftSchema[:s.LeftWidth] {
		w.Type(c.Type)
	}
	for _, c := range s.RightSchema[:s.RightWidth] {
		w.Type(c.Type)
	}
	w.Bool(s.RightUpdating)
}

// asOfTable is a table of FROM written with FOR SYSTEM_TIME AS OF, bound
// but not yet joined.
type asOfTable struct {
	name string
	expr ast.ExprNode
}

// markAsOf records that n, the binding of table name, was written with FOR
// SYSTEM_TIME AS OF expr: the join binding n as its right input makes it a
// temporal join (takeAsOf); anywhere else it is an error (noAsOf).
func (b *binder) markAsOf(n Node, name string, expr ast.ExprNode) {
	if b.asOf == nil {
		b.asOf = map[Node]asOfTable{}
	}
	b.asOf[n] = asOfTable{name: name, expr: expr}
}

func (b *binder) takeAsOf(n Node) (asOfTable, bool) {
	a, ok := b.asOf[n]
	delete(b.asOf, n)
	return a, ok
}

// noAsOf fails when n was written with FOR SYSTEM_TIME AS OF but is not the
// right input of a join.
func (b *binder) noAsOf(n Node) error {
	a, ok := b.takeAsOf(n)
	if !ok {
		return nil
	}
	return errAt(ErrUnsupported, b.asOfTablePos(a.name, b.pos(a.expr)), "write the versioned table on the right: FROM orders o JOIN "+a.name+" FOR SYSTEM_TIME AS OF o.ts AS r ON ...",
		"FOR SYSTEM_TIME AS OF applies to the right input of a join (a temporal join), but '%s' is not one", a.name)
}

// asOfTablePos is where the table name written before FOR SYSTEM_TIME AS
// OF is: its last occurrence before the AS OF expression.
func (b *binder) asOfTablePos(name string, asOf sql.Pos) sql.Pos {
	pos := b.identPos(name)
	for off := b.stmt.Pos().Offset; ; {
		p, ok := sql.FindIdentAfter(b.stmt, name, off)
		if !ok || p.Offset >= asOf.Offset {
			return pos
		}
		pos, off = p, p.Offset+1
	}
}

// bindTemporalJoin binds j, whose right input was written with FOR
// SYSTEM_TIME AS OF: the checks of a temporal join, each at its place.
func (b *binder) bindTemporalJoin(j *ast.Join, typ JoinType, left Node, right Node, sc *scope, a asOfTable) (Node, *scope, error) {
	asOfPos := b.pos(a.expr)
	tablePos := b.asOfTablePos(a.name, asOfPos)
	if typ != InnerJoin && typ != LeftJoin {
		return nil, nil, errAt(ErrUnsupported, tablePos, "write [INNER] JOIN or LEFT JOIN", "a temporal join (FOR SYSTEM_TIME AS OF) is an inner or a left join, not a %s", typ.SQL())
	}
	if j.NaturalJoin || len(j.Using) > 0 || j.On == nil {
		return nil, nil, errAt(ErrUnsupported, tablePos, "write the condition with ON, e.g. ON o.k = r.k", "a temporal join (FOR SYSTEM_TIME AS OF) needs an ON condition")
	}
	nl := len(left.Schema())
	e, err := b.bindExpr(a.expr, sc, nil)
	if err != nil {
		return nil, nil, err
	}
	c, ok := e.(*ColumnRef)
	if !ok || c.Index >= nl {
		return nil, nil, errAt(ErrUnsupported, asOfPos, "name the probe side's time attribute, e.g. FOR SYSTEM_TIME AS OF o.ts",
			"FOR SYSTEM_TIME AS OF must name a time attribute column of the join's left input (the probe side), not an expression or a column of the versioned table")
	}
	if isProctime(left, c.Index) {
		// A lookup join (lookup_join.go).
		cond, err := b.bindBool(j.On.Expr, sc, nil, "ON")
		if err != nil {
			return nil, nil, err
		}
		n, err := b.bindLookupJoin(typ, left, right, cond, a.name, tablePos, b.pos(j.On.Expr))
		return n, sc, err
	}
	if c.T.Kind != types.Timestamp {
		return nil, nil, errAt(ErrUnsupported, asOfPos, "name the left input's row-time column (the column of its WATERMARK FOR)",
			"FOR SYSTEM_TIME AS OF %s: '%s' is %s, not a time attribute", c.Name, c.Name, c.T)
	}
	if !isRowtime(left, c.Index) {
		return nil, nil, errAt(ErrUnsupported, asOfPos, fmt.Sprintf("declare WATERMARK FOR %s AS %s - INTERVAL '5' SECOND in the left input's table", c.Name, c.Name),
			"FOR SYSTEM_TIME AS OF %s: '%s' is not a time attribute of the left input (a column with a WATERMARK)", c.Name, c.Name)
	}
	pk := UpsertKeyOf(right)
	if len(pk) == 0 {
		return nil, nil, errAt(ErrUnsupported, tablePos, "declare PRIMARY KEY (...) NOT ENFORCED in the table, or join a view that has one (e.g. a deduplication)",
			"the versioned table '%s' of a temporal join has no primary key", a.name)
	}
	rtime := -1
	for i := range right.Schema() {
		if isRowtime(right, i) {
			rtime = i
			break
		}
	}
	if rtime < 0 {
		return nil, nil, errAt(ErrUnsupported, tablePos, "declare WATERMARK FOR <time column> AS <time column> - INTERVAL '5' SECOND in the table",
			"the versioned table '%s' of a temporal join has no time attribute (a column with a WATERMARK)", a.name)
	}
	if ModeOf(left) == Updating {
		return nil, nil, errAt(ErrUnsupported, asOfPos, "join an append-only input: a table that is not a changelog, or a query over one without aggregation",
			"the left input of a temporal join must be append-only, but it produces updates (from %s)", producer(left))
	}
	cond, err := b.bindBool(j.On.Expr, sc, nil, "ON")
	if err != nil {
		return nil, nil, err
	}
	onPos := b.pos(j.On.Expr)
	keys := splitJoinCond(cond, nl, len(right.Schema()))
	var covered []int
	for _, p := range keys.pairs {
		if p.right.expr == nil {
			covered = append(covered, p.right.col)
		}
	}
	if !containsAll(covered, pk) {
		rs := right.Schema()
		var names, missing []string
		for _, k := range pk {
			names = append(names, rs[k].Name)
			if !containsAll(covered, []int{k}) {
				missing = append(missing, rs[k].Name)
			}
		}
		return nil, nil, errAt(ErrUnsupported, onPos, fmt.Sprintf("add to ON an equality of %s with a column of the left input", strings.Join(missing, " and ")),
			"the ON condition of a temporal join must equate every column of the primary key (%s) of the versioned table '%s' with the left input", strings.Join(names, ", "), a.name)
	}
	return &TemporalJoin{Left: left, Right: right, Type: typ, Cond: cond, LeftTime: c.Index, RightTime: rtime, Pos: onPos}, sc, nil
}
