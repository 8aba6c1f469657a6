package sql

// GROUP BY GROUPING SETS (...), ROLLUP (...) and CUBE (...) (Flink's and
// the SQL standard's grouping sets) are unknown to the TiDB parser, which
// takes GROUP BY a list of expressions: the rewrite turns each into a call
// of a function of ours, which the planner reads back as grouping sets.
//
//	GROUP BY GROUPING SETS ((a, b), a, ())  ->  GROUP BY __grouping_sets(__set(a, b), a, __set())
//	GROUP BY ROLLUP (a, b), CUBE (c)        ->  GROUP BY __rollup(a, b), __cube(c)
//
// An element of GROUPING SETS in parentheses is one grouping set of those
// expressions (a RowExpr to the parser if it has two or more, so it gets
// the __set call); an element that is a bare expression, ROLLUP or CUBE
// stands for its own sets. Inside ROLLUP and CUBE, (a, b) is one composite
// element (a RowExpr).
const (
	GroupingSetsFunc = "__grouping_sets"
	GroupingSetFunc  = "__set"
	RollupFunc       = "__rollup"
	CubeFunc         = "__cube"
)

// groupingSets rewrites GROUPING SETS ( at toks[i] (its elements in
// parentheses become __set calls) and returns the index of its closing
// parenthesis, or -1 when toks[i] does not start one.
func (p *stmtParser) groupingSets(i, hi int) ([]edit, int) {
	toks := p.sc.toks
	if i+2 >= hi || !toks[i+1].is("SETS") || !toks[i+2].isPunct("(") {
		return nil, -1
	}
	open := i + 2
	c := p.closing(open)
	edits := []edit{{toks[i].off, toks[i+1].end, GroupingSetsFunc}}
	// The elements: after the '(' and after each ',' at depth one.
	depth := 0
	for j := open; j < c; j++ {
		t := toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		}
		if depth == 1 && (j == open || t.isPunct(",")) && j+1 < c && toks[j+1].isPunct("(") {
			edits = append(edits, edit{toks[j+1].off, toks[j+1].off, GroupingSetFunc})
		}
	}
	return edits, c
}
