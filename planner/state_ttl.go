package planner

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// The STATE_TTL hint (Flink's): SELECT /*+ STATE_TTL('orders' = '1d',
// 'o' = '12h') */ ... gives the state of one input of the query block's
// stateful operators a TTL of its own, overriding 'table.exec.state.ttl':
//
//   - a regular join: each side that is an input of the block (a table,
//     view or subquery, named by its alias when it has one) takes the TTL
//     of its name. In a chain a JOIN b JOIN c that is both sides of the
//     first join and the right side of each later one; the left side of a
//     later join (the join below it) keeps the job's TTL, as in Flink;
//   - a group aggregation (GROUP BY, DISTINCT) over a block with one input
//     takes that input's TTL. In a block that joins, the hints go to the
//     joins and the aggregate keeps the job's TTL.
//
// A key that names no input of the block, an input no regular join or
// group aggregation keeps state for, or one whose operator keeps no TTL
// (window aggregates and window, interval and temporal joins: their state
// ends with the watermark) is an error at the key.

// ttlHint is one entry of a STATE_TTL hint.
type ttlHint struct {
	name string
	ttl  time.Duration
	pos  sql.Pos
	// lostTo names what the hinted join or aggregate became when the
	// optimizer made it an operator that keeps no TTL (an interval join,
	// a window join, a window aggregate); checkTTLHints reports it.
	lostTo string
}

// hintLog collects a statement's STATE_TTL hints, views' included, for
// checkTTLHints.
type hintLog struct{ hints []*ttlHint }

// blockInput is one input of a query block's FROM, as bindTableSource
// bound it.
type blockInput struct {
	name   string // the alias, else the table or view name
	table  string // the table or view name ("" for a subquery)
	node   Node
	window bool // a window table function
}

// noTTL records that hinted join or aggregate hints became what, which
// keeps no TTL.
func noTTL(what string, hints ...*ttlHint) {
	for _, h := range hints {
		if h != nil && h.lostTo == "" {
			h.lostTo = what
		}
	}
}

// ttlOf is the TTL an operator runs with: the hint's, else the job's.
func ttlOf(h *ttlHint, job time.Duration) time.Duration {
	if h != nil {
		return h.ttl
	}
	return job
}

// readTTLHints parses the STATE_TTL hints of sel (nil: none).
func (b *binder) readTTLHints(sel *ast.SelectStmt) ([]*ttlHint, error) {
	opts := sql.StateTTLHints(b.stmt, sel)
	if len(opts) == 0 {
		return nil, nil
	}
	var out []*ttlHint
	for _, o := range opts {
		d, err := types.ParseDuration(o.Value)
		if err != nil || d < 0 {
			return nil, errAt(ErrUnsupported, o.Pos, "write a duration such as '1d', '12h' or '30 min'",
				"STATE_TTL of '%s': '%s' is not a duration", o.Key, o.Value)
		}
		out = append(out, &ttlHint{name: o.Key, ttl: d, pos: o.Pos})
	}
	if b.hints == nil {
		b.hints = &hintLog{}
	}
	b.hints.hints = append(b.hints.hints, out...)
	return out, nil
}

// applyTTLHints gives the block's joins (in from, the bound FROM) and its
// group aggregate (agg, nil if none) the TTLs of hints, whose keys must
// name inputs.
func (b *binder) applyTTLHints(hints []*ttlHint, inputs []blockInput, from Node, agg *Aggregate) error {
	byInput := map[Node]*ttlHint{}
	for _, h := range hints {
		in, err := findHintInput(h, inputs)
		if err != nil {
			return err
		}
		if in.window {
			return errAt(ErrUnsupported, h.pos, "remove the hint: a window's state is dropped when the window fires",
				"STATE_TTL of '%s': a window table function's aggregates and joins keep no TTL", h.name)
		}
		byInput[in.node] = h
	}
	used := map[*ttlHint]bool{}
	var walk func(n Node) error
	walk = func(n Node) error {
		switch x := n.(type) {
		case *Join:
			for side, ch := range []Node{x.Left, x.Right} {
				if h, ok := byInput[ch]; ok {
					x.stateTTL[side], used[h] = h, true
				} else if err := walk(ch); err != nil {
					return err
				}
			}
		case *TemporalJoin:
			for _, ch := range []Node{x.Left, x.Right} {
				if h, ok := byInput[ch]; ok {
					return errAt(ErrUnsupported, h.pos, "remove the hint: the watermark cleans a temporal join's versions",
						"STATE_TTL of '%s': a temporal join keeps no TTL", h.name)
				}
				if err := walk(ch); err != nil {
					return err
				}
			}
		case *Project:
			if _, ok := byInput[x]; !ok { // a join's USING columns
				return walk(x.Input)
			}
		}
		return nil
	}
	if err := walk(from); err != nil {
		return err
	}
	if h, ok := byInput[from]; ok && agg != nil {
		agg.stateTTL, used[h] = h, true
	}
	for _, h := range hints {
		if !used[h] {
			return errAt(ErrUnsupported, h.pos, "a STATE_TTL hint applies to the regular joins and the group aggregation of its query block",
				"STATE_TTL of '%s': no regular join or group aggregation of this query block keeps state for it", h.name)
		}
	}
	return nil
}

// findHintInput returns the input of the block h names: by alias when the
// input has one (as Flink requires), else by table or view name.
func findHintInput(h *ttlHint, inputs []blockInput) (blockInput, error) {
	for _, in := range inputs {
		if strings.EqualFold(in.name, h.name) {
			return in, nil
		}
	}
	var names []string
	hint := ""
	for _, in := range inputs {
		names = append(names, "'"+in.name+"'")
		if in.table != "" && !strings.EqualFold(in.table, in.name) && strings.EqualFold(in.table, h.name) {
			hint = fmt.Sprintf("'%s' is read as '%s' here: name the alias", in.table, in.name)
		}
	}
	sort.Strings(names)
	if hint == "" {
		hint = "name a table, view or alias of this query block's FROM: " + strings.Join(names, ", ")
		if len(names) == 0 {
			hint = "this query block reads no table"
		}
	}
	return blockInput{}, errAt(ErrUnknownTable, h.pos, hint, "STATE_TTL names '%s', which is not an input of this query block", h.name)
}

// checkTTLHints fails for a hint whose join or aggregate the optimizer
// made an operator that keeps no TTL.
func checkTTLHints(l *hintLog) error {
	if l == nil {
		return nil
	}
	for _, h := range l.hints {
		if h.lostTo != "" {
			return errAt(ErrUnsupported, h.pos, "remove the hint: the watermark ends this state",
				"STATE_TTL of '%s': it is an input of %s, which keeps no TTL", h.name, h.lostTo)
		}
	}
	return nil
}
