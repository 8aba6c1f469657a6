package planner

import (
	"slices"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// TestUpsertKeys: the key of a changelog follows its columns through the
// plan, and is lost where a node no longer passes it on.
func TestUpsertKeys(t *testing.T) {
	cols := types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "g", Type: types.BigIntType}, {Name: "v", Type: types.BigIntType}}
	ref := func(i int) *ColumnRef { return &ColumnRef{Index: i, Name: cols[i].Name, T: cols[i].Type} }
	upsert := &Scan{Table: &catalog.Table{Name: "u", Columns: cols, PrimaryKey: []string{"ID"}}, Fields: []int{1, 2, 0}, Updating: true, Proctime: -1}
	agg := &Aggregate{Input: upsert, Keys: []int{0, 1}, Aggs: []AggCall{{Func: AggCount, Arg: -1, T: types.BigIntType, Name: "c"}}}
	for _, c := range []struct {
		name string
		n    Node
		want []int
	}{
		{"a scan's primary key, where its fields put it", upsert, []int{2}},
		{"a scan that does not read the key", &Scan{Table: upsert.Table, Fields: []int{1, 2}, Updating: true}, nil},
		{"a filter keeps it", &Filter{Input: upsert, Cond: &Literal{Value: true, T: types.BooleanType}}, []int{2}},
		{"a projection moves it", &Project{Input: upsert, Exprs: []Expr{ref(2), ref(0)}, Names: []string{"id", "g"}}, []int{0}},
		{"a projection that drops it loses it", &Project{Input: upsert, Exprs: []Expr{ref(0)}, Names: []string{"g"}}, nil},
		{"an aggregate's grouping columns", agg, []int{0, 1}},
		{"a global aggregate: one row", &Aggregate{Input: upsert, Aggs: agg.Aggs}, []int{}},
		{"a projection of the aggregate", &Project{Input: agg, Exprs: []Expr{&ColumnRef{Index: 2, Name: "c", T: types.BigIntType}, &ColumnRef{Index: 1, T: types.BigIntType}, &ColumnRef{Index: 0, T: types.BigIntType}}, Names: []string{"c", "v", "g"}}, []int{2, 1}},
		{"a union knows none", &Union{Inputs: []Node{agg, agg}}, nil},
	} {
		got := UpsertKeyOf(c.n)
		if !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: upsert key %v, want %v", c.name, got, c.want)
		}
	}
}
