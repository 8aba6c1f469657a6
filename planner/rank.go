package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// TopN and deduplication, Flink's patterns:
//
//	SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t)
//	WHERE rn <= N
//
// The select list's ROW_NUMBER() OVER (...) binds to a Rank node over the
// block's input (after its WHERE) with an open rank range; the rule
// rankFilters (run after predicate pushdown) moves the conditions on the
// row number of a filter right above it (rn <= N, rn < N, rn = N, rn BETWEEN
// a AND b, rn >= a) into the range, and pruning drops the row number from
// the output when nothing above reads it. A Rank keeping the first row per
// key (rn = 1, rn not output) ordered by a time attribute is a
// deduplication (Rank.Dedup). ORDER BY ... LIMIT over an unbounded input
// becomes a Rank without partition keys.

// Rank numbers the rows of each partition (the Partition columns) in the
// order of Order, as ROW_NUMBER() does, and keeps the rows numbered Start
// to End (1-based, inclusive). Its output is the input's columns followed,
// when OutputRank, by the row number (BIGINT NOT NULL).
type Rank struct {
	Input     Node
	Partition []int
	Order     []SortKey
	// Start and End bound the rank range; Start 0: none yet (no filter on
	// the row number taken), End < Start: an empty range (LIMIT 0).
	Start, End int64
	OutputRank bool
	RankName   string
	// FromLimit: made from ORDER BY ... LIMIT over an unbounded input.
	FromLimit bool
}

func (r *Rank) Schema() types.Schema {
	in := r.Input.Schema()
	if !r.OutputRank {
		return in
	}
	out := append(types.Schema{}, in...)
	return append(out, types.Column{Name: r.RankName, Type: types.T{Kind: types.BigInt, NotNull: true}})
}

func (r *Rank) Children() []Node { return []Node{r.Input} }
func (r *Rank) WithChildren(ch []Node) Node {
	c := *r
	c.Input = ch[0]
	return &c
}

// Expressions: a rank reads its input's columns by index.
func (*Rank) Expressions() []Expr           { return nil }
func (r *Rank) WithExpressions([]Expr) Node { return r }

// Dedup reports whether the rank is a deduplication: the first row per
// key (rn = 1, not output) by one time attribute, ascending (keep the
// first row) or descending (keep the last row).
func (r *Rank) Dedup() (ok, keepLast, proctime bool) {
	if r.OutputRank || r.Start != 1 || r.End != 1 || len(r.Order) != 1 || r.FromLimit {
		return false, false, false
	}
	col := r.Order[0].Index
	proctime = isProctime(r.Input, col)
	if !proctime && !isRowtime(r.Input, col) {
		return false, false, false
	}
	return true, r.Order[0].Desc, proctime
}

// Mode: a rank updates what it emitted (a row pushed out of the range is
// retracted), except a deduplication keeping the first row by processing
// time and a LIMIT without ORDER BY over an append-only input, whose first
// rows never leave.
func (r *Rank) Mode(in []Mode) Mode {
	if in[0] == AppendOnly {
		if ok, keepLast, proctime := r.Dedup(); ok && !keepLast && proctime {
			return AppendOnly
		}
		if len(r.Order) == 0 {
			return AppendOnly
		}
	}
	return Updating
}

// UpsertKey: the partition keys and the row number when it is output (as
// Flink); the partition keys alone when the range holds one row; else the
// input's key.
func (r *Rank) UpsertKey(in [][]int) []int {
	switch {
	case r.OutputRank:
		return append(append([]int{}, r.Partition...), len(r.Input.Schema()))
	case r.Start > 0 && r.Start == r.End:
		return append([]int{}, r.Partition...)
	}
	return in[0]
}

func (r *Rank) Describe() string { return describeRank(r, r.Schema()) }

