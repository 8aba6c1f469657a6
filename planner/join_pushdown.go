package planner

// Predicate pushdown through regular joins (rule_pushdown.go).

// pushFilterIntoJoin moves the conjuncts of f over join j: those reading
// one input into that input when the join does not pad it with NULLs
// (filtering it first removes the same joined rows), those reading both
// into an inner join's condition; the rest stay above.
func pushFilterIntoJoin(f *Filter, j *Join) Node {
	nl := len(j.Left.Schema())
	var left, right, both, above []Expr
	for _, c := range conjunctsOf(f.Cond) {
		if !deterministic([]Expr{c}) {
			above = append(above, c)
			continue
		}
		switch sideOf(c, nl) {
		case 0:
			if j.Type.padsLeft() {
				above = append(above, c)
			} else {
				left = append(left, c)
			}
		case 1:
			if j.Type.padsRight() {
				above = append(above, c)
			} else {
				right = append(right, c)
			}
		default:
			if j.Type == InnerJoin {
				both = append(both, c)
			} else {
				above = append(above, c)
			}
		}
	}
	if len(left) == 0 && len(right) == 0 && len(both) == 0 {
		return f
	}
	out := *j
	out.cols = nil
	for _, c := range both {
		out.Cond = andMaybe(out.Cond, c)
	}
	out.Left = filterOver(j.Left, left, 0)
	out.Right = filterOver(j.Right, right, nl)
	var n Node = pushJoinCond(&out)
	if len(above) > 0 {
		n = &Filter{Input: n, Cond: andAll(above)}
	}
	return n
}

// pushJoinCond moves the conjuncts of j's condition that read only one
// input into that input where that keeps the result: both sides of an
// inner join, the right of a left join, the left of a right join (a
// preserved side keeps every row, matched or not, so its conjuncts stay).
func pushJoinCond(j *Join) Node {
	if j.Cond == nil || j.Type == FullJoin {
		return j
	}
	nl := len(j.Left.Schema())
	var left, right, keep []Expr
	for _, c := range conjunctsOf(j.Cond) {
		side := sideOf(c, nl)
		switch {
		case !deterministic([]Expr{c}):
			keep = append(keep, c)
		case side == 0 && (j.Type == InnerJoin || j.Type == RightJoin):
			left = append(left, c)
		case side == 1 && j.Type != RightJoin:
			right = append(right, c)
		default:
			keep = append(keep, c)
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return j
	}
	out := *j
	out.cols = nil
	out.Cond = nil
	if len(keep) > 0 {
		out.Cond = andAll(keep)
	}
	out.Left = filterOver(j.Left, left, 0)
	out.Right = filterOver(j.Right, right, nl)
	return &out
}

// filterOver puts the conjuncts cs (over the join's output, whose columns
// from shift on are in's) over in, pushed down as far as they go.
func filterOver(in Node, cs []Expr, shift int) Node {
	if len(cs) == 0 {
		return in
	}
	cond := andAll(cs)
	if shift > 0 {
		used := map[int]bool{}
		columnsUsed(cond, used)
		m := map[int]int{}
		for c := range used {
			m[c] = c - shift
		}
		cond = remapColumns(cond, m)
	}
	return pushFilter(&Filter{Input: in, Cond: cond})
}

func andAll(cs []Expr) Expr {
	var out Expr
	for _, c := range cs {
		out = andMaybe(out, c)
	}
	return out
}

func andMaybe(a, b Expr) Expr {
	if a == nil {
		return b
	}
	return and(a, b)
}
