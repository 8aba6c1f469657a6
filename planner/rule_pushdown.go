package planner

// Rule: predicate pushdown. A filter moves below a projection (its columns
// rewritten to the projected expressions), into every input of a union,
// below the copies of ReplicateRows, and below an aggregate when it reads
// only group keys; adjacent filters merge.
// Filters never move below a Sort, whose LIMIT depends on what it sees.
// Over a join, a conjunct that reads one input moves into it unless that
// side is padded with NULLs (an outer join's), and one that reads both
// becomes part of an inner join's condition (so FROM a, b WHERE a.k = b.k
// is an equi-join); a join's own condition gives the conjuncts over one
// input to that input where the join type allows (join_pushdown.go).

func pushPredicates(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		switch x := n.(type) {
		case *Filter:
			return pushFilter(x)
		case *Join:
			return pushJoinCond(x)
		}
		return n
	})
}

// pushFilter moves f down as far as it goes; f's input is already done.
func pushFilter(f *Filter) Node {
	var n Node = f
	switch in := f.Input.(type) {
	case *Filter:
		return pushFilter(&Filter{Input: in.Input, Cond: and(in.Cond, f.Cond)})
	case *Project:
		if !deterministic(in.Exprs) {
			return n
		}
		cond := mapExpr(f.Cond, func(x Expr) Expr {
			if c, ok := x.(*ColumnRef); ok {
				return in.Exprs[c.Index]
			}
			return x
		})
		return &Project{Input: pushFilter(&Filter{Input: in.Input, Cond: cond}), Exprs: in.Exprs, Names: in.Names}
	case *Union:
		var inputs []Node
		for _, i := range in.Inputs {
			inputs = append(inputs, pushFilter(&Filter{Input: i, Cond: f.Cond}))
		}
		return &Union{Inputs: inputs}
	case *Join:
		return pushFilterIntoJoin(f, in)
	case *ReplicateRows:
		// Its columns are its input's first ones, and a row's copies
		// pass or fail together.
		r := *in
		r.Input = pushFilter(&Filter{Input: in.Input, Cond: f.Cond})
		return &r
	case *Aggregate:
		used := map[int]bool{}
		columnsUsed(f.Cond, used)
		m := map[int]int{}
		for c := range used {
			if c >= len(in.Keys) {
				return n // reads an aggregate result: stays above
			}
			m[c] = in.Keys[c]
		}
		cond := remapColumns(f.Cond, m)
		a := *in
		a.Input = pushFilter(&Filter{Input: in.Input, Cond: cond})
		a.cols = nil
		return &a
	}
	return n
}

func and(a, b Expr) Expr {
	c := &Call{Func: "AND", Args: []Expr{a, b}}
	if f, ok := lookupAnd(); ok {
		c.Resolved = f
	}
	return c
}

func deterministic(es []Expr) bool {
	for _, e := range es {
		ok := true
		walkExpr(e, func(x Expr) {
			if c, isCall := x.(*Call); isCall && nonDeterministic(c.Func) {
				ok = false
			}
		})
		if !ok {
			return false
		}
	}
	return true
}
