package planner

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Node is a logical plan node: a relation with a schema. Nodes are treated
// as immutable once built; rules return new nodes (Transform, transform.go).
//
// Every node kind says all it is here: a kind that does not implement one
// of these (its changelog mode, say) does not compile as a Node.
type Node interface {
	Schema() types.Schema
	// Children are the node's inputs; WithChildren returns a copy of the
	// node with them replaced (same number, same order).
	Children() []Node
	WithChildren(ch []Node) Node
	// Expressions are the scalar expressions the node evaluates over its input's
	// rows, in a fixed order; WithExpressions returns a copy of the node with
	// them replaced (same number, same order, same types). Expressions over
	// something else (a scan's computed columns, over table columns) are
	// not among them.
	Expressions() []Expr
	WithExpressions(es []Expr) Node
	// Mode is the changelog mode of the node's output, given its inputs'
	// (in Children order); ModeOf computes it for a tree.
	Mode(inputs []Mode) Mode
	// UpsertKey is the output columns that identify a row of the node's
	// changelog (the changes of one key replace one another), given its
	// inputs' (in Children order; nil: none known); nil when none is known,
	// empty when the output has at most one row. UpsertKeyOf computes it
	// for a tree.
	UpsertKey(inputs [][]int) []int
	// Describe is the node's line in the logical plan of EXPLAIN.
	Describe() string
	// prune restricts the node to the columns marked in need (rule_prune.go).
	prune(need []bool) (Node, map[int]int)
	// physical fills in o's Spec, Parallelism and Inputs (building the
	// inputs with b.build): the node's physical translation.
	physical(b *physBuilder, o *Operator)
}

// Scan reads a catalog table.
type Scan struct {
	Table *catalog.Table
	// Fields are the table columns read, in order (projection pushdown).
	Fields []int
	// Bounded says whether the scan ends (from the connector registry).
	Bounded bool
	// Updating says the connector reads a changelog (-U/+U/-D rows).
	Updating bool
	// Watermark is the table's bound WATERMARK FOR clause (nil: none).
	Watermark *Watermark
	// Computed are the expressions of the table's computed columns by
	// table column index, over table column indexes of physical columns
	// (nil: no computed column; a nil entry: a physical column or the
	// PROCTIME() column). See computed.go.
	Computed []Expr
	// Proctime is the table column index of the PROCTIME() column, the
	// table's processing-time attribute; -1 when it has none.
	Proctime int
	// RowFields narrows ROW columns the plan reads only through field
	// accesses (rule_rowfields.go): table column index -> the positions
	// of the fields read, in order. The scan's schema has those fields
	// alone.
	RowFields map[int][]int
}

// Values is a literal relation (VALUES, or a SELECT without FROM).
type Values struct {
	Rows [][]Expr
	Cols types.Schema
}

// Filter keeps the rows for which Cond is TRUE.
type Filter struct {
	Input Node
	Cond  Expr
}

// Project computes Exprs over each input row.
type Project struct {
	Input Node
	Exprs []Expr
	Names []string
}

// AggFunc names an aggregate function.
type AggFunc string

// The aggregate functions.
const (
	AggCount AggFunc = "COUNT"
	AggSum   AggFunc = "SUM"
	AggMin   AggFunc = "MIN"
	AggMax   AggFunc = "MAX"
	AggAvg   AggFunc = "AVG"

	AggStddevPop  AggFunc = "STDDEV_POP"
	AggStddevSamp AggFunc = "STDDEV_SAMP"
	AggVarPop     AggFunc = "VAR_POP"
	AggVarSamp    AggFunc = "VAR_SAMP"
	AggBoolAnd    AggFunc = "BOOL_AND"
	AggBoolOr     AggFunc = "BOOL_OR"
	AggFirstValue AggFunc = "FIRST_VALUE"
	AggLastValue  AggFunc = "LAST_VALUE"
	AggListAgg    AggFunc = "LISTAGG"
	// AggJSONArrayAgg and AggJSONObjectAgg aggregate the JSON text of
	// JSON_ARRAY(v) and JSON_OBJECT(k, v) of each row (their argument, with
	// the ON NULL clause) into one array or object.
	AggJSONArrayAgg  AggFunc = "JSON_ARRAYAGG"
	AggJSONObjectAgg AggFunc = "JSON_OBJECTAGG"
)

// AggCall is one aggregate of an Aggregate node.
type AggCall struct {
	Func AggFunc
	// Arg is the input column aggregated; -1 for COUNT(*).
	Arg      int
	Distinct bool
	// T is the result type; ArgT the argument's type.
	T, ArgT types.T
	Name    string
	// Text is the call as written and where, for runtime errors:
	// "SUM(v) at 3:8".
	Text string
	// HasFilter: FILTER (WHERE ...) applies; Filter is the input column
	// (BOOLEAN) of its condition, and only rows where it is TRUE count.
	HasFilter bool
	Filter    int
	// Separator is LISTAGG's separator (default ",").
	Separator string
}

// Aggregate groups its input by Keys (input column indexes) and computes
// Aggs per group. Its output is the key columns followed by the aggregates.
// With no keys it is a global aggregate producing one row.
type Aggregate struct {
	Input Node
	Keys  []int
	Aggs  []AggCall
	cols  types.Schema
	// emitAt is set when the query asks for EMIT ON WINDOW CLOSE (emit.go):
	// the aggregate must become a WindowAggregate.
	emitAt *sql.Pos
	// stateTTL is the STATE_TTL hint naming the aggregate's input (nil:
	// the job's TTL; state_ttl.go).
	stateTTL *ttlHint
	// setOp names the set operation the aggregate computes ("UNION",
	// "INTERSECT ALL"; setop.go), for messages; "" for a GROUP BY.
	setOp string
}

