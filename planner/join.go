package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// JoinType is the kind of a regular join.
type JoinType uint8

// The join types. A CROSS JOIN and a comma join are inner joins without a
// condition.
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	// LeftSemi: the left rows that have a match (EXISTS, IN), each once
	// however many matches it has; the output is the left columns.
	LeftSemi
	// LeftAnti: the left rows that have no match (NOT EXISTS, NOT IN);
	// the output is the left columns.
	LeftAnti
)

func (t JoinType) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[t]
}

// SQL is the type as written in a query.
func (t JoinType) SQL() string {
	return [...]string{"INNER JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "semi join (EXISTS / IN)", "anti join (NOT EXISTS / NOT IN)"}[t]
}

// LeftOnly reports whether the output is the left columns alone (semi and
// anti joins).
func (t JoinType) LeftOnly() bool { return t == LeftSemi || t == LeftAnti }

// padsLeft reports whether the join emits rows of the right input with the
// left columns NULL (a right or full outer join); padsRight the reverse.
func (t JoinType) padsLeft() bool  { return t == RightJoin || t == FullJoin }
func (t JoinType) padsRight() bool { return t == LeftJoin || t == FullJoin }

// Join is a regular join of two relations: every pair of a left and a
// right row for which Cond is TRUE, plus, for outer joins, each row of a
// preserved side that has no such pair, padded with NULLs. Its output is
// the left columns followed by the right columns. Cond (nil: TRUE) reads
// the output columns.
//
// Streaming, both inputs are kept in state forever (Flink's regular join);
// the output is updating when an input is or the join is outer: a padded
// row is retracted when its first match arrives and emitted again when its
// last match goes.
type Join struct {
	Left, Right Node
	Type        JoinType
	Cond        Expr
	// Pos is where the join's condition is (the statement's start when it
	// has none), for errors.
	Pos  sql.Pos
	cols types.Schema
	// stateTTL are the STATE_TTL hints of the left and right side (nil:
	// the job's TTL; state_ttl.go).
	stateTTL [2]*ttlHint
}

// Schema: the left columns then the right ones; the columns of a padded
// side become nullable, and a name seen before gets a numeric suffix (as
// Flink's id, id0), so that EXPLAIN names each column once. A semi or anti
// join's output is the left columns.
func (j *Join) Schema() types.Schema {
	if j.cols != nil {
		return j.cols
	}
	if j.Type.LeftOnly() {
		j.cols = j.Left.Schema()
		return j.cols
	}
	return j.condSchema()
}

// condSchema is the schema Cond reads: the left columns then the right
// ones (for a semi or anti join too).
func (j *Join) condSchema() types.Schema {
	if j.cols != nil && !j.Type.LeftOnly() {
		return j.cols
	}
	l, r := j.Left.Schema(), j.Right.Schema()
	out := make(types.Schema, 0, len(l)+len(r))
	seen := map[string]bool{}
	// next[name] is where the search for a free name<n> resumes: names are
	// only ever taken, so those before it stay taken, and each duplicate
	// costs one try, not one per duplicate before it.
	next := map[string]int{}
	add := func(c types.Column, nullable bool) {
		if nullable {
			c.Type = c.Type.Nullable()
		}
		name := c.Name
		if lower := strings.ToLower(name); seen[lower] {
			n := next[lower]
			for {
				name = c.Name + strconv.Itoa(n)
				n++
				if !seen[strings.ToLower(name)] {
					break
				}
			}
			next[lower] = n
		}
		seen[strings.ToLower(name)] = true
		c.Name = name
		out = append(out, c)
	}
	for _, c := range l {
		add(c, j.Type.padsLeft())
	}
	for _, c := range r {
		add(c, j.Type.padsRight())
	}
	if !j.Type.LeftOnly() {
		j.cols = out
	}
	return out
}

func (j *Join) Children() []Node { return []Node{j.Left, j.Right} }
func (j *Join) WithChildren(ch []Node) Node {
	c := *j
	c.Left, c.Right, c.cols = ch[0], ch[1], nil
	return &c
}

func (j *Join) Expressions() []Expr {
	if j.Cond == nil {
		return nil
	}
	return []Expr{j.Cond}
}
func (j *Join) WithExpressions(es []Expr) Node {
	c := *j
	if len(es) > 0 {
		c.Cond = es[0]
	}
	return &c
}

// Mode: an inner join of append-only inputs appends; an outer join, or a
// join of an updating input, updates; a join that the interval-joins rule
// will make an IntervalJoin appends (so that windows bound over it see an
// append-only input). A semi join of append-only inputs appends (a left row
// goes out when its first match comes, and no match ever goes); an anti
// join updates (a left row goes out until its first match comes).
func (j *Join) Mode(in []Mode) Mode {
	switch j.Type {
	case LeftSemi:
		return anyUpdating(in)
	case LeftAnti:
		return Updating
	}
	if ij := intervalJoinOver(j, in[0], in[1]); ij != nil {
		return ij.Mode(in)
	}
	if j.Type != InnerJoin {
		return Updating
	}
	return anyUpdating(in)
}

// UpsertKey: the two inputs' keys together identify a joined row. When the
// join keys of one side contain that side's key, a row of the other side
// has at most one match, and the other side's key alone is the key (unless
// the other side's columns may be padded).
func (j *Join) UpsertKey(in [][]int) []int {
	lk, rk := in[0], in[1]
	if j.Type.LeftOnly() {
		return lk // each left row goes out at most once
	}
	nl := len(j.Left.Schema())
	keys := splitJoinCond(j.Cond, nl, len(j.Right.Schema()))
	var lKeys, rKeys []int
	for _, k := range keys.pairs {
		if k.left.col >= 0 && k.right.col >= 0 {
			lKeys, rKeys = append(lKeys, k.left.col), append(rKeys, k.right.col)
		}
	}
	if rk != nil && lk != nil && containsAll(rKeys, rk) && !j.Type.padsLeft() {
		return append([]int{}, lk...)
	}
	if lk != nil && rk != nil && containsAll(lKeys, lk) && !j.Type.padsRight() {
		out := make([]int, len(rk))
		for i, k := range rk {
			out[i] = nl + k
		}
		return out
	}
	if lk == nil || rk == nil {
		return nil
	}
	out := append([]int{}, lk...)
	for _, k := range rk {
		out = append(out, nl+k)
	}
	return out
}

// containsAll reports whether every element of sub is in set (an empty sub
// is contained in any set).
func containsAll(set, sub []int) bool {
	for _, s := range sub {
		found := false
		for _, x := range set {
			if x == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (j *Join) Describe() string {
	d := "Join(joinType=[" + j.Type.String() + "]"
	if j.Cond != nil {
		d += ", where=[" + j.describeExpr(j.Cond) + "]"
	}
	return d + ", select=[" + strings.Join(j.Schema().Names(), ", ") + "])"
}

// describeExpr prints e, which reads the join's output, with the output's
// column names (unique, unlike the names the columns were bound by).
func (j *Join) describeExpr(e Expr) string {
	s := j.condSchema()
	return mapExpr(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok && c.Index < len(s) {
			n := *c
			n.Name = s[c.Index].Name
			return &n
		}
		return x
	}).String()
}

// prune: each input keeps the columns needed above and those the
// condition reads.
func (j *Join) prune(need []bool) (Node, map[int]int) {
	nl := len(j.Left.Schema())
	nr := len(j.Right.Schema())
	used := map[int]bool{}
	if j.Cond != nil {
		columnsUsed(j.Cond, used)
	}
	ln, rn := make([]bool, nl), make([]bool, nr)
	for i := range need {
		if need[i] || used[i] {
			if i < nl {
				ln[i] = true
			} else {
				rn[i-nl] = true
			}
		}
	}
	for i := range used {
		if i < nl {
			ln[i] = true
		} else {
			rn[i-nl] = true
		}
	}
	l, lm := prune(j.Left, ln)
	r, rm := prune(j.Right, rn)
	m := map[int]int{}
	nl2 := len(l.Schema())
	for i, ok := range ln {
		if ok {
			m[i] = lm[i]
		}
	}
	for i, ok := range rn {
		if ok {
			m[nl+i] = nl2 + rm[i]
		}
	}
	out := &Join{Left: l, Right: r, Type: j.Type, Pos: j.Pos, stateTTL: j.stateTTL}
	if j.Cond != nil {
		out.Cond = remapColumns(j.Cond, m)
	}
	return out, m
}

// joinSide is one side's half of an equality: a column of that input, or
// (col < 0) an expression over it, computed below the join.
type joinSide struct {
	col  int
	expr Expr // over the input's columns
}

// joinPair is one equality conjunct of a join condition.
type joinPair struct{ left, right joinSide }

// joinCond is a join condition split into equalities between the inputs
// (the join keys) and what is left (the residual, over the output; nil:
// none).
type joinCond struct {
	pairs    []joinPair
	residual Expr
}

// splitJoinCond splits cond (over nl left then nr right columns) into
// equalities of a left and a right expression and the rest. Each side of
// an equality must read only its input and be deterministic.
func splitJoinCond(cond Expr, nl, nr int) joinCond {
	var out joinCond
	if cond == nil {
		return out
	}
	var rest []Expr
	for _, c := range conjunctsOf(cond) {
		if p, ok := equiPair(c, nl); ok {
			out.pairs = append(out.pairs, p)
			continue
		}
		rest = append(rest, c)
	}
	for _, c := range rest {
		if out.residual == nil {
			out.residual = c
		} else {
			out.residual = and(out.residual, c)
		}
	}
	return out
}

// conjunctsOf flattens a tree of ANDs.
func conjunctsOf(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Func == "AND" && len(c.Args) == 2 {
		return append(conjunctsOf(c.Args[0]), conjunctsOf(c.Args[1])...)
	}
	return []Expr{e}
}

// sideOf reports which input e reads: 0 left, 1 right, -1 none (a
// constant), 2 both.
func sideOf(e Expr, nl int) int {
	used := map[int]bool{}
	columnsUsed(e, used)
	side := -1
	for c := range used {
		s := 0
		if c >= nl {
			s = 1
		}
		if side >= 0 && side != s {
			return 2
		}
		side = s
	}
	return side
}

func equiPair(e Expr, nl int) (joinPair, bool) {
	c, ok := e.(*Call)
	if !ok || c.Func != "=" || len(c.Args) != 2 || !deterministic(c.Args) {
		return joinPair{}, false
	}
	a, b := c.Args[0], c.Args[1]
	sa, sb := sideOf(a, nl), sideOf(b, nl)
	switch {
	case sa == 0 && sb == 1:
	case sa == 1 && sb == 0:
		a, b = b, a
	default:
		return joinPair{}, false
	}
	return joinPair{left: sideExpr(a, 0), right: sideExpr(b, nl)}, true
}

// sideExpr is e (over the output) as one input's side of a key: its
// column, or the expression shifted to the input's columns.
func sideExpr(e Expr, shift int) joinSide {
	if c, ok := e.(*ColumnRef); ok {
		return joinSide{col: c.Index - shift}
	}
	if shift == 0 {
		return joinSide{col: -1, expr: e}
	}
	used := map[int]bool{}
	columnsUsed(e, used)
	m := map[int]int{}
	for c := range used {
		m[c] = c - shift
	}
	return joinSide{col: -1, expr: remapColumns(e, m)}
}

// JoinInputSpec says how a join keeps one input's rows in state, by what
// the input guarantees (Flink's JoinInputSideSpec).
type JoinInputSpec uint8

const (
	// NoUniqueKey: per join key, each distinct row with its count.
	NoUniqueKey JoinInputSpec = iota
	// HasUniqueKey: per join key, the row of each unique key value.
	HasUniqueKey
	// JoinKeyContainsUniqueKey: one row per join key.
	JoinKeyContainsUniqueKey
)

func (s JoinInputSpec) String() string {
	return [...]string{"NoUniqueKey", "HasUniqueKey", "JoinKeyContainsUniqueKey"}[s]
}

// JoinSpec is a regular join as the runtime runs it.
//
// Input 0 is the left input, input 1 the right; their rows arrive hashed
// by LeftKeys and RightKeys (or all on one subtask when there are no
// keys). The output is the first LeftWidth columns of the left input
// followed by the first RightWidth columns of the right (columns after
// those are join keys computed for the join). A pair of rows joins when
// their keys are equal, no key is NULL, and Residual (over the output
// columns; nil: TRUE) is TRUE. The output carries +I and -D only: every
// change of an input becomes the insertion or deletion of joined rows.
type JoinSpec struct {
	Type                JoinType
	LeftKeys, RightKeys []int
	Residual            Expr
	LeftWidth           int
	RightWidth          int
	LeftInput           JoinInputSpec
	RightInput          JoinInputSpec
	LeftUnique          []int // the left input's unique key (HasUniqueKey)
	RightUnique         []int
	LeftSchema          types.Schema
	RightSchema         types.Schema
	LeftUpdating        bool
	RightUpdating       bool
	// TTL of the left and the right input's state: a stored row not
	// written for this long (processing time) is dropped
	// ('table.exec.state.ttl', or the STATE_TTL hint naming that input; 0:
	// never). Not part of the identity: a changed TTL keeps the state.
	TTL                  [2]time.Duration
	describeLeftKeyNames []string
	describeRightKeys    []string
}

// The kind of a regular join.
const KindJoin = "Join"

func (*JoinSpec) Kind() string          { return KindJoin }
func (*JoinSpec) KeepsKeyedState() bool { return true }
func (s *JoinSpec) Describe(o *Operator) string {
	var eq []string
	for i := range s.LeftKeys {
		if i >= len(s.describeLeftKeyNames) || i >= len(s.describeRightKeys) {
			// A spec made by hand (tests): the key columns' names.
			eq = append(eq, fmt.Sprintf("=(%s, %s)", s.LeftSchema[s.LeftKeys[i]].Name, s.RightSchema[s.RightKeys[i]].Name))
			continue
		}
		eq = append(eq, fmt.Sprintf("=(%s, %s)", s.describeLeftKeyNames[i], s.describeRightKeys[i]))
	}
	d := "Join(joinType=[" + s.Type.String() + "], " + describeJoinKeys(eq)
	if s.Residual != nil {
		sch := o.Schema
		if s.Type.LeftOnly() { // the residual reads the left then the right columns
			sch = append(append(types.Schema{}, s.LeftSchema[:s.LeftWidth]...), s.RightSchema[:s.RightWidth]...)
		}
		d += ", residual=[" + describeOver(s.Residual, sch) + "]"
	}
	d += ", select=[" + strings.Join(o.Schema.Names(), ", ") + "]"
	d += ", leftInputSpec=[" + describeInputSpec(s.LeftInput, s.LeftUnique, s.LeftSchema) + "]"
	d += ", rightInputSpec=[" + describeInputSpec(s.RightInput, s.RightUnique, s.RightSchema) + "]"
	switch {
	case s.TTL[0] == s.TTL[1] && s.TTL[0] > 0:
		d += ", stateTtl=[" + s.TTL[0].String() + "]"
	case s.TTL[0] != s.TTL[1]:
		d += ", stateTtl=[left=" + describeTTL(s.TTL[0]) + ", right=" + describeTTL(s.TTL[1]) + "]"
	}
	return d + ")"
}

// describeTTL prints a TTL of EXPLAIN (0: none).
func describeTTL(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

func describeInputSpec(s JoinInputSpec, unique []int, sch types.Schema) string {
	if s != HasUniqueKey {
		return s.String()
	}
	var names []string
	for _, k := range unique {
		names = append(names, sch[k].Name)
	}
	return s.String() + "(" + strings.Join(names, ", ") + ")"
}

// describeOver prints e with the column names of sch.
func describeOver(e Expr, sch types.Schema) string {
	return mapExpr(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok && c.Index < len(sch) {
			n := *c
			n.Name = sch[c.Index].Name
			return &n
		}
		return x
	}).String()
}

// Identity: the join type, keys, residual, output widths and input specs
// (they give the state its layout) and whether the inputs retract.
func (s *JoinSpec) Identity(w *IDWriter) {
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
	w.Int(int64(s.LeftInput))
	w.Ints(s.LeftUnique)
	w.Int(int64(s.RightInput))
	w.Ints(s.RightUnique)
	w.Bool(s.LeftUpdating)
	w.Bool(s.RightUpdating)
}

// describeJoinKeys is the keys=[...] of a two-input join's EXPLAIN line,
// eq its equalities. Without any, the join sends both inputs whole to one
// subtask, and the line says so rather than leave an empty list to read.
func describeJoinKeys(eq []string) string {
	if len(eq) == 0 {
		return "keys=[] (no equi key: single subtask)"
	}
	return "keys=[" + strings.Join(eq, ", ") + "]"
}

// inputSpec picks how a join keeps an input with unique key uk (nil: none)
// joined on keys.
func inputSpec(uk, keys []int) (JoinInputSpec, []int) {
	switch {
	case uk == nil:
		return NoUniqueKey, nil
	case containsAll(keys, uk):
		return JoinKeyContainsUniqueKey, nil
	}
	return HasUniqueKey, uk
}

// physical: the join keys become hash edges; a key that is an expression
// is computed by a projection below the join that appends it to its
// input's columns. Without keys the join runs on one subtask.
func (j *Join) physical(b *physBuilder, o *Operator) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	nl, nr := len(ls), len(rs)
	cond := splitJoinCond(j.Cond, nl, nr)
	ki := layJoinKeys(b, j.Left, j.Right, cond.pairs, j.condSchema())
	lin, rin, lKeys, rKeys, lNames, rNames := ki.left, ki.right, ki.lKeys, ki.rKeys, ki.lNames, ki.rNames
	spec := &JoinSpec{
		Type: j.Type, LeftKeys: lKeys, RightKeys: rKeys, Residual: cond.residual,
		LeftWidth: nl, RightWidth: nr,
		LeftSchema: lin.Schema, RightSchema: rin.Schema,
		LeftUpdating: lin.Mode == Updating, RightUpdating: rin.Mode == Updating,
		describeLeftKeyNames: lNames, describeRightKeys: rNames,
		TTL: [2]time.Duration{ttlOf(j.stateTTL[0], b.ttl), ttlOf(j.stateTTL[1], b.ttl)},
	}
	spec.LeftInput, spec.LeftUnique = inputSpec(UpsertKeyOf(j.Left), lKeys)
	spec.RightInput, spec.RightUnique = inputSpec(UpsertKeyOf(j.Right), rKeys)
	o.Spec = spec
	if len(lKeys) == 0 {
		o.Parallelism = 1
		o.Inputs = []Edge{{From: lin, Partition: Global}, {From: rin, Partition: Global}}
		return
	}
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: lin, Partition: Hash, Keys: lKeys}, {From: rin, Partition: Hash, Keys: rKeys}}
}

