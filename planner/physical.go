package planner

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// OpKind is the kind of a physical operator.
type OpKind uint8

// The physical operators.
const (
	OpSource OpKind = iota
	OpValues
	OpCalc
	OpGroupAggregate
	OpUnion
	OpSort
	OpSink
	OpWindowTVF       // window table function (window.go)
	OpWindowAggregate // window aggregation (window.go)
)

var opKindNames = [...]string{"Source", "Values", "Calc", "GroupAggregate", "Union", "Sort", "Sink", "WindowTableFunction", "WindowAggregate"}

func (k OpKind) String() string { return opKindNames[k] }

// Partitioning says how an edge routes rows from the upstream subtasks to
// the downstream ones.
type Partitioning uint8

const (
	// Forward sends subtask i's output to subtask i (same parallelism).
	Forward Partitioning = iota
	// Hash sends each row to the subtask owning its key's key group.
	Hash
	// Rebalance spreads batches round-robin.
	Rebalance
	// Global sends everything to subtask 0 (a parallelism-1 operator).
	Global
	// Broadcast sends everything to every subtask.
	Broadcast
)

func (p Partitioning) String() string {
	return [...]string{"FORWARD", "HASH", "REBALANCE", "GLOBAL", "BROADCAST"}[p]
}

// Edge connects an operator to one of its inputs.
type Edge struct {
	From      *Operator
	Partition Partitioning
	// Keys are the columns of From's output hashed by a Hash edge.
	Keys []int
	// Late marks a window aggregate's side output: the edge carries the
	// records From found late (rows of its input, with the schema of
	// From.WindowAgg.Input), not From's output (late.go).
	Late bool
}

// Operator is one vertex of the physical DAG. Exactly the fields of its
// Kind are set.
type Operator struct {
	// ID is stable across plannings of the same query: derived from the
	// operator's kind, its parameters and its inputs' ids, so that state in a
	// savepoint finds its operator again in a changed query.
	ID          string
	Kind        OpKind
	Parallelism int
	Schema      types.Schema
	Mode        Mode
	Inputs      []Edge

	Scan   *Scan   // OpSource
	Values *Values // OpValues
	// Filter (may be nil) and Projections: OpCalc.
	Filter      Expr
	Projections []Expr
	Agg         *Aggregate // OpGroupAggregate
	// InputUpdating tells an aggregate or sort that retractions arrive.
	InputUpdating bool
	Sort          *Sort // OpSort
	Sink          *Sink // OpSink
	// WindowTVF and WindowAgg: OpWindowTVF, OpWindowAggregate.
	WindowTVF *WindowTVF
	WindowAgg *WindowAggregate

	desc string
}

// Name is the operator's one-line description (as EXPLAIN prints it).
func (o *Operator) Name() string { return o.desc }

// Graph is a physical plan: operators in topological order (inputs first).
// Several sinks may share operators (EXECUTE STATEMENT SET).
type Graph struct {
	Operators []*Operator
	// Bounded is true when every source ends, so the job ends.
	Bounded bool
	// MaxParallelism is the number of key groups of hash edges and keyed state.
	MaxParallelism int
}

// Sinks returns the sink operators.
func (g *Graph) Sinks() []*Operator {
	var out []*Operator
	for _, o := range g.Operators {
		if o.Kind == OpSink {
			out = append(out, o)
		}
	}
	return out
}

// Physical lays logical plans rooted at sinks out as one operator DAG.
// Identical subtrees (the same scan feeding two INSERTs of a statement set)
// become one operator.
func (p *Planner) Physical(sinks []*Sink) (*Graph, error) {
	par, err := p.Parallelism()
	if err != nil {
		return nil, err
	}
	maxPar, err := p.MaxParallelism()
	if err != nil {
		return nil, err
	}
	if par > maxPar {
		return nil, fmt.Errorf("'parallelism.default' (%d) exceeds 'pipeline.max-parallelism' (%d)", par, maxPar)
	}
	b := &physBuilder{par: par, memo: map[string]*Operator{}, late: map[string][]Edge{}, g: &Graph{Bounded: true, MaxParallelism: maxPar}}
	for _, s := range sinks {
		b.build(s)
		if !IsBounded(s) {
			b.g.Bounded = false
		}
	}
	if err := b.finishLate(sinks); err != nil {
		return nil, err
	}
	return b.g, nil
}

type physBuilder struct {
	par  int
	memo map[string]*Operator
	g    *Graph
	// late are the streams of late records bound for each late-records
	// table (by lower-case name), lateTables those tables in order (late.go).
	late       map[string][]Edge
	lateTables []*catalog.Table
}

func (b *physBuilder) add(o *Operator, key string) *Operator {
	h := sha1.New()
	h.Write([]byte(o.Kind.String() + "|" + o.desc))
	for _, in := range o.Inputs {
		h.Write([]byte("|" + in.From.ID + in.Partition.String()))
		if in.Late {
			h.Write([]byte("|late"))
		}
	}
	o.ID = hex.EncodeToString(h.Sum(nil))[:16]
	b.memo[key] = o
	b.g.Operators = append(b.g.Operators, o)
	return o
}

func (b *physBuilder) edge(from *Operator, par int) Edge {
	if from.Parallelism == par {
		return Edge{From: from, Partition: Forward}
	}
	if par == 1 {
		return Edge{From: from, Partition: Global}
	}
	return Edge{From: from, Partition: Rebalance}
}

