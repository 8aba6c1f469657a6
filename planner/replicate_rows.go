package planner

import (
	"strings"

	"github.com/streamsql/streamsql/types"
)

// ReplicateRows emits each input row's first Width columns Count times (a
// BIGINT over the input row; none when it is NULL, zero or negative):
// Flink's REPLICATE_ROWS table function, which its planner puts after the
// aggregate of INTERSECT ALL and EXCEPT ALL. Distinct says Count is 0 or 1,
// so the output rows are distinct.
//
// Over an updating input a retraction of a row retracts its copies. The
// runtime emits +I for what it adds and -D for what it retracts (never
// -U/+U, whose pairs would not match up); for an input row's update (-U
// then +U of the same group of the aggregate below, its first Width
// columns) it emits only the difference of the two counts.
type ReplicateRows struct {
	Input    Node
	Count    Expr
	Width    int
	Distinct bool
}

func (r *ReplicateRows) Schema() types.Schema {
	return append(types.Schema(nil), r.Input.Schema()[:r.Width]...)
}
func (r *ReplicateRows) Children() []Node { return []Node{r.Input} }
func (r *ReplicateRows) WithChildren(ch []Node) Node {
	c := *r
	c.Input = ch[0]
	return &c
}
func (r *ReplicateRows) Expressions() []Expr { return []Expr{r.Count} }
func (r *ReplicateRows) WithExpressions(es []Expr) Node {
	c := *r
	c.Count = es[0]
	return &c
}

// Mode: its input's (an updating input gives retractions of copies).
func (*ReplicateRows) Mode(in []Mode) Mode { return anyUpdating(in) }

// UpsertKey: all its columns when the rows are distinct (and the input's
// key is among them); else none, since a row may come several times.
func (r *ReplicateRows) UpsertKey(in [][]int) []int {
	if !r.Distinct || in[0] == nil {
		return nil
	}
	for _, k := range in[0] {
		if k >= r.Width {
			return nil
		}
	}
	out := make([]int, r.Width)
	for i := range out {
		out[i] = i
	}
	return out
}

func (r *ReplicateRows) Describe() string {
	return "ReplicateRows(times=[" + r.Count.String() + "], select=[" + strings.Join(r.Schema().Names(), ", ") + "])"
}

// prune: the copies depend on every input column (the set operation's
// grouping), so the input keeps all of them.
func (r *ReplicateRows) prune([]bool) (Node, map[int]int) {
	all := make([]bool, len(r.Input.Schema()))
	for i := range all {
		all[i] = true
	}
	in, im := prune(r.Input, all)
	in, im = narrow(in, all, im)
	c := *r
	c.Input, c.Count = in, remapColumns(r.Count, im)
	return &c, identityMap(r.Width)
}

// physical: beside its input (a forward edge), stateless.
func (r *ReplicateRows) physical(b *physBuilder, o *Operator) {
	in := b.build(r.Input)
	spec := &ReplicateRowsSpec{Count: r.Count, Width: r.Width}
	if a, ok := r.Input.(*Aggregate); ok && len(a.Keys) == r.Width {
		spec.NetUpdates = true
	}
	o.Spec, o.Parallelism = spec, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// KindReplicateRows is the kind of ReplicateRows' operator.
const KindReplicateRows = "ReplicateRows"

// ReplicateRowsSpec is ReplicateRows as the runtime runs it: each input row
// gives Count (evaluated over the row) copies of its first Width columns,
// +I for an added row and -D for a retracted one. With NetUpdates the input
// is a group aggregate keyed by its first Width columns, so a -U directly
// followed by a +U is one group's change: the operator emits the difference
// of their counts (+I or -D copies), nothing when they are equal.
type ReplicateRowsSpec struct {
	Count      Expr
	Width      int
	NetUpdates bool
}

func (*ReplicateRowsSpec) Kind() string { return KindReplicateRows }
func (s *ReplicateRowsSpec) Describe(o *Operator) string {
	return "ReplicateRows(times=[" + describeOver(s.Count, o.Inputs[0].From.Schema) + "], select=[" + strings.Join(o.Schema.Names(), ", ") + "])"
}

// Identity: what it counts and emits (it keeps no state).
func (s *ReplicateRowsSpec) Identity(w *IDWriter) {
	w.Expr(s.Count)
	w.Int(int64(s.Width))
	w.Bool(s.NetUpdates)
}
