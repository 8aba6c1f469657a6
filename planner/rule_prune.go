package planner

// Rule: projection pruning. Each node is asked for only the columns its
// parent reads; a Scan then reads only those fields of its table, and
// projections that only reorder or drop columns collapse.

func pruneColumns(n Node) Node {
	all := make([]bool, len(n.Schema()))
	for i := range all {
		all[i] = true
	}
	out, _ := prune(n, all)
	return out
}

// prune returns n restricted to the columns marked in need, plus the map
// from n's old column indexes to the new node's (absent: dropped). A node may
// keep more columns than needed. Each node kind prunes itself (Node.prune).
func prune(n Node, need []bool) (Node, map[int]int) { return n.prune(need) }

// keepAll is the pruning of a node that keeps all its columns and does not
// prune below itself.
func keepAll(n Node) (Node, map[int]int) { return n, identityMap(len(n.Schema())) }

func (x *Scan) prune(need []bool) (Node, map[int]int) {
	need = watermarkNeed(x, need)
	var fields []int
	m := map[int]int{}
	for i, f := range x.Fields {
		if need[i] {
			m[i] = len(fields)
			fields = append(fields, f)
		}
	}
	s := *x
	s.Fields = fields
	return &s, m
}

func (x *Project) prune(need []bool) (Node, map[int]int) {
	var exprs []Expr
	var names []string
	inNeed := make([]bool, len(x.Input.Schema()))
	m := map[int]int{}
	for i, e := range x.Exprs {
		if need[i] {
			m[i] = len(exprs)
			exprs = append(exprs, e)
			names = append(names, x.Names[i])
			used := map[int]bool{}
			columnsUsed(e, used)
			for c := range used {
				inNeed[c] = true
			}
		}
	}
	in, im := prune(x.Input, inNeed)
	for i, e := range exprs {
		exprs[i] = remapColumns(e, im)
	}
	// A projection that passes its input through unchanged disappears.
	if len(exprs) == len(in.Schema()) {
		identity := true
		for i, e := range exprs {
			c, ok := e.(*ColumnRef)
			if !ok || c.Index != i || in.Schema()[i].Name != names[i] {
				identity = false
				break
			}
		}
		if identity {
			return in, m
		}
	}
	return &Project{Input: in, Exprs: exprs, Names: names}, m
}

func (x *Filter) prune(need []bool) (Node, map[int]int) {
	inNeed := append([]bool(nil), need...)
	used := map[int]bool{}
	columnsUsed(x.Cond, used)
	for c := range used {
		inNeed[c] = true
	}
	in, im := prune(x.Input, inNeed)
	f := &Filter{Input: in, Cond: remapColumns(x.Cond, im)}
	// Drop the columns only the filter needed.
	return narrow(f, need, im)
}

func (x *Aggregate) prune([]bool) (Node, map[int]int) {
	inNeed := make([]bool, len(x.Input.Schema()))
	for _, k := range x.Keys {
		inNeed[k] = true
	}
	aggInputs(x.Aggs, inNeed)
	in, im := prune(x.Input, inNeed)
	a := &Aggregate{Input: in, emitAt: x.emitAt, stateTTL: x.stateTTL, setOp: x.setOp}
	for _, k := range x.Keys {
		a.Keys = append(a.Keys, im[k])
	}
	for _, c := range x.Aggs {
		if c.Arg >= 0 {
			c.Arg = im[c.Arg]
		}
		if c.HasFilter {
			c.Filter = im[c.Filter]
		}
		a.Aggs = append(a.Aggs, c)
	}
	return a, identityMap(len(x.Schema()))
}

func (x *Sort) prune(need []bool) (Node, map[int]int) {
	inNeed := append([]bool(nil), need...)
	for _, k := range x.Keys {
		inNeed[k.Index] = true
	}
	in, im := prune(x.Input, inNeed)
	s := *x
	s.Input = in
	s.Keys = nil
	for _, k := range x.Keys {
		k.Index = im[k.Index]
		s.Keys = append(s.Keys, k)
	}
	return &s, im
}

// Inputs must keep identical row types: prune each to exactly need.
func (x *Union) prune(need []bool) (Node, map[int]int) {
	var inputs []Node
	var m map[int]int
	for _, in := range x.Inputs {
		p, im := prune(in, need)
		p, m = narrow(p, need, im)
		inputs = append(inputs, p)
	}
	return &Union{Inputs: inputs}, m
}

func (x *WindowTVF) prune(need []bool) (Node, map[int]int) { return pruneWindowTVF(x, need) }

func (x *Sink) prune([]bool) (Node, map[int]int) {
	all := make([]bool, len(x.Input.Schema()))
	for i := range all {
		all[i] = true
	}
	in, im := prune(x.Input, all)
	s := *x
	s.Input, _ = narrow(in, all, im)
	return &s, identityMap(len(x.Schema()))
}

// VALUES keeps its columns; a window aggregation is made after pruning.
func (x *Values) prune([]bool) (Node, map[int]int)          { return keepAll(x) }
func (x *WindowAggregate) prune([]bool) (Node, map[int]int) { return keepAll(x) }

// narrow projects n (whose columns relate to the original ones through im)
// onto exactly the original columns marked in need, in order.
func narrow(n Node, need []bool, im map[int]int) (Node, map[int]int) {
	s := n.Schema()
	p := &Project{Input: n}
	m := map[int]int{}
	identity := true
	for i, keep := range need {
		if !keep {
			continue
		}
		j := im[i]
		m[i] = len(p.Exprs)
		if j != len(p.Exprs) {
			identity = false
		}
		p.Exprs = append(p.Exprs, &ColumnRef{Index: j, Name: s[j].Name, T: s[j].Type})
		p.Names = append(p.Names, s[j].Name)
	}
	if identity && len(p.Exprs) == len(s) {
		return n, m
	}
	return p, m
}

func identityMap(n int) map[int]int {
	m := make(map[int]int, n)
	for i := 0; i < n; i++ {
		m[i] = i
	}
	return m
}