func describeRank(r *Rank, out types.Schema) string {
	in := r.Input.Schema()
	var part []string
	for _, k := range r.Partition {
		part = append(part, in[k].Name)
	}
	if ok, keepLast, proctime := r.Dedup(); ok {
		keep, tattr := "FirstRow", "ROWTIME"
		if keepLast {
			keep = "LastRow"
		}
		if proctime {
			tattr = "PROCTIME"
		}
		return fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s %s])", keep, strings.Join(part, ", "), tattr, in[r.Order[0].Index].Name)
	}
	var order []string
	for _, k := range r.Order {
		d := in[k.Index].Name + " ASC"
		if k.Desc {
			d = in[k.Index].Name + " DESC"
		}
		if k.NullsFirst != !k.Desc {
			if k.NullsFirst {
				d += " NULLS FIRST"
			} else {
				d += " NULLS LAST"
			}
		}
		order = append(order, d)
	}
	rng := "unbounded"
	if r.Start > 0 {
		rng = fmt.Sprintf("rankStart=%d, rankEnd=%d", r.Start, r.End)
	}
	return fmt.Sprintf("Rank(rankType=[ROW_NUMBER], rankRange=[%s], partitionBy=[%s], orderBy=[%s], select=[%s])",
		rng, strings.Join(part, ", "), strings.Join(order, ", "), strings.Join(out.Names(), ", "))
}

func (r *Rank) prune(need []bool) (Node, map[int]int) {
	width := len(r.Input.Schema())
	inNeed := append([]bool(nil), need[:width]...)
	for _, k := range r.Partition {
		inNeed[k] = true
	}
	for _, k := range r.Order {
		inNeed[k.Index] = true
	}
	in, im := prune(r.Input, inNeed)
	c := *r
	c.Input = in
	c.Partition = nil
	for _, k := range r.Partition {
		c.Partition = append(c.Partition, im[k])
	}
	c.Order = nil
	for _, k := range r.Order {
		k.Index = im[k.Index]
		c.Order = append(c.Order, k)
	}
	m := map[int]int{}
	for k, v := range im {
		m[k] = v
	}
	if r.OutputRank {
		if !need[width] && r.Start > 0 {
			c.OutputRank = false
		} else {
			m[width] = len(in.Schema())
		}
	}
	return &c, m
}

func (r *Rank) physical(b *physBuilder, o *Operator) {
	in := b.build(r.Input)
	o.Spec = &RankSpec{Rank: r, InputUpdating: ModeOf(r.Input) == Updating}
	if o.Spec.(*RankSpec).InputUpdating {
		o.Spec.(*RankSpec).UpsertKey = updateStrategyKey(r)
	}
	if len(r.Partition) == 0 {
		o.Parallelism = 1
		o.Inputs = []Edge{{From: in, Partition: Global}}
		return
	}
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: in, Partition: Hash, Keys: r.Partition}}
}

// KindRank is the operator of a Rank node (TopN, deduplication).
const KindRank = "Rank"

// RankSpec keeps, per partition key, the rows of the rank range: only
// those over an append-only input (a row pushed out never comes back),
// every row over an updating one, so that the retraction of a row in the
// range brings the next one in (Flink's AppendOnlyTopNFunction and
// RetractableTopNFunction), except with UpsertKey (Flink's
// UpdatableTopNFunction): an updating input whose rows have an upsert key
// that includes the partition keys, and whose order keys only move a row
// up (updateStrategyKey), keeps only the first End rows too; a row's new
// version replaces the kept row of its upsert key, or enters as a new row
// would, and the retractions (-U) are ignored.
type RankSpec struct {
	Rank *Rank
	// InputUpdating says retractions arrive.
	InputUpdating bool
	// UpsertKey, when set (updating input), is the input's upsert key
	// (input columns) under the update strategy.
	UpsertKey []int
}

// Strategy names the strategy as EXPLAIN prints it.
func (s *RankSpec) Strategy() string {
	switch {
	case !s.InputUpdating:
		return "AppendOnly"
	case s.UpsertKey != nil:
		return "Update"
	}
	return "Retract"
}