func (b *physBuilder) build(n Node) *Operator {
	key := explainTree(n)
	if o, ok := b.memo[key]; ok {
		return o
	}
	o := &Operator{Schema: n.Schema(), Mode: ModeOf(n)}
	switch x := n.(type) {
	case *Scan:
		o.Kind, o.Scan, o.Parallelism = OpSource, x, b.par
	case *Values:
		o.Kind, o.Values, o.Parallelism = OpValues, x, 1
	case *Filter:
		in := b.build(x.Input)
		o.Kind, o.Filter, o.Parallelism = OpCalc, x.Cond, in.Parallelism
		for i, c := range x.Schema() {
			o.Projections = append(o.Projections, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		}
		o.Inputs = []Edge{{From: in, Partition: Forward}}
	case *Project:
		input := x.Input
		if f, ok := input.(*Filter); ok {
			o.Filter, input = f.Cond, f.Input
		}
		in := b.build(input)
		o.Kind, o.Projections, o.Parallelism = OpCalc, x.Exprs, in.Parallelism
		o.Inputs = []Edge{{From: in, Partition: Forward}}
	case *Aggregate:
		in := b.build(x.Input)
		o.Kind, o.Agg, o.InputUpdating = OpGroupAggregate, x, ModeOf(x.Input) == Updating
		if len(x.Keys) == 0 {
			o.Parallelism = 1
			o.Inputs = []Edge{{From: in, Partition: Global}}
		} else {
			o.Parallelism = b.par
			o.Inputs = []Edge{{From: in, Partition: Hash, Keys: x.Keys}}
		}
	case *Union:
		o.Kind, o.Parallelism = OpUnion, b.par
		for _, i := range x.Inputs {
			o.Inputs = append(o.Inputs, b.edge(b.build(i), b.par))
		}
	case *Sort:
		in := b.build(x.Input)
		o.Kind, o.Sort, o.Parallelism, o.InputUpdating = OpSort, x, 1, ModeOf(x.Input) == Updating
		o.Inputs = []Edge{{From: in, Partition: Global}}
	case *WindowTVF, *WindowAggregate:
		b.buildWindow(o, x)
	case *Sink:
		in := b.build(x.Input)
		o.Kind, o.Sink = OpSink, x
		if x.Table == nil {
			o.Parallelism = 1
			o.Inputs = []Edge{b.edge(in, 1)}
		} else {
			// A sink keeps its input's parallelism and partitioning, so the
			// changes of one key stay in order on one sink subtask.
			o.Parallelism = in.Parallelism
			o.Inputs = []Edge{{From: in, Partition: Forward}}
		}
	default:
		panic(fmt.Sprintf("planner: no physical operator for %T", n))
	}
	o.desc = describeOp(o)
	o = b.add(o, key)
	if o.Kind == OpWindowAggregate && o.WindowAgg.Late != nil {
		b.buildLate(o)
	}
	return o
}

func describeOp(o *Operator) string {
	switch o.Kind {
	case OpSource:
		return fmt.Sprintf("Source: %s(fields=[%s]%s)", o.Scan.Table.Name, strings.Join(o.Schema.Names(), ", "), watermarkSuffix(o.Scan)+proctimeSuffix(o.Scan))
	case OpValues:
		return fmt.Sprintf("Values(tuples=%d, fields=[%s])", len(o.Values.Rows), strings.Join(o.Schema.Names(), ", "))
	case OpCalc:
		var sel []string
		for i, e := range o.Projections {
			s := e.String()
			if c, ok := e.(*ColumnRef); !ok || c.Name != o.Schema[i].Name {
				s += " AS " + o.Schema[i].Name
			}
			sel = append(sel, s)
		}
		d := "Calc(select=[" + strings.Join(sel, ", ") + "]"
		if o.Filter != nil {
			d += ", where=[" + o.Filter.String() + "]"
		}
		return d + ")"
	case OpGroupAggregate:
		return describeAgg(o.Agg)
	case OpUnion:
		return fmt.Sprintf("Union(inputs=%d)", len(o.Inputs))
	case OpSort:
		return describeSort(o.Sort)
	case OpWindowTVF, OpWindowAggregate:
		return describeWindowOp(o)
	case OpSink:
		if o.Sink.Table == nil {
			return fmt.Sprintf("Sink: collect(fields=[%s])", strings.Join(o.Schema.Names(), ", "))
		}
		return fmt.Sprintf("Sink: %s(connector=%s, fields=[%s])", o.Sink.Table.Name, o.Sink.Table.Connector, strings.Join(o.Schema.Names(), ", "))
	}
	return o.Kind.String()
}

func describeAgg(a *Aggregate) string {
	in := a.Input.Schema()
	var keys []string
	for _, k := range a.Keys {
		keys = append(keys, in[k].Name)
	}
	if len(a.Aggs) == 0 {
		return "Distinct(keys=[" + strings.Join(keys, ", ") + "])"
	}
	var aggs []string
	for _, c := range a.Aggs {
		aggs = append(aggs, c.describe(in))
	}
	return "GroupAggregate(groupBy=[" + strings.Join(keys, ", ") + "], select=[" + strings.Join(aggs, ", ") + "])"
}

func describeSort(s *Sort) string {
	in := s.Input.Schema()
	var keys []string
	for _, k := range s.Keys {
		d := "ASC"
		if k.Desc {
			d = "DESC"
		}
		keys = append(keys, in[k.Index].Name+" "+d)
	}
	out := "Sort(orderBy=[" + strings.Join(keys, ", ") + "]"
	if len(s.Keys) == 0 {
		out = "Limit("
		if s.Limit >= 0 {
			out += fmt.Sprintf("fetch=%d", s.Limit)
		}
		if s.Offset > 0 {
			out += fmt.Sprintf(", offset=%d", s.Offset)
		}
		return out + ")"
	}
	if s.Limit >= 0 {
		out += fmt.Sprintf(", fetch=%d", s.Limit)
	}
	if s.Offset > 0 {
		out += fmt.Sprintf(", offset=%d", s.Offset)
	}
	return out + ")"
}
