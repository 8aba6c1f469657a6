package planner

import (
	"fmt"
	"strings"
)

// ExplainLogical prints a logical plan as an indented tree, one node per
// line with its changelog mode.
func ExplainLogical(n Node) string {
	var b strings.Builder
	var walk func(n Node, prefix string, last bool, root bool)
	walk = func(n Node, prefix string, last bool, root bool) {
		line := prefix
		child := prefix
		if !root {
			line += "+- "
			if last {
				child += "   "
			} else {
				child += ":  "
			}
		}
		fmt.Fprintf(&b, "%s%s, changelogMode=%s\n", line, n.Describe(), ModeOf(n))
		ch := n.Children()
		for i, c := range ch {
			walk(c, child, i == len(ch)-1, false)
		}
	}
	walk(n, "", true, true)
	return b.String()
}

// explainTree is a canonical text of a subtree (used to share operators).
func explainTree(n Node) string {
	var b strings.Builder
	var walk func(n Node)
	walk = func(n Node) {
		b.WriteString(n.Describe())
		b.WriteString("(")
		for _, c := range n.Children() {
			walk(c)
			b.WriteString(";")
		}
		b.WriteString(")")
	}
	walk(n)
	return b.String()
}

func (s *Scan) Describe() string {
	return fmt.Sprintf("TableSourceScan(table=[%s], fields=[%s]%s)", s.Table.Name, strings.Join(s.Schema().Names(), ", "), watermarkSuffix(s)+proctimeSuffix(s)+rowFieldsSuffix(s))
}

func (v *Values) Describe() string {
	var rows []string
	for _, r := range v.Rows {
		var vs []string
		for _, e := range r {
			vs = append(vs, e.String())
		}
		rows = append(rows, "{"+strings.Join(vs, ", ")+"}")
	}
	return "Values(tuples=[" + strings.Join(rows, ", ") + "])"
}

func (f *Filter) Describe() string { return "Filter(condition=[" + f.Cond.String() + "])" }

func (p *Project) Describe() string {
	var sel []string
	for i, e := range p.Exprs {
		s := e.String()
		if c, ok := e.(*ColumnRef); !ok || c.Name != p.Names[i] {
			s += " AS " + p.Names[i]
		}
		sel = append(sel, s)
	}
	return "Project(select=[" + strings.Join(sel, ", ") + "])"
}

func (a *Aggregate) Describe() string { return describeAgg(a) }
func (*Union) Describe() string       { return "Union(all=[true])" }
func (s *Sort) Describe() string      { return describeSort(s) }

func (s *Sink) Describe() string {
	if s.Table == nil {
		return "Sink(collect, fields=[" + strings.Join(s.Schema().Names(), ", ") + "])"
	}
	return "Sink(table=[" + s.Table.Name + "], fields=[" + strings.Join(s.Schema().Names(), ", ") + "])"
}

// ExplainPhysical prints the operator DAG: one line per operator with its
// stable id, parallelism, changelog mode and where its input comes from.
func ExplainPhysical(g *Graph) string {
	var b strings.Builder
	num := map[*Operator]int{}
	for i, o := range g.Operators {
		num[o] = i + 1
		var ins []string
		for _, e := range o.Inputs {
			s := fmt.Sprintf("#%d %s", num[e.From], e.Partition)
			if e.Late {
				s = fmt.Sprintf("#%d late records %s", num[e.From], e.Partition)
			}
			if e.Partition == Hash {
				var ks []string
				for _, k := range e.Keys {
					ks = append(ks, e.From.Schema[k].Name)
				}
				s += "[" + strings.Join(ks, ", ") + "]"
			}
			ins = append(ins, s)
		}
		fmt.Fprintf(&b, "#%d %s\n", i+1, o.desc)
		fmt.Fprintf(&b, "   id=%s parallelism=%d changelogMode=%s", o.ID, o.Parallelism, o.Mode)
		if len(ins) > 0 {
			fmt.Fprintf(&b, " input=%s", strings.Join(ins, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Explain prints the logical plans and the physical DAG of a job.
func Explain(sinks []*Sink, g *Graph) string {
	var b strings.Builder
	b.WriteString("== Optimized Logical Plan ==\n")
	for _, s := range sinks {
		b.WriteString(ExplainLogical(s))
	}
	b.WriteString("\n== Physical Plan ==\n")
	b.WriteString(ExplainPhysical(g))
	return b.String()
}
