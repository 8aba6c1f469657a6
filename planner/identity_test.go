package planner

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// idPlan is a small job: scan t(k, g, v) -> Project(k, g, v AS alias) ->
// GROUP BY keys with aggs -> INSERT INTO out.
type idPlan struct {
	table string
	alias string
	keys  []int
	aggs  []AggCall
}

func (p idPlan) graph(t *testing.T) *Graph {
	t.Helper()
	cols := types.Schema{{Name: "k", Type: types.BigIntType}, {Name: "g", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}}
	scan := &Scan{Table: &catalog.Table{Name: p.table, Columns: cols, Connector: "datagen"}, Fields: []int{0, 1, 2}, Proctime: -1}
	proj := &Project{Input: scan, Names: []string{"k", "g", p.alias}}
	for i, c := range cols {
		// v + 1, so that the projection is a Calc of its own.
		var e Expr = &ColumnRef{Index: i, Name: c.Name, T: c.Type}
		if i == 2 {
			e = &Call{Func: "+", Args: []Expr{e, &Literal{Value: int64(1), T: types.BigIntType}}}
		}
		proj.Exprs = append(proj.Exprs, e)
	}
	agg := &Aggregate{Input: proj, Keys: p.keys, Aggs: p.aggs}
	sink := &Sink{Input: agg, Table: &catalog.Table{Name: "out", Columns: agg.Schema(), Connector: "print"}, Name: "out"}
	b := &physBuilder{par: 2, memo: map[string]*Operator{}, ids: map[string]bool{}, late: map[string][]Edge{}, g: &Graph{MaxParallelism: 128}}
	b.build(sink)
	if len(b.g.Operators) != 4 {
		t.Fatalf("want scan, calc, aggregate and sink, got %d operators", len(b.g.Operators))
	}
	return b.g
}

var (
	countStar = AggCall{Func: AggCount, Arg: -1, T: types.BigIntType, Name: "c"}
	sumV      = AggCall{Func: AggSum, Arg: 2, T: types.BigIntType, ArgT: types.BigIntType, Name: "c"}
	base      = idPlan{table: "t", alias: "v", keys: []int{0}, aggs: []AggCall{countStar}}
)

// reworded is a spec whose EXPLAIN text says something else.
type reworded struct{ Spec }

func (reworded) Describe(*Operator) string { return "Something(else=[entirely])" }

// TestIDIgnoresDescription: an operator's id is computed from its spec's
// identity and its inputs, never from the EXPLAIN text: recomputing every
// id of a plan with reworded descriptions gives the same ids, and a plan
// whose EXPLAIN differs only by an alias has the same ids.
func TestIDIgnoresDescription(t *testing.T) {
	g := base.graph(t)
	for _, o := range g.Operators {
		r := *o
		r.Spec = reworded{o.Spec}
		if r.Spec.Describe(&r) == o.Name() {
			t.Fatalf("%s: the rewording did not change the text", o.Name())
		}
		if id := OperatorID(&r); id != o.ID {
			t.Errorf("%s: id %s with its own description, %s reworded", o.Name(), o.ID, id)
		}
	}

	aliased := base
	aliased.alias = "v_plus_one"
	h := aliased.graph(t)
	if g.Operators[1].Name() == h.Operators[1].Name() {
		t.Fatalf("the alias did not change EXPLAIN: %s", g.Operators[1].Name())
	}
	for i := range g.Operators {
		if g.Operators[i].ID != h.Operators[i].ID {
			t.Errorf("renaming a column moved %s (%s) to %s (%s)", g.Operators[i].Name(), g.Operators[i].ID, h.Operators[i].Name(), h.Operators[i].ID)
		}
	}
}