// updateStrategyKey is the upsert key of r's updating input when r may use
// the update strategy, as Flink's RankProcessStrategy chooses it: the key
// includes the partition keys, and every order key is monotonic in the
// direction of the order (a DESC key never decreases, an ASC key never
// increases, or the key never changes); nil otherwise (the retracting
// strategy).
func updateStrategyKey(r *Rank) []int {
	key := UpsertKeyOf(r.Input)
	if len(key) == 0 || len(r.Order) == 0 {
		return nil
	}
	in := map[int]bool{}
	for _, k := range key {
		in[k] = true
	}
	for _, p := range r.Partition {
		if !in[p] {
			return nil
		}
	}
	sch := r.Input.Schema()
	for _, o := range r.Order {
		m := monotonicity(r.Input, o.Index)
		if m == constant {
			continue
		}
		if (m == increasing) != o.Desc {
			return nil
		}
		// A NULL becoming a value moves a row up only if NULLs are last.
		if o.NullsFirst && !sch[o.Index].Type.NotNull {
			return nil
		}
	}
	return key
}

// How a column of an updating node's rows changes when a row of its
// upsert key is updated (Flink's modified monotonicity).
const (
	notMonotonic = iota
	constant
	increasing
	decreasing
)

// monotonicity says how column col of n changes from a row's version to
// the next: a group aggregate over an append-only input keeps its keys
// (constant), its COUNTs and MAXs never decrease, its MINs never increase;
// projections pass a column through; anything else is not monotonic.
func monotonicity(n Node, col int) int {
	switch x := n.(type) {
	case *Project:
		if c, ok := x.Exprs[col].(*ColumnRef); ok {
			return monotonicity(x.Input, c.Index)
		}
	case *Aggregate:
		if ModeOf(x.Input) != AppendOnly {
			return notMonotonic
		}
		if col < len(x.Keys) {
			return constant
		}
		switch x.Aggs[col-len(x.Keys)].Func {
		case AggCount, AggMax:
			return increasing
		case AggMin:
			return decreasing
		}
	}
	return notMonotonic
}

func (*RankSpec) Kind() string { return KindRank }
func (s *RankSpec) Describe(o *Operator) string {
	d := describeRank(s.Rank, o.Schema)
	if ok, _, _ := s.Rank.Dedup(); ok {
		return d
	}
	strategy := s.Strategy()
	if s.UpsertKey != nil {
		in := s.Rank.Input.Schema()
		var names []string
		for _, k := range s.UpsertKey {
			names = append(names, in[k].Name)
		}
		strategy += "], upsertKey=[" + strings.Join(names, ", ")
	}
	return strings.Replace(d, "Rank(", "Rank(strategy=["+strategy+"], ", 1)
}
func (*RankSpec) KeepsKeyedState() bool { return true }

// Identity: the partition and order keys, the range, whether the row number
// is output, the strategy and (deduplication) which of equal rows wins.
func (s *RankSpec) Identity(w *IDWriter) {
	r := s.Rank
	w.Ints(r.Partition)
	w.Int(int64(len(r.Order)))
	for _, k := range r.Order {
		w.Int(int64(k.Index))
		w.Bool(k.Desc)
		w.Bool(k.NullsFirst)
	}
	w.Int(r.Start)
	w.Int(r.End)
	w.Bool(r.OutputRank)
	w.Bool(s.InputUpdating)
	_, keepLast, _ := r.Dedup()
	w.Bool(keepLast)
	if s.UpsertKey != nil {
		w.Ints(s.UpsertKey)
	}
}

// NewerFirst says a new row goes before the rows that order equal to it:
// a deduplication keeping the last row (the newest row wins a tie, as
// Flink's keep-last compares rowtime >= the kept one's).
func (s *RankSpec) NewerFirst() bool {
	ok, keepLast, _ := s.Rank.Dedup()
	return ok && keepLast
}

