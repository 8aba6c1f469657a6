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
		fmt.Fprintf(&b, "%s%s, changelogMode=%s\n", line, describeNode(n), ModeOf(n))
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
		b.WriteString(describeNode(n))
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

func describeNode(n Node) string {
	switch x := n.(type) {
	case *Scan:
		return fmt.Sprintf("TableSourceScan(table=[%s], fields=[%s]%s)", x.Table.Name, strings.Join(x.Schema().Names(), ", "), watermarkSuffix(x)+proctimeSuffix(x))
	case *Values:
		var rows []string
		for _, r := range x.Rows {
			var vs []string
			for _, e := range r {
				vs = append(vs, e.String())
			}
			rows = append(rows, "{"+strings.Join(vs, ", ")+"}")
		}
		return "Values(tuples=[" + strings.Join(rows, ", ") + "])"
	case *Filter:
		return "Filter(condition=[" + x.Cond.String() + "])"
	case *Project:
		var sel []string
		for i, e := range x.Exprs {
			s := e.String()
			if c, ok := e.(*ColumnRef); !ok || c.Name != x.Names[i] {
				s += " AS " + x.Names[i]
			}
			sel = append(sel, s)
		}
		return "Project(select=[" + strings.Join(sel, ", ") + "])"
	case *Aggregate:
		return describeAgg(x)
	case *Union:
		return "Union(all=[true])"
	case *Sort:
		return describeSort(x)
	case *WindowTVF:
		return describeWindowNode(x)
	case *WindowAggregate:
		return describeWindowNode(x) + lateSuffix(x.Late)
	case *Sink:
		if x.Table == nil {
			return "Sink(collect, fields=[" + strings.Join(x.Schema().Names(), ", ") + "])"
		}
		return "Sink(table=[" + x.Table.Name + "], fields=[" + strings.Join(x.Schema().Names(), ", ") + "])"
	}
	return fmt.Sprintf("%T", n)
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
