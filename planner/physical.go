package planner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

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
	// records From found late (rows of its input, with the schema of the
	// WindowAggSpec's Agg.Input), not From's output (late.go).
	Late bool
}

// Operator is one vertex of the physical DAG: what it computes is its
// Spec, one type per kind (spec.go).
type Operator struct {
	// ID is stable across plannings of the same query: derived from what
	// the operator computes and its inputs' ids (identity.go), so that state
	// in a savepoint finds its operator again in a changed query.
	ID          string
	Parallelism int
	Schema      types.Schema
	Mode        Mode
	Inputs      []Edge
	Spec        Spec

	desc string
}

// Kind is the operator's kind (its Spec's).
func (o *Operator) Kind() string { return o.Spec.Kind() }

// Name is the operator's one-line description (as EXPLAIN prints it).
func (o *Operator) Name() string {
	if o.desc == "" && o.Spec != nil {
		return o.Spec.Describe(o)
	}
	return o.desc
}

// Graph is a physical plan: operators in topological order (inputs first).
// Several sinks may share operators (EXECUTE STATEMENT SET).
type Graph struct {
	Operators []*Operator
	// Bounded is true when every source ends, so the job ends.
	Bounded bool
	// MaxParallelism is the number of key groups of hash edges and keyed state.
	MaxParallelism int
}

// Channels is the number of channels between g's subtasks: over each
// edge, the pairs of sending and receiving subtasks it connects.
func (g *Graph) Channels() int64 {
	var n int64
	for _, o := range g.Operators {
		for _, e := range o.Inputs {
			n += e.Channels(o.Parallelism)
		}
	}
	return n
}

// Channels is the number of channels e has into an operator of
// parallelism receivers: one per pair of subtasks it connects.
func (e Edge) Channels(receivers int) int64 {
	senders := int64(e.From.Parallelism)
	switch e.Partition {
	case Forward:
		return min(senders, int64(receivers))
	case Global:
		return senders
	}
	return senders * int64(receivers)
}

// ErrTooManyChannels is wrapped by Physical's error for a job with more
// channels than 'pipeline.max-channels'.
var ErrTooManyChannels = errors.New("too many channels")