// bindOver binds the ROW_NUMBER() OVER (...) of a select list (fields):
// it returns input with a Rank over it and the scope extended by the row
// number, which the field then reads (binder.over). OVER aggregations
// bind to Over nodes (over.go).
func (b *binder) bindOver(sel *ast.SelectStmt, fields []selectField, input Node, sc *scope, grouped bool) (Node, *scope, error) {
	if hasOverAggregate(fields) {
		return b.bindOverAggregates(sel, fields, input, sc, grouped) // over.go
	}
	var r *Rank
	for _, f := range fields {
		e, ok := f.expr.(*ast.WindowFuncExpr)
		if !ok {
			continue
		}
		pos := b.pos(e)
		name := strings.ToUpper(e.Name)
		switch name {
		case "ROW_NUMBER":
		case "RANK", "DENSE_RANK":
			// Flink's streaming TopN and window TopN take ROW_NUMBER() only
			// (StreamExecRank, StreamExecWindowRank).
			return nil, nil, errAt(ErrUnsupported, pos, "use ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) with a filter on it (rn <= N): of rows that order equal it keeps the first to arrive",
				"%s() OVER is not supported: a TopN and a window TopN number rows with ROW_NUMBER() only, as in Flink", name)
		default:
			return nil, nil, errAt(ErrUnsupported, pos, "instead of "+name+"() OVER: an aggregate with GROUP BY, a window table function (TUMBLE, HOP, CUMULATE, SESSION), or ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) filtered by rn <= N",
				"OVER aggregations are not supported yet")
		}
		if r != nil {
			return nil, nil, errAt(ErrUnsupported, pos, "", "only one ROW_NUMBER() OVER per select list is supported")
		}
		if grouped {
			return nil, nil, errAt(ErrUnsupported, pos, "group in a subquery and number its rows in the query around it", "ROW_NUMBER() OVER in a query with GROUP BY or aggregates is not supported yet")
		}
		spec := &e.Spec
		if spec.Name.O != "" || spec.Ref.O != "" || spec.Frame != nil {
			return nil, nil, errAt(ErrUnsupported, pos, "write the window inline: OVER (PARTITION BY ... ORDER BY ...)", "ROW_NUMBER() OVER takes no named window and no frame")
		}
		if spec.OrderBy == nil || len(spec.OrderBy.Items) == 0 {
			return nil, nil, errAt(ErrUnsupported, pos, "add ORDER BY to the OVER clause", "ROW_NUMBER() OVER needs an ORDER BY")
		}
		r = &Rank{Input: input, RankName: f.name}
		if spec.PartitionBy != nil {
			for _, it := range spec.PartitionBy.Items {
				c, err := b.overColumn(it.Expr, sc, "PARTITION BY")
				if err != nil {
					return nil, nil, err
				}
				r.Partition = append(r.Partition, c)
			}
		}
		for _, it := range spec.OrderBy.Items {
			c, err := b.overColumn(it.Expr, sc, "ORDER BY")
			if err != nil {
				return nil, nil, err
			}
			nullsFirst := !it.Desc // Flink's default: NULLs are the smallest
			if first, ok := sql.NullsFirst(b.stmt, it); ok {
				nullsFirst = first
			}
			r.Order = append(r.Order, SortKey{Index: c, Desc: it.Desc, NullsFirst: nullsFirst})
		}
		r.OutputRank = true
		if r.RankName == "" {
			r.RankName = "rn"
		}
		ref := &ColumnRef{Index: len(input.Schema()), Name: r.RankName, T: types.T{Kind: types.BigInt, NotNull: true}}
		if b.over == nil {
			b.over = map[*ast.WindowFuncExpr]*ColumnRef{}
		}
		b.over[e] = ref
	}
	if r == nil {
		return input, sc, nil
	}
	nsc := &scope{cols: append(append([]scopeCol{}, sc.cols...), scopeCol{qual: "$over", name: "$" + r.RankName, t: types.T{Kind: types.BigInt, NotNull: true}, hidden: true})}
	return r, nsc, nil
}