// Union concatenates inputs of the same row type (UNION ALL). Its columns
// are the first input's, nullable where any input's is.
type Union struct {
	Inputs []Node
}

// SortKey orders by one column.
type SortKey struct {
	Index      int
	Desc       bool
	NullsFirst bool
}

// Sort orders a bounded input and keeps rows [Offset, Offset+Limit). With
// no keys it is a plain LIMIT; Limit < 0 means no limit.
type Sort struct {
	Input  Node
	Keys   []SortKey
	Limit  int64
	Offset int64
}

// Sink writes its input into a table; a nil Table collects the rows for the
// client (an ad-hoc SELECT).
type Sink struct {
	Input Node
	Table *catalog.Table
	// Name labels the sink in EXPLAIN and job listings.
	Name string
}

func (s *Scan) Schema() types.Schema {
	out := make(types.Schema, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = s.Table.Columns[f]
		if keep, ok := s.RowFields[f]; ok {
			out[i].Type = narrowType(out[i].Type, keep)
		}
	}
	return out
}
func (v *Values) Schema() types.Schema { return v.Cols }
func (f *Filter) Schema() types.Schema { return f.Input.Schema() }
func (p *Project) Schema() types.Schema {
	out := make(types.Schema, len(p.Exprs))
	for i, e := range p.Exprs {
		out[i] = types.Column{Name: p.Names[i], Type: e.Type()}
	}
	return out
}
func (a *Aggregate) Schema() types.Schema {
	if a.cols == nil {
		in := a.Input.Schema()
		for _, k := range a.Keys {
			a.cols = append(a.cols, in[k])
		}
		for _, c := range a.Aggs {
			a.cols = append(a.cols, types.Column{Name: c.Name, Type: c.T})
		}
	}
	return a.cols
}
func (u *Union) Schema() types.Schema {
	s := u.Inputs[0].Schema()
	copied := false
	for _, in := range u.Inputs[1:] {
		for i, c := range in.Schema() {
			if s[i].Type.NotNull && !c.Type.NotNull {
				if !copied {
					s, copied = append(types.Schema(nil), s...), true
				}
				s[i].Type.NotNull = false
			}
		}
	}
	return s
}
func (s *Sort) Schema() types.Schema { return s.Input.Schema() }
func (s *Sink) Schema() types.Schema { return s.Input.Schema() }

func (*Scan) Children() []Node        { return nil }
func (*Values) Children() []Node      { return nil }
func (f *Filter) Children() []Node    { return []Node{f.Input} }
func (p *Project) Children() []Node   { return []Node{p.Input} }
func (a *Aggregate) Children() []Node { return []Node{a.Input} }
func (u *Union) Children() []Node     { return u.Inputs }
func (s *Sort) Children() []Node      { return []Node{s.Input} }
func (s *Sink) Children() []Node      { return []Node{s.Input} }

func (s *Scan) WithChildren([]Node) Node      { c := *s; return &c }
func (v *Values) WithChildren([]Node) Node    { c := *v; return &c }
func (f *Filter) WithChildren(ch []Node) Node { c := *f; c.Input = ch[0]; return &c }
func (p *Project) WithChildren(ch []Node) Node {
	c := *p
	c.Input = ch[0]
	return &c
}
func (a *Aggregate) WithChildren(ch []Node) Node {
	c := *a
	c.Input, c.cols = ch[0], nil
	return &c
}
func (u *Union) WithChildren(ch []Node) Node { return &Union{Inputs: ch} }
func (s *Sort) WithChildren(ch []Node) Node  { c := *s; c.Input = ch[0]; return &c }
func (s *Sink) WithChildren(ch []Node) Node  { c := *s; c.Input = ch[0]; return &c }

// Expressions: a scan's watermark and computed columns are over table columns,
// not among its Expressions.
func (*Scan) Expressions() []Expr                { return nil }
func (s *Scan) WithExpressions([]Expr) Node      { return s }
func (f *Filter) Expressions() []Expr            { return []Expr{f.Cond} }
func (f *Filter) WithExpressions(es []Expr) Node { c := *f; c.Cond = es[0]; return &c }
func (p *Project) Expressions() []Expr           { return p.Exprs }
func (p *Project) WithExpressions(es []Expr) Node {
	c := *p
	c.Exprs = es
	return &c
}

// Expressions are the rows' expressions, row after row.
func (v *Values) Expressions() []Expr {
	var out []Expr
	for _, r := range v.Rows {
		out = append(out, r...)
	}
	return out
}
func (v *Values) WithExpressions(es []Expr) Node {
	c := *v
	c.Rows = make([][]Expr, len(v.Rows))
	for i, r := range v.Rows {
		c.Rows[i], es = es[:len(r):len(r)], es[len(r):]
	}
	return &c
}

// Expressions: an aggregate's calls read input columns by index (AggCall.Arg).
func (*Aggregate) Expressions() []Expr           { return nil }
func (a *Aggregate) WithExpressions([]Expr) Node { return a }
func (*Union) Expressions() []Expr               { return nil }
func (u *Union) WithExpressions([]Expr) Node     { return u }
func (*Sort) Expressions() []Expr                { return nil }
func (s *Sort) WithExpressions([]Expr) Node      { return s }
func (*Sink) Expressions() []Expr                { return nil }
func (s *Sink) WithExpressions([]Expr) Node      { return s }

// IsBounded reports whether every source under n ends.
func IsBounded(n Node) bool {
	if s, ok := n.(*Scan); ok {
		return s.Bounded
	}
	for _, c := range n.Children() {
		if !IsBounded(c) {
			return false
		}
	}
	return true
}