// TestIDFollowsWhatItComputes: another aggregate, another key or another
// table moves the operator's id and those of everything downstream of it,
// and nothing upstream.
func TestIDFollowsWhatItComputes(t *testing.T) {
	g := base.graph(t)
	for _, c := range []struct {
		name  string
		p     idPlan
		first int // the first operator whose id must move
	}{
		{"another table", idPlan{table: "t2", alias: "v", keys: []int{0}, aggs: []AggCall{countStar}}, 0},
		{"another aggregate", idPlan{table: "t", alias: "v", keys: []int{0}, aggs: []AggCall{sumV}}, 2},
		{"DISTINCT", idPlan{table: "t", alias: "v", keys: []int{0}, aggs: []AggCall{{Func: AggCount, Arg: 2, Distinct: true, T: types.BigIntType, ArgT: types.BigIntType, Name: "c"}}}, 2},
		{"another key", idPlan{table: "t", alias: "v", keys: []int{1}, aggs: []AggCall{countStar}}, 2},
		{"one more key", idPlan{table: "t", alias: "v", keys: []int{0, 1}, aggs: []AggCall{countStar}}, 2},
	} {
		h := c.p.graph(t)
		for i := range g.Operators {
			same := g.Operators[i].ID == h.Operators[i].ID
			if i < c.first && !same {
				t.Errorf("%s moved %s upstream of the change", c.name, g.Operators[i].Name())
			}
			if i >= c.first && same {
				t.Errorf("%s kept the id %s of %s (now %s)", c.name, g.Operators[i].ID, g.Operators[i].Name(), h.Operators[i].Name())
			}
		}
	}
}

// TestIDsDistinct: two operators computing the same over the same input
// (the same projection under two aliases, one per INSERT of a statement
// set) get distinct ids.
func TestIDsDistinct(t *testing.T) {
	cols := types.Schema{{Name: "k", Type: types.BigIntType}}
	scan := &Scan{Table: &catalog.Table{Name: "t", Columns: cols}, Fields: []int{0}, Proctime: -1}
	b := &physBuilder{par: 1, memo: map[string]*Operator{}, ids: map[string]bool{}, late: map[string][]Edge{}, g: &Graph{MaxParallelism: 128}}
	for _, alias := range []string{"a", "b"} {
		p := &Project{Input: scan, Exprs: []Expr{&Call{Func: "+", Args: []Expr{&ColumnRef{Index: 0, Name: "k", T: types.BigIntType}, &Literal{Value: int64(1), T: types.BigIntType}}}}, Names: []string{alias}}
		b.build(&Sink{Input: p, Table: &catalog.Table{Name: "out_" + alias, Columns: p.Schema()}})
	}
	seen := map[string]string{}
	for _, o := range b.g.Operators {
		if other, dup := seen[o.ID]; dup {
			t.Errorf("%s and %s share the id %s", other, o.Name(), o.ID)
		}
		seen[o.ID] = o.Name()
	}
	if len(b.g.Operators) != 5 {
		t.Fatalf("want one scan, two calcs and two sinks, got %d operators", len(b.g.Operators))
	}
}

// TestAggCallIdentity: FILTER and LISTAGG's separator are part of what an
// aggregate call computes, so they move the id; the output name does not.
func TestAggCallIdentity(t *testing.T) {
	id := func(c AggCall) string {
		w := &IDWriter{h: sha1.New()}
		w.AggCalls([]AggCall{c})
		return hex.EncodeToString(w.h.Sum(nil))
	}
	listagg := AggCall{Func: AggListAgg, Arg: 1, T: types.StringType, ArgT: types.StringType, Name: "l", Separator: ","}
	filtered := sumV
	filtered.HasFilter, filtered.Filter = true, 3
	otherFilter := filtered
	otherFilter.Filter = 4
	semi := listagg
	semi.Separator = ";"
	renamed := sumV
	renamed.Name = "total"
	if id(sumV) == id(filtered) || id(filtered) == id(otherFilter) {
		t.Error("FILTER (WHERE ...) does not move an aggregate call's id")
	}
	if id(listagg) == id(semi) {
		t.Error("LISTAGG's separator does not move its id")
	}
	if id(sumV) != id(renamed) {
		t.Error("the output name moved an aggregate call's id")
	}
}