// overColumn binds a PARTITION BY or ORDER BY item of OVER: a column.
func (b *binder) overColumn(e ast.ExprNode, sc *scope, clause string) (int, error) {
	x, err := b.bindExpr(e, sc, nil)
	if err != nil {
		return 0, err
	}
	c, ok := x.(*ColumnRef)
	if !ok {
		return 0, errAt(ErrUnsupported, b.pos(e), "compute it as a column in a subquery", "%s of OVER must name a column", clause)
	}
	return c.Index, nil
}

// rankFilters moves the conditions on a row number into its Rank's range
// and turns ORDER BY ... LIMIT over an unbounded input into a Rank.
func rankFilters(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		switch x := n.(type) {
		case *Filter:
			if r, ok := x.Input.(*Rank); ok && r.OutputRank {
				return absorbRankFilter(x, r)
			}
		case *Sort:
			if !IsBounded(x.Input) && x.Limit >= 0 {
				return &Rank{Input: x.Input, Order: x.Keys, Start: x.Offset + 1, End: x.Offset + x.Limit, FromLimit: true}
			}
		}
		return n
	})
}

// absorbRankFilter takes the conjuncts of f that bound r's row number.
func absorbRankFilter(f *Filter, r *Rank) Node {
	rn := len(r.Input.Schema())
	lo, hi := int64(1), int64(-1) // hi < 0: no upper bound
	if r.Start > 0 {
		lo, hi = r.Start, r.End
	}
	var rest []Expr
	for _, c := range conjunctsOf(f.Cond) {
		op, v, ok := rankBound(c, rn)
		if !ok {
			rest = append(rest, c)
			continue
		}
		lower := func(x int64) { lo = max(lo, x) }
		upper := func(x int64) {
			if hi < 0 || x < hi {
				hi = x
			}
		}
		switch op {
		case "<=":
			upper(v)
		case "<":
			upper(v - 1)
		case "=":
			lower(v)
			upper(v)
		case ">=":
			lower(v)
		case ">":
			lower(v + 1)
		}
	}
	if hi < 0 {
		return f // no upper bound: not a TopN (an error at checkModes)
	}
	c := *r
	c.Start, c.End = lo, hi
	if c.End < c.Start {
		c.Start, c.End = 1, 0 // empty
	}
	if len(rest) == 0 {
		return &c
	}
	cond := rest[0]
	for _, x := range rest[1:] {
		cond = and(cond, x)
	}
	return &Filter{Input: &c, Cond: cond}
}

// rankBound matches rn OP literal (or literal OP rn), OP a comparison.
func rankBound(e Expr, rn int) (string, int64, bool) {
	c, ok := e.(*Call)
	if !ok || len(c.Args) != 2 {
		return "", 0, false
	}
	flip := map[string]string{"<=": ">=", "<": ">", "=": "=", ">=": "<=", ">": "<"}
	if _, ok := flip[c.Func]; !ok {
		return "", 0, false
	}
	col, lit, op := c.Args[0], c.Args[1], c.Func
	if _, isCol := lit.(*ColumnRef); isCol {
		col, lit, op = lit, col, flip[op]
	}
	ref, ok := col.(*ColumnRef)
	if !ok || ref.Index != rn {
		return "", 0, false
	}
	if cast, ok := lit.(*Cast); ok {
		lit = cast.Arg
	}
	l, ok := lit.(*Literal)
	if !ok {
		return "", 0, false
	}
	switch v := l.Value.(type) {
	case int64:
		return op, v, true
	case int32:
		return op, int64(v), true
	}
	return "", 0, false
}

// checkRankNode refuses a row number without an upper bound over an
// unbounded input (Flink plans it as an OVER aggregation, which needs a
// time attribute order).
func checkRankNode(n Node, stmt sql.Statement) error {
	r, ok := n.(*Rank)
	if !ok || r.Start > 0 || IsBounded(r.Input) {
		return nil
	}
	return errAt(ErrUnsupported, stmt.Pos(), "filter on it in the query around it: SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn <= N",
		"ROW_NUMBER() OVER on an unbounded input needs an upper bound on its result (the TopN pattern)")
}
