package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Expand emits each input row once for every grouping set of a GROUP BY
// GROUPING SETS, ROLLUP or CUBE (Flink's Expand, which its planner puts
// below the aggregate of grouping sets): in the copy for set i, the key
// columns outside the set are NULL, and a last column, $e (BIGINT, never
// NULL), is i. The aggregate above groups by the keys and $e, so the
// copies of one row fold into one group per set, and GROUPING() reads $e.
//
// Over an updating input each change is copied as it is (a retraction of
// a row retracts its copy in every set). It keeps no state.
type Expand struct {
	Input Node
	// Keys are the input's key columns; Sets[i][j] says whether set i
	// keeps Keys[j].
	Keys []int
	Sets [][]bool
}

// ExpandIDName is the name of Expand's last column.
const ExpandIDName = "$e"

func (x *Expand) Schema() types.Schema {
	in := x.Input.Schema()
	out := append(types.Schema(nil), in...)
	for j, k := range x.Keys {
		if !x.inEverySet(j) {
			out[k].Type = out[k].Type.Nullable()
		}
	}
	id := types.BigIntType
	id.NotNull = true
	return append(out, types.Column{Name: ExpandIDName, Type: id})
}

// inEverySet reports whether every set keeps Keys[j].
func (x *Expand) inEverySet(j int) bool {
	for _, s := range x.Sets {
		if !s[j] {
			return false
		}
	}
	return true
}

// passes reports whether column col of x's output is its input's column
// col in every copy (not $e, and not a key some set leaves out).
func (x *Expand) passes(col int) bool {
	if col >= len(x.Input.Schema()) {
		return false
	}
	for j, k := range x.Keys {
		if k == col {
			return x.inEverySet(j)
		}
	}
	return true
}

func (x *Expand) Children() []Node { return []Node{x.Input} }
func (x *Expand) WithChildren(ch []Node) Node {
	c := *x
	c.Input = ch[0]
	return &c
}
func (x *Expand) Expressions() []Expr            { return nil }
func (x *Expand) WithExpressions(es []Expr) Node { return x }

// Mode: its input's.
func (*Expand) Mode(in []Mode) Mode { return anyUpdating(in) }

// UpsertKey: none (a row comes once for each set).
func (*Expand) UpsertKey([][]int) []int { return nil }

func (x *Expand) Describe() string {
	return "Expand(sets=[" + describeSets(x.Keys, x.Sets, x.Input.Schema()) + "])"
}

// describeSets prints grouping sets by their columns' names:
// "{a, b}, {a}, {}".
func describeSets(keys []int, sets [][]bool, in types.Schema) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		var names []string
		for j, keep := range s {
			if keep {
				names = append(names, in[keys[j]].Name)
			}
		}
		parts[i] = "{" + strings.Join(names, ", ") + "}"
	}
	return strings.Join(parts, ", ")
}

// prune: the copies carry every input column (the aggregate's keys and
// arguments), so the input keeps all of them.
func (x *Expand) prune([]bool) (Node, map[int]int) {
	all := make([]bool, len(x.Input.Schema()))
	for i := range all {
		all[i] = true
	}
	in, im := prune(x.Input, all)
	in, _ = narrow(in, all, im)
	c := *x
	c.Input = in
	return &c, identityMap(len(all) + 1)
}

// physical: beside its input (a forward edge), stateless.
func (x *Expand) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	o.Spec, o.Parallelism = &ExpandSpec{Keys: x.Keys, Sets: x.Sets}, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// KindExpand is the kind of Expand's operator.
const KindExpand = "Expand"

// ExpandSpec is Expand as the runtime runs it: each input batch is emitted
// once per set, with the key columns outside the set NULL and $e the set's
// index.
type ExpandSpec struct {
	Keys []int
	Sets [][]bool
}

func (*ExpandSpec) Kind() string { return KindExpand }
func (s *ExpandSpec) Describe(o *Operator) string {
	return "Expand(sets=[" + describeSets(s.Keys, s.Sets, o.Inputs[0].From.Schema) + "])"
}

// Identity: the keys and the sets (it keeps no state).
func (s *ExpandSpec) Identity(w *IDWriter) {
	w.Ints(s.Keys)
	for _, set := range s.Sets {
		w.Str(fmt.Sprint(set))
	}
}