// Sinks returns the sink operators.
func (g *Graph) Sinks() []*Operator {
	var out []*Operator
	for _, o := range g.Operators {
		if _, ok := o.Spec.(*SinkSpec); ok {
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
	for _, s := range sinks {
		if s.Table == nil {
			continue
		}
		n, err := catalog.SinkParallelism(s.Table)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", s.Table.Name, err)
		}
		if n > maxPar {
			return nil, fmt.Errorf("table %s: '%s' (%d) exceeds 'pipeline.max-parallelism' (%d)", s.Table.Name, catalog.OptSinkParallelism, n, maxPar)
		}
	}
	b := &physBuilder{par: par, ttl: p.Options.StateTTL, opts: p.Options, memo: map[string]*Operator{}, ids: map[string]bool{}, late: map[string][]Edge{}, g: &Graph{Bounded: true, MaxParallelism: maxPar}}
	for _, s := range sinks {
		b.build(s)
		if !IsBounded(s) {
			b.g.Bounded = false
		}
	}
	if err := b.finishLate(sinks); err != nil {
		return nil, err
	}
	if err := refuseRowState(b.g); err != nil {
		return nil, err
	}
	if n, max := b.g.Channels(), p.Options.withDefaults().MaxChannels; n > int64(max) {
		return nil, fmt.Errorf("%w: the job would have %d channels between its subtasks at parallelism %d, more than 'pipeline.max-channels' (%d); lower 'parallelism.default' or raise 'pipeline.max-channels'",
			ErrTooManyChannels, n, par, max)
	}
	return b.g, nil
}

type physBuilder struct {
	par  int
	ttl  time.Duration // table.exec.state.ttl
	opts JobOptions
	memo map[string]*Operator
	ids  map[string]bool
	g    *Graph
	// late are the streams of late records bound for each late-records
	// table (by lower-case name), lateTables those tables in order (late.go).
	late       map[string][]Edge
	lateTables []*catalog.Table
}

// add names o (its EXPLAIN text and its id) and appends it to the graph.
// Two operators computing the same over the same inputs (a projection
// written twice with different aliases) get distinct ids by their order.
func (b *physBuilder) add(o *Operator, key string) *Operator {
	o.desc = o.Spec.Describe(o)
	id := OperatorID(o)
	o.ID = id
	for n := 2; b.ids[o.ID]; n++ {
		o.ID = fmt.Sprintf("%s-%d", id, n)
	}
	b.ids[o.ID] = true
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
	if from.Mode != AppendOnly {
		// Round-robin, a row's retraction could reach another subtask
		// than the row and overtake it downstream: hash by every column,
		// so that equal rows take one channel, in order.
		keys := make([]int, len(from.Schema))
		for i := range keys {
			keys[i] = i
		}
		return Edge{From: from, Partition: Hash, Keys: keys}
	}
	return Edge{From: from, Partition: Rebalance}
}

func (b *physBuilder) build(n Node) *Operator {
	key := explainTree(n)
	if o, ok := b.memo[key]; ok {
		return o
	}
	o := &Operator{Schema: n.Schema(), Mode: ModeOf(n)}
	n.physical(b, o)
	o = b.add(o, key)
	if l, ok := o.Spec.(lateRouter); ok {
		if late, in := l.lateRecords(); late != nil {
			b.buildLate(o, late, in)
		}
	}
	return o
}

func (x *Scan) physical(b *physBuilder, o *Operator) {
	o.Spec, o.Parallelism = &SourceSpec{Scan: x}, b.par
}

func (x *Values) physical(b *physBuilder, o *Operator) {
	o.Spec, o.Parallelism = &ValuesSpec{Rows: x.Rows}, 1
}

func (x *Filter) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	c := &CalcSpec{Filter: x.Cond}
	for i, col := range x.Schema() {
		c.Projections = append(c.Projections, &ColumnRef{Index: i, Name: col.Name, T: col.Type})
	}
	o.Spec, o.Parallelism = c, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// A projection over a filter is one Calc.
func (x *Project) physical(b *physBuilder, o *Operator) {
	input := x.Input
	c := &CalcSpec{Projections: x.Exprs}
	if f, ok := input.(*Filter); ok {
		c.Filter, input = f.Cond, f.Input
	}
	in := b.build(input)
	o.Spec, o.Parallelism = c, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// A group aggregate hashes its input by the keys; a global one runs at
// parallelism 1.
func (x *Aggregate) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	spec := &GroupAggSpec{Agg: x, InputUpdating: ModeOf(x.Input) == Updating, TTL: ttlOf(x.stateTTL, b.ttl)}
	if b.opts.MiniBatch {
		spec.MiniBatchLatency, spec.MiniBatchSize = b.opts.MiniBatchLatency, b.opts.MiniBatchSize
	}
	o.Spec = spec
	if len(x.Keys) == 0 {
		o.Parallelism = 1
		o.Inputs = []Edge{{From: in, Partition: Global}}
	} else {
		o.Parallelism = b.par
		o.Inputs = []Edge{{From: in, Partition: Hash, Keys: x.Keys}}
	}
}

func (x *Union) physical(b *physBuilder, o *Operator) {
	o.Spec, o.Parallelism = &UnionSpec{}, b.par
	for _, i := range x.Inputs {
		o.Inputs = append(o.Inputs, b.edge(b.build(i), b.par))
	}
}

func (x *Sort) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	o.Spec, o.Parallelism = &SortSpec{Sort: x, InputUpdating: ModeOf(x.Input) == Updating}, 1
	o.Inputs = []Edge{{From: in, Partition: Global}}
}

func (x *Sink) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	o.Spec = &SinkSpec{Table: x.Table, Name: x.Name}
	if x.Table == nil {
		o.Parallelism = 1
		o.Inputs = []Edge{b.edge(in, 1)}
	} else if n, _ := catalog.SinkParallelism(x.Table); n > 0 && n != in.Parallelism {
		// 'sink.parallelism': an updating input is hashed by the table's
		// primary key, so that the changes of one key stay in order on one
		// sink subtask; without one (or append-only), as any edge.
		o.Parallelism = n
		var pk []int
		if in.Mode != AppendOnly {
			phys, _ := x.Table.Physical()
			for _, k := range x.Table.PrimaryKey {
				if i := phys.Index(k); i >= 0 {
					pk = append(pk, i)
				}
			}
		}
		if len(pk) > 0 && len(pk) == len(x.Table.PrimaryKey) {
			o.Inputs = []Edge{{From: in, Partition: Hash, Keys: pk}}
		} else {
			o.Inputs = []Edge{b.edge(in, n)}
		}
	} else {
		// A sink keeps its input's parallelism and partitioning, so the
		// changes of one key stay in order on one sink subtask.
		o.Parallelism = in.Parallelism
		o.Inputs = []Edge{{From: in, Partition: Forward}}
	}
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
