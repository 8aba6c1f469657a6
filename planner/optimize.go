package planner

import (
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/types"
)

// Optimize applies the rewrite rules, in order, to a bound plan.
func Optimize(n Node) Node {
	for _, r := range rules {
		n = r.apply(n)
	}
	return n
}

// optimize is Optimize, which stops with the planning context's error
// once it is done.
func (p *Planner) optimize(n Node) (Node, error) {
	for _, r := range rules {
		if err := p.ctxErr(); err != nil {
			return nil, err
		}
		n = r.apply(n)
	}
	return n, nil
}

type rule struct {
	name  string
	apply func(Node) Node
}

// rules run in this order; each lives in its own rule_*.go file.
var rules = []rule{
	{"constant folding", foldConstants},
	{"predicate pushdown", pushPredicates},
	{"constant folding", foldConstants},
	{"join order", orderJoins},
	{"rank ranges", rankFilters},
	{"projection pruning", pruneColumns},
	{"ROW field pruning", pruneRowFields},
	{"window aggregation", windowAggregates},
	{"window rank", windowRanks},
	// Again: a GROUP BY of a window TopN's window columns (the TopN is a
	// WindowRank only now).
	{"window aggregation", windowAggregates},
	// After the window aggregates: a join may bound a window aggregate's
	// window_time.
	{"interval joins", intervalJoins},
	{"window join", windowJoins},
}

func lookupAnd() (functions.Resolved, bool) {
	f, ok := functions.Lookup("AND")
	if !ok {
		return functions.Resolved{}, false
	}
	r, err := f.Resolve([]types.T{types.BooleanType, types.BooleanType})
	return r, err == nil
}