// joinKeys are a join's inputs laid out with their keys (layJoinKeys).
type joinKeys struct {
	left, right    *Operator
	lKeys, rKeys   []int
	lNames, rNames []string // each key as EXPLAIN names it
}

// layJoinKeys builds a two-input join's inputs with the equalities pairs
// as their keys: a key that is a column is that column (named as in
// names, the columns the join's condition reads: left then right), one
// that is an expression is computed by a projection below the join that
// appends it to its input's columns.
func layJoinKeys(b *physBuilder, left, right Node, pairs []joinPair, names []types.Column) joinKeys {
	nl := len(left.Schema())
	var lp, rp *Project
	var k joinKeys
	for _, p := range pairs {
		lc, lname := keyColumn(&lp, left, p.left)
		rc, rname := keyColumn(&rp, right, p.right)
		if p.left.expr == nil {
			lname = names[lc].Name
		}
		if p.right.expr == nil {
			rname = names[nl+rc].Name
		}
		k.lKeys, k.rKeys = append(k.lKeys, lc), append(k.rKeys, rc)
		k.lNames, k.rNames = append(k.lNames, lname), append(k.rNames, rname)
	}
	if lp != nil {
		left = lp
	}
	if rp != nil {
		right = rp
	}
	k.left, k.right = b.build(left), b.build(right)
	return k
}

// keyColumn returns the input column of one side of a join key, appending
// an expression key to the projection *p over in (created on first use).
func keyColumn(p **Project, in Node, s joinSide) (int, string) {
	sch := in.Schema()
	if s.expr == nil {
		return s.col, sch[s.col].Name
	}
	if *p == nil {
		np := &Project{Input: in}
		for i, c := range sch {
			np.Exprs = append(np.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
			np.Names = append(np.Names, c.Name)
		}
		*p = np
	}
	idx := len((*p).Exprs)
	name := fmt.Sprintf("$f%d", idx)
	(*p).Exprs = append((*p).Exprs, s.expr)
	(*p).Names = append((*p).Names, name)
	return idx, s.expr.String()
}
