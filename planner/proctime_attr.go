package planner

import (
	"github.com/streamsql/streamsql/types"
)

// AddProctime appends a processing-time attribute to its input's rows:
// PROCTIME() in the select list of a view or subquery (SELECT *, PROCTIME()
// AS p_time FROM bid), bound as a column of this node under the select
// list. The column is the wall clock of the subtask when the row passed,
// at millisecond precision (ProctimeType), never going back within the
// subtask; rows of one batch share it.
//
// Watermarks: the node's output carries the clock as its watermark, in
// place of its input's (an event-time WATERMARK of the table below), so a
// processing-time window over the column fires once the clock passed its
// end, as over a table's PROCTIME() column (proctime.go). Past the node no
// column is a row-time attribute. Pruning drops the node when nothing
// reads the column, and the input's watermarks then flow as before.
type AddProctime struct {
	Input Node
	// Name is the column's name in EXPLAIN.
	Name string
}

// proctimeColName names the column AddProctime appends in the binder's
// scope: not a name a query can write unquoted.
const proctimeColName = "$proctime"

func (a *AddProctime) Schema() types.Schema {
	return append(append(types.Schema(nil), a.Input.Schema()...), types.Column{Name: a.Name, Type: ProctimeType()})
}
func (a *AddProctime) Children() []Node { return []Node{a.Input} }
func (a *AddProctime) WithChildren(ch []Node) Node {
	c := *a
	c.Input = ch[0]
	return &c
}
func (a *AddProctime) Expressions() []Expr         { return nil }
func (a *AddProctime) WithExpressions([]Expr) Node { return a }

// Mode: its input's (each row keeps its op).
func (*AddProctime) Mode(in []Mode) Mode { return anyUpdating(in) }

// UpsertKey: its input's (the column is added to each row).
func (*AddProctime) UpsertKey(in [][]int) []int { return in[0] }

func (a *AddProctime) Describe() string { return "AddProctime(" + a.Name + "=[PROCTIME()])" }

// prune: without its column the node is dropped; else the input keeps
// what is needed of it.
func (a *AddProctime) prune(need []bool) (Node, map[int]int) {
	nIn := len(a.Input.Schema())
	in, im := prune(a.Input, append([]bool(nil), need[:nIn]...))
	if !need[nIn] {
		return in, im
	}
	m := map[int]int{}
	for k, v := range im {
		m[k] = v
	}
	m[nIn] = len(in.Schema())
	return &AddProctime{Input: in, Name: a.Name}, m
}

// physical: beside its input (a forward edge), stateless.
func (a *AddProctime) physical(b *physBuilder, o *Operator) {
	in := b.build(a.Input)
	o.Spec, o.Parallelism = &AddProctimeSpec{}, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// KindAddProctime is the kind of AddProctime's operator.
const KindAddProctime = "AddProctime"

// AddProctimeSpec is AddProctime as the runtime runs it: each batch gets
// its last column filled with the subtask's clock, and the clock is the
// output's watermark (the input's watermarks are not forwarded).
type AddProctimeSpec struct{}

func (*AddProctimeSpec) Kind() string { return KindAddProctime }
func (*AddProctimeSpec) Describe(o *Operator) string {
	return "AddProctime(" + o.Schema[len(o.Schema)-1].Name + "=[PROCTIME()])"
}

// Identity: the kind says it all (it keeps no state).
func (*AddProctimeSpec) Identity(*IDWriter) {}

// bindProctime adds the column of AddProctime to input (scope sc) when a
// field of the select list is PROCTIME(), and points b.proctime at it.
// Not in a select list that aggregates, whose rows are not the input's.
func (b *binder) bindProctime(fields []selectField, input Node, sc *scope, needAgg bool) (Node, *scope, error) {
	for _, f := range fields {
		if f.expr == nil || !IsProctimeCall(f.expr) {
			continue
		}
		if needAgg {
			return nil, nil, errAt(ErrUnsupported, b.pos(f.expr), "add PROCTIME() in a subquery and aggregate over it: SELECT ... FROM (SELECT *, PROCTIME() AS pt FROM t) GROUP BY ...",
				"PROCTIME() in the select list of an aggregation is not supported")
		}
		name := f.name
		if name == "" {
			name = "PROCTIME()"
		}
		a := &AddProctime{Input: input, Name: name}
		cols := append(append([]scopeCol(nil), sc.cols...), scopeCol{name: proctimeColName, t: ProctimeType()})
		b.proctime = &ColumnRef{Index: len(cols) - 1, Name: name, T: ProctimeType()}
		return a, &scope{cols: cols}, nil
	}
	return input, sc, nil
}
