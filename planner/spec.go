package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
)

// Spec is what a physical operator computes: one type per operator kind.
// The runtime builds the operator from its spec (exec keeps one constructor
// per Kind); capabilities a kind may have beyond Spec are optional
// interfaces (see KeyedStateful).
type Spec interface {
	// Kind names the operator kind; the runtime looks its constructor up by it.
	Kind() string
	// Describe is the operator's one-line EXPLAIN text. It never enters the
	// operator's id (identity.go).
	Describe(o *Operator) string
	// Identity writes what the operator computes (the parameters that give
	// its state its meaning) into w. Together with the kind and the input
	// edges it makes the operator's id (identity.go).
	Identity(w *IDWriter)
}

// KeyedStateful is implemented by the specs of operators that keep keyed
// state: the runtime opens (and restores) a store for each of their subtasks.
type KeyedStateful interface {
	Spec
	KeepsKeyedState() bool
}

// HasKeyedState reports whether the operator keeps keyed state.
func (o *Operator) HasKeyedState() bool {
	k, ok := o.Spec.(KeyedStateful)
	return ok && k.KeepsKeyedState()
}

// The kinds of the physical operators.
const (
	KindSource          = "Source"
	KindValues          = "Values"
	KindCalc            = "Calc"
	KindGroupAggregate  = "GroupAggregate"
	KindUnion           = "Union"
	KindSort            = "Sort"
	KindSink            = "Sink"
	KindWindowTVF       = "WindowTableFunction"
	KindWindowAggregate = "WindowAggregate"
)

// SourceSpec reads a catalog table through its connector.
type SourceSpec struct{ Scan *Scan }

func (*SourceSpec) Kind() string { return KindSource }
func (s *SourceSpec) Describe(o *Operator) string {
	return fmt.Sprintf("Source: %s(fields=[%s]%s)", s.Scan.Table.Name, strings.Join(o.Schema.Names(), ", "), watermarkSuffix(s.Scan)+proctimeSuffix(s.Scan)+rowFieldsSuffix(s.Scan))
}

// Identity: the table (by name, not its options) and the fields read. Not
// the table's watermark: a new delay keeps the positions and the state of
// the windows downstream.
func (s *SourceSpec) Identity(w *IDWriter) {
	w.Table(s.Scan.Table)
	w.Ints(s.Scan.Fields)
}

// ValuesSpec emits literal rows.
type ValuesSpec struct{ Rows [][]Expr }

func (*ValuesSpec) Kind() string { return KindValues }
func (v *ValuesSpec) Describe(o *Operator) string {
	return fmt.Sprintf("Values(tuples=%d, fields=[%s])", len(v.Rows), strings.Join(o.Schema.Names(), ", "))
}
func (v *ValuesSpec) Identity(w *IDWriter) {
	w.Int(int64(len(v.Rows)))
	for _, r := range v.Rows {
		w.Exprs(r)
	}
}

// CalcSpec filters (Filter may be nil) and projects each row.
type CalcSpec struct {
	Filter      Expr
	Projections []Expr
}

func (*CalcSpec) Kind() string { return KindCalc }
func (c *CalcSpec) Describe(o *Operator) string {
	var sel []string
	for i, e := range c.Projections {
		s := e.String()
		if r, ok := e.(*ColumnRef); !ok || r.Name != o.Schema[i].Name {
			s += " AS " + o.Schema[i].Name
		}
		sel = append(sel, s)
	}
	d := "Calc(select=[" + strings.Join(sel, ", ") + "]"
	if c.Filter != nil {
		d += ", where=[" + c.Filter.String() + "]"
	}
	return d + ")"
}

// Identity: the expressions (canonical form: column names and aliases are
// not part of it).
func (c *CalcSpec) Identity(w *IDWriter) {
	if c.Filter != nil {
		w.Expr(c.Filter)
	} else {
		w.Str("")
	}
	w.Exprs(c.Projections)
}

// GroupAggSpec groups its input by the aggregate's keys and keeps one
// accumulator row per key.
type GroupAggSpec struct {
	Agg *Aggregate
	// InputUpdating says retractions arrive.
	InputUpdating bool
	// TTL: a group not written for this long (processing time) is dropped
	// ('table.exec.state.ttl', or the STATE_TTL hint naming the
	// aggregate's input; 0: never). Not part of the identity: a changed
	// TTL keeps the state.
	TTL time.Duration
	// MiniBatchLatency and MiniBatchSize (both positive, or both zero: no
	// mini-batches) bound a mini-batch: the aggregate folds its input as
	// it comes but emits each changed group's change once per mini-batch,
	// when MiniBatchLatency has passed since its first row, when it holds
	// MiniBatchSize rows, before a checkpoint barrier and at the end of
	// the input ('table.exec.mini-batch.*'). Not part of the identity.
	MiniBatchLatency time.Duration
	MiniBatchSize    int
}

