package planner

// Rule: join order. A tree of inner joins (comma joins, CROSS JOIN,
// [INNER] JOIN) runs in the order written, unless that order joins two
// inputs with no equality between them (a cross product) while another
// order would not: then the inputs are joined greedily, each next one the
// first as written that an equality ties to those joined so far (the first
// left when none is), and a projection puts the columns back in their
// written order. Each conjunct of the conditions goes to the lowest join
// that has its columns. FROM t1, t2, t3 WHERE t1.a = t3.a AND t3.b = t2.b
// joins t1 with t3, then t2, instead of the product of t1 and t2.
//
// Flink keeps the written order unless 'table.optimizer.join-reorder-enabled'
// is set; the SQLite suites list up to 64 tables in a shuffled order, whose
// cross products cannot finish. The result is the same either way.

func orderJoins(n Node) Node {
	if j, ok := n.(*Join); ok && reorderable(j) {
		var c joinChain
		c.flatten(j, 0)
		if c.ok && c.avoidableProduct() {
			for i, l := range c.leaves {
				c.leaves[i] = orderJoins(l)
			}
			return c.rebuild(j)
		}
	}
	ch := n.Children()
	if len(ch) == 0 {
		return n
	}
	out := make([]Node, len(ch))
	changed := false
	for i, x := range ch {
		out[i] = orderJoins(x)
		changed = changed || out[i] != x
	}
	if !changed {
		return n
	}
	return n.WithChildren(out)
}

// reorderable: an inner join without STATE_TTL hints (which name its sides).
func reorderable(j *Join) bool {
	return j.Type == InnerJoin && j.stateTTL[0] == nil && j.stateTTL[1] == nil
}

// joinChain is a tree of inner joins flattened: its inputs (leaves) in
// written order, whose columns, concatenated, are the tree's output, and
// the conjuncts of its conditions over those columns.
type joinChain struct {
	leaves []Node
	start  []int // the first column of each leaf
	conds  []Expr
	// joins counts the joins as written; crosses those without an
	// equality between their inputs.
	joins, crosses int
	ok             bool
}

func (c *joinChain) flatten(n Node, base int) {
	if c.leaves == nil {
		c.ok = true
	}
	j, isJoin := n.(*Join)
	if !isJoin || !reorderable(j) {
		c.leaves = append(c.leaves, n)
		c.start = append(c.start, base)
		return
	}
	nl := len(j.Left.Schema())
	c.flatten(j.Left, base)
	c.flatten(j.Right, base+nl)
	c.joins++
	if len(splitJoinCond(j.Cond, nl, len(j.Right.Schema())).pairs) == 0 {
		c.crosses++
	}
	if j.Cond == nil {
		return
	}
	for _, e := range conjunctsOf(j.Cond) {
		if !deterministic([]Expr{e}) {
			c.ok = false // keep it where it is written
		}
		c.conds = append(c.conds, shiftColumns(e, base))
	}
}

func shiftColumns(e Expr, by int) Expr {
	if by == 0 {
		return e
	}
	used := map[int]bool{}
	columnsUsed(e, used)
	m := map[int]int{}
	for c := range used {
		m[c] = c + by
	}
	return remapColumns(e, m)
}

// leafOf returns the leaf that column col (of the flattened output) is of.
func (c *joinChain) leafOf(col int) int {
	i := len(c.start) - 1
	for i > 0 && c.start[i] > col {
		i--
	}
	return i
}

// leavesOf returns the set of leaves e reads.
func (c *joinChain) leavesOf(e Expr) map[int]bool {
	used := map[int]bool{}
	columnsUsed(e, used)
	out := map[int]bool{}
	for col := range used {
		out[c.leafOf(col)] = true
	}
	return out
}

// ties reports whether e is an equality of an expression over the leaves
// in set and one over leaf next alone.
func (c *joinChain) ties(e Expr, set map[int]bool, next int) bool {
	call, ok := e.(*Call)
	if !ok || call.Func != "=" || len(call.Args) != 2 {
		return false
	}
	a, b := c.leavesOf(call.Args[0]), c.leavesOf(call.Args[1])
	in := func(s map[int]bool) bool {
		for l := range s {
			if !set[l] {
				return false
			}
		}
		return len(s) > 0
	}
	only := func(s map[int]bool) bool { return len(s) == 1 && s[next] }
	return in(a) && only(b) || in(b) && only(a)
}

// order returns the greedy join order of the leaves.
func (c *joinChain) order() []int {
	joined := map[int]bool{0: true}
	order := []int{0}
	for len(order) < len(c.leaves) {
		next := -1
		for l := range c.leaves {
			if joined[l] {
				continue
			}
			if next < 0 {
				next = l // the first left, if no equality ties any
			}
			tied := false
			for _, e := range c.conds {
				if c.ties(e, joined, l) {
					tied = true
					break
				}
			}
			if tied {
				next = l
				break
			}
		}
		joined[next] = true
		order = append(order, next)
	}
	return order
}

// avoidableProduct reports whether the written order has a cross product
// that the greedy order does not.
func (c *joinChain) avoidableProduct() bool {
	if c.crosses == 0 {
		return false
	}
	return c.productsIn(c.order()) < c.crosses
}

// productsIn counts the joins of order without an equality tying the next
// leaf to the ones before it.
func (c *joinChain) productsIn(order []int) int {
	joined := map[int]bool{order[0]: true}
	n := 0
	for _, l := range order[1:] {
		tied := false
		for _, e := range c.conds {
			if c.ties(e, joined, l) {
				tied = true
				break
			}
		}
		if !tied {
			n++
		}
		joined[l] = true
	}
	return n
}

// rebuild joins the leaves in the greedy order, left-deep, and projects
// the columns of the original join j in its order.
func (c *joinChain) rebuild(j *Join) Node {
	order := c.order()
	pos := map[int]int{} // flattened column -> column of the new tree
	width := func(l int) int { return len(c.leaves[l].Schema()) }
	place := func(l, at int) {
		for i := 0; i < width(l); i++ {
			pos[c.start[l]+i] = at + i
		}
	}
	placed := make([]bool, len(c.conds))
	joined := map[int]bool{order[0]: true}
	var tree Node = c.leaves[order[0]]
	place(order[0], 0)
	for _, l := range order[1:] {
		place(l, len(tree.Schema()))
		joined[l] = true
		var cond []Expr
		for i, e := range c.conds {
			if placed[i] {
				continue
			}
			all := true
			for leaf := range c.leavesOf(e) {
				all = all && joined[leaf]
			}
			if all {
				placed[i] = true
				cond = append(cond, remapColumns(e, pos))
			}
		}
		tree = &Join{Left: tree, Right: c.leaves[l], Type: InnerJoin, Cond: andAll(cond), Pos: j.Pos}
	}
	schema := j.Schema()
	ts := tree.Schema()
	p := &Project{Input: tree}
	for col, f := range schema {
		p.Exprs = append(p.Exprs, &ColumnRef{Index: pos[col], Name: ts[pos[col]].Name, T: ts[pos[col]].Type})
		p.Names = append(p.Names, f.Name)
	}
	return p
}
