package planner

import (
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Window TopN and window deduplication (Flink's WindowRank and
// WindowDeduplicate).
//
//	SELECT * FROM (
//	  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end [, k ...] ORDER BY v DESC) AS rn
//	  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE))
//	) WHERE rn <= 3
//
// A Rank with a rank range whose partition keys include window_start and
// window_end of one window table function (TUMBLE, HOP, CUMULATE), of one
// window aggregate's output or of one window TopN's (windowSource),
// reached through filters and projections that pass them through, and
// whose input is append-only, becomes a
// WindowRank (rule windowRanks): the rows of each window and key are
// ranked once, when the watermark passes the window's end, the rows of the
// range emitted (+I only) and the window's rows forgotten. Its output is
// append-only. ROW_NUMBER's first row by a time attribute (rn = 1, not
// output) is a window deduplication. A partition without both window
// columns stays the regular TopN (rank.go).

// WindowRank is a Rank (Rank) whose partition includes the window columns
// StartCol and EndCol of its input, of windows Window.
type WindowRank struct {
	Rank             *Rank
	Window           WindowSpec
	StartCol, EndCol int
}

func (w *WindowRank) Schema() types.Schema { return w.Rank.Schema() }
func (w *WindowRank) Children() []Node     { return []Node{w.Rank.Input} }
func (w *WindowRank) WithChildren(ch []Node) Node {
	c := *w
	c.Rank = w.Rank.WithChildren(ch).(*Rank)
	return &c
}

// Expressions: a window rank reads its input's columns by index.
func (*WindowRank) Expressions() []Expr           { return nil }
func (w *WindowRank) WithExpressions([]Expr) Node { return w }

// Mode: each window's rows are emitted once: append-only.
func (*WindowRank) Mode([]Mode) Mode { return AppendOnly }

// UpsertKey: none (an append-only output).
func (*WindowRank) UpsertKey([][]int) []int { return nil }

func (w *WindowRank) Describe() string { return describeWindowRank(w, w.Schema()) }

// describeWindowRank is the rank's line with its name prefixed by Window
// and the window first.
func describeWindowRank(w *WindowRank, out types.Schema) string {
	d := describeRank(w.Rank, out)
	i := strings.IndexByte(d, '(')
	return "Window" + d[:i+1] + "window=[" + w.Window.String() + "], " + d[i+1:]
}

// prune: the rule runs after projection pruning; the rank keeps its
// input's columns.
func (w *WindowRank) prune([]bool) (Node, map[int]int) { return keepAll(w) }

// physical: the rows are hashed by the partition keys, window columns
// included, so a window's rows of one key meet on one subtask.
func (w *WindowRank) physical(b *physBuilder, o *Operator) {
	in := b.build(w.Rank.Input)
	o.Spec = &WindowRankSpec{Rank: w.Rank, Window: w.Window, StartCol: w.StartCol, EndCol: w.EndCol}
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: in, Partition: Hash, Keys: w.Rank.Partition}}
}

// isRowtime: the input's time attributes pass through (a window's rows
// are emitted when the watermark passes its window_time, before the
// watermark goes on).
func (w *WindowRank) isRowtime(col int) bool {
	return col < len(w.Rank.Input.Schema()) && isRowtime(w.Rank.Input, col)
}

// Rule: window TopN. Runs after window aggregation.
func windowRanks(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		if r, ok := n.(*Rank); ok {
			if w := toWindowRank(r); w != nil {
				return w
			}
		}
		return n
	})
}

func toWindowRank(r *Rank) *WindowRank {
	if r.Start == 0 || r.FromLimit || ModeOf(r.Input) != AppendOnly {
		return nil
	}
	w := &WindowRank{Rank: r, StartCol: -1, EndCol: -1}
	var src Node
	for _, k := range r.Partition {
		s, spec, which := windowSource(r.Input, k)
		if s == nil || which == 2 {
			continue
		}
		if src != nil && src != s {
			return nil
		}
		src, w.Window = s, spec
		if which == 0 {
			w.StartCol = k
		} else {
			w.EndCol = k
		}
	}
	if w.StartCol < 0 || w.EndCol < 0 {
		return nil
	}
	return w
}

// KindWindowRank is the operator of a WindowRank node.
const KindWindowRank = "WindowRank"

// WindowRankSpec is a window TopN or deduplication as the runtime runs it:
// the rows arrive hashed by the partition keys (window columns included);
// per window and key the first End rows in order (Rank.Order, a row after
// the rows equal to it; a deduplication keeping the last row: before
// them) are kept until the watermark passes the window's end (window_time,
// end - 1 ms, at most the watermark); then the rows numbered Start..End are
// emitted (+I, with the row number when Rank.OutputRank) and the window
// dropped. A row whose window has fired when it arrives is late: counted,
// never ranked.
type WindowRankSpec struct {
	Rank             *Rank
	Window           WindowSpec
	StartCol, EndCol int
}

func (*WindowRankSpec) Kind() string          { return KindWindowRank }
func (*WindowRankSpec) KeepsKeyedState() bool { return true }
func (s *WindowRankSpec) Describe(o *Operator) string {
	return describeWindowRank(&WindowRank{Rank: s.Rank, Window: s.Window}, o.Schema)
}

// Identity: the rank's (partition, order, range, row number output, which
// of equal rows wins), the window and its columns.
func (s *WindowRankSpec) Identity(w *IDWriter) {
	(&RankSpec{Rank: s.Rank}).Identity(w)
	w.Str(s.Window.Kind)
	w.Int(s.Window.Size)
	w.Int(s.Window.Slide)
	w.Int(s.Window.Offset)
	w.Ints([]int{s.StartCol, s.EndCol})
}

// NewerFirst: as RankSpec.NewerFirst (a window deduplication keeping the
// last row).
func (s *WindowRankSpec) NewerFirst() bool { return (&RankSpec{Rank: s.Rank}).NewerFirst() }