func (*GroupAggSpec) Kind() string { return KindGroupAggregate }
func (g *GroupAggSpec) Describe(*Operator) string {
	d := describeAgg(g.Agg)
	if g.TTL > 0 {
		d = d[:len(d)-1] + ", stateTtl=[" + g.TTL.String() + "])"
	}
	if g.MiniBatchSize > 0 {
		d = d[:len(d)-1] + fmt.Sprintf(", miniBatch=[%s, %d rows])", g.MiniBatchLatency, g.MiniBatchSize)
	}
	return d
}
func (g *GroupAggSpec) KeepsKeyedState() bool { return true }
func (g *GroupAggSpec) Identity(w *IDWriter) {
	w.Ints(g.Agg.Keys)
	w.AggCalls(g.Agg.Aggs)
	w.Bool(g.InputUpdating)
}

// UnionSpec merges its inputs.
type UnionSpec struct{}

func (*UnionSpec) Kind() string                { return KindUnion }
func (*UnionSpec) Describe(o *Operator) string { return fmt.Sprintf("Union(inputs=%d)", len(o.Inputs)) }
func (*UnionSpec) Identity(*IDWriter)          {}

// SortSpec sorts a bounded input and keeps a range of it (or only limits).
type SortSpec struct {
	Sort *Sort
	// InputUpdating says retractions arrive.
	InputUpdating bool
}

func (*SortSpec) Kind() string                { return KindSort }
func (s *SortSpec) Describe(*Operator) string { return describeSort(s.Sort) }
func (s *SortSpec) Identity(w *IDWriter) {
	w.Int(int64(len(s.Sort.Keys)))
	for _, k := range s.Sort.Keys {
		w.Int(int64(k.Index))
		w.Bool(k.Desc)
		w.Bool(k.NullsFirst)
	}
	w.Int(s.Sort.Limit)
	w.Int(s.Sort.Offset)
	w.Bool(s.InputUpdating)
}

// SinkSpec writes into Table through its connector; a nil Table hands the
// rows to the client.
type SinkSpec struct {
	Table *catalog.Table
	// Name labels the sink in job listings.
	Name string
}

func (*SinkSpec) Kind() string { return KindSink }
func (s *SinkSpec) Describe(o *Operator) string {
	if s.Table == nil {
		return fmt.Sprintf("Sink: collect(fields=[%s])", strings.Join(o.Schema.Names(), ", "))
	}
	return fmt.Sprintf("Sink: %s(connector=%s, fields=[%s])", s.Table.Name, s.Table.Connector, strings.Join(o.Schema.Names(), ", "))
}

// Identity: the table written (by name, not its options).
func (s *SinkSpec) Identity(w *IDWriter) {
	if s.Table == nil {
		w.Str("collect")
		return
	}
	w.Table(s.Table)
}

// WindowTVFSpec assigns windows to rows.
type WindowTVFSpec struct{ TVF *WindowTVF }

func (*WindowTVFSpec) Kind() string                { return KindWindowTVF }
func (t *WindowTVFSpec) Describe(*Operator) string { return describeWindowNode(t.TVF) }
func (t *WindowTVFSpec) Identity(w *IDWriter)      { w.Window(t.TVF.Window) }

// WindowAggSpec aggregates rows per window and key (TUMBLE, HOP, CUMULATE
// or SESSION windows). Its late records leave on the edges marked Late.
type WindowAggSpec struct{ Agg *WindowAggregate }

func (*WindowAggSpec) Kind() string                        { return KindWindowAggregate }
func (a *WindowAggSpec) Describe(*Operator) string         { return describeWindowNode(a.Agg) }
func (a *WindowAggSpec) KeepsKeyedState() bool             { return true }
func (a *WindowAggSpec) lateRecords() (*LateRecords, Node) { return a.Agg.Late, a.Agg.Input }
func (a *WindowAggSpec) Identity(w *IDWriter) {
	w.Window(a.Agg.Window)
	w.Ints(a.Agg.Keys)
	w.AggCalls(a.Agg.Aggs)
	w.Bool(a.Agg.EmitOnWindowClose)
	// Not where late records go: routing them keeps the windows' state
	// (the side output's operators have ids of their own).
}
