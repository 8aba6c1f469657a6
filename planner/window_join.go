package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Window joins (Flink's window join).
//
//	FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) L
//	[LEFT | RIGHT | FULL] JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) R
//	ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k [AND ...]
//
// A regular Join whose inputs are windowed with the same windows (kind,
// size, slide, offset) and whose condition equates both window_start and
// window_end of the two sides becomes a WindowJoin (rule windowJoins).
// A side is windowed when the columns equated are the window columns of a
// window table function, of a window aggregate's output or of a window
// TopN's (windowSource), reached through filters and projections that pass
// them through under any name: Nexmark q5 joins a window aggregate's
// counts with their cascaded maximum on starttime and endtime, its
// window_start and window_end renamed. The rows of each window are joined
// once, when the watermark passes the window's end, and the window's rows
// are then forgotten. A window aggregate or TopN emits a window's rows
// when the watermark fires it there, before it forwards that watermark, so
// they arrive here before the watermark that fires the window here: none
// is late. The output is append-only; outer joins emit their unmatched
// rows, padded, at that time. The other equalities are the join keys (the
// hash edges), the rest is the residual condition.
//
// Not made window joins: windows that differ between the sides, a join
// that equates only one of window_start and window_end, session and
// processing-time windows. Between window table functions they stay
// regular joins over bounded inputs and are errors over unbounded ones
// (checkWindowJoin); between aggregated windows they stay regular joins.

// WindowJoinType is the kind of a window join: the regular join types plus
// semi and anti joins (the left rows with a match, or without one, in the
// window). Semi and anti joins come from IN / EXISTS subqueries between
// two window table functions (window_semi_join.go).
type WindowJoinType uint8

// The window join types.
const (
	WindowInner WindowJoinType = iota
	WindowLeft
	WindowRight
	WindowFull
	WindowSemi
	WindowAnti
)

func (t WindowJoinType) String() string {
	return [...]string{"InnerJoin", "LeftOuterJoin", "RightOuterJoin", "FullOuterJoin", "LeftSemiJoin", "LeftAntiJoin"}[t]
}

// PadsRight reports whether unmatched left rows are emitted with the right
// columns NULL; PadsLeft the reverse.
func (t WindowJoinType) PadsRight() bool { return t == WindowLeft || t == WindowFull }
func (t WindowJoinType) PadsLeft() bool  { return t == WindowRight || t == WindowFull }

// LeftOnly reports whether the output is the left columns alone (semi and
// anti joins).
func (t WindowJoinType) LeftOnly() bool { return t == WindowSemi || t == WindowAnti }

func windowJoinType(t JoinType) WindowJoinType {
	return [...]WindowJoinType{WindowInner, WindowLeft, WindowRight, WindowFull, WindowSemi, WindowAnti}[t]
}

// WindowJoin joins the rows of Left and Right that are in the same window
// (equal window_start and window_end) and for which Cond is TRUE. Cond is
// over the left columns then the right ones (the output of the regular
// join it replaces) and includes the window equalities. LeftStart,
// LeftEnd, RightStart and RightEnd are the window columns in each input.
type WindowJoin struct {
	Left, Right          Node
	Type                 WindowJoinType
	Cond                 Expr
	Window               WindowSpec
	LeftStart, LeftEnd   int
	RightStart, RightEnd int
	Pos                  sql.Pos
	cols                 types.Schema
}

// Schema: as the regular join's (left columns then right ones, padded sides
// nullable, repeated names suffixed); semi and anti joins: the left
// columns.
func (w *WindowJoin) Schema() types.Schema {
	if w.cols != nil {
		return w.cols
	}
	if w.Type.LeftOnly() {
		w.cols = w.Left.Schema()
		return w.cols
	}
	jt := InnerJoin
	switch w.Type {
	case WindowLeft:
		jt = LeftJoin
	case WindowRight:
		jt = RightJoin
	case WindowFull:
		jt = FullJoin
	}
	w.cols = (&Join{Left: w.Left, Right: w.Right, Type: jt}).Schema()
	return w.cols
}

func (w *WindowJoin) Children() []Node { return []Node{w.Left, w.Right} }
func (w *WindowJoin) WithChildren(ch []Node) Node {
	c := *w
	c.Left, c.Right, c.cols = ch[0], ch[1], nil
	return &c
}
func (w *WindowJoin) Expressions() []Expr { return []Expr{w.Cond} }
func (w *WindowJoin) WithExpressions(es []Expr) Node {
	c := *w
	c.Cond = es[0]
	return &c
}

// Mode: each window's result is emitted once: append-only (the inputs are
// window table functions, window aggregates or window TopNs, all
// append-only).
func (*WindowJoin) Mode([]Mode) Mode { return AppendOnly }

// UpsertKey: none (an append-only output).
func (*WindowJoin) UpsertKey([][]int) []int { return nil }

func (w *WindowJoin) Describe() string {
	return "WindowJoin(joinType=[" + w.Type.String() + "], window=[" + w.Window.String() + "], where=[" +
		describeOver(w.Cond, w.condSchema()) + "], select=[" + strings.Join(w.Schema().Names(), ", ") + "])"
}

// condSchema is the schema Cond reads: the left columns then the right
// ones, named as the regular join names them.
func (w *WindowJoin) condSchema() types.Schema {
	if !w.Type.LeftOnly() {
		return w.Schema()
	}
	return (&Join{Left: w.Left, Right: w.Right}).Schema()
}

// prune: the rule runs after projection pruning; the join keeps its
// inputs' columns.
func (w *WindowJoin) prune([]bool) (Node, map[int]int) { return keepAll(w) }

// Rule: window joins. Runs after projection pruning.
func windowJoins(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		if j, ok := n.(*Join); ok {
			if w := toWindowJoin(j); w != nil {
				return w
			}
		}
		return n
	})
}

func toWindowJoin(j *Join) *WindowJoin {
	nl, nr := len(j.Left.Schema()), len(j.Right.Schema())
	cond := splitJoinCond(j.Cond, nl, nr)
	w := &WindowJoin{Left: j.Left, Right: j.Right, Type: windowJoinType(j.Type), Cond: j.Cond, Pos: j.Pos,
		LeftStart: -1, LeftEnd: -1, RightStart: -1, RightEnd: -1}
	var ls, rs Node
	var lw, rw WindowSpec
	for _, p := range cond.pairs {
		if p.left.expr != nil || p.right.expr != nil {
			continue
		}
		lsrc, lspec, lc := windowSource(j.Left, p.left.col)
		rsrc, rspec, rc := windowSource(j.Right, p.right.col)
		if lsrc == nil || rsrc == nil || lc != rc || lc == 2 {
			continue
		}
		if (ls != nil && ls != lsrc) || (rs != nil && rs != rsrc) {
			return nil
		}
		ls, rs, lw, rw = lsrc, rsrc, lspec, rspec
		if lc == 0 {
			w.LeftStart, w.RightStart = p.left.col, p.right.col
		} else {
			w.LeftEnd, w.RightEnd = p.left.col, p.right.col
		}
	}
	if ls == nil || w.LeftStart < 0 || w.LeftEnd < 0 || !sameWindow(lw, rw) || lw.Proctime || rw.Proctime || lw.Kind == "SESSION" {
		return nil
	}
	w.Window = lw
	if _, tvf := ls.(*WindowTVF); !tvf {
		// The windows of a windowed operator's output: named by the left
		// input's window columns.
		names := j.Left.Schema()
		w.Window.Attached = true
		w.Window.StartCol, w.Window.StartName = w.LeftStart, names[w.LeftStart].Name
		w.Window.TimeCol, w.Window.TimeName = w.LeftEnd, names[w.LeftEnd].Name
	}
	noTTL("a window join", j.stateTTL[:]...)
	return w
}

// sameWindow reports whether two window table functions make the same
// windows.
func sameWindow(a, b WindowSpec) bool {
	return a.Kind == b.Kind && a.Size == b.Size && a.Slide == b.Slide && a.Offset == b.Offset
}

// windowJoinCond is a window join's condition split: the join keys (the
// equalities other than the window's) and the residual.
func (w *WindowJoin) split() joinCond {
	nl, nr := len(w.Left.Schema()), len(w.Right.Schema())
	cond := splitJoinCond(w.Cond, nl, nr)
	var keys []joinPair
	for _, p := range cond.pairs {
		if p.left.expr == nil && p.right.expr == nil &&
			((p.left.col == w.LeftStart && p.right.col == w.RightStart) || (p.left.col == w.LeftEnd && p.right.col == w.RightEnd)) {
			continue
		}
		keys = append(keys, p)
	}
	cond.pairs = keys
	return cond
}

// The kind of a window join.
const KindWindowJoin = "WindowJoin"

// WindowJoinSpec is a window join as the runtime runs it.
//
// Input 0 is the left input, input 1 the right; their rows arrive hashed
// by LeftHash and RightHash: the join keys, or the window end when there
// are none. Each input's row is kept, by window and join key, until the
// watermark passes the window's end (window_time, end - 1 ms, at most the
// watermark); then the window's rows are joined, emitted (+I only) and
// dropped. A pair joins when their keys are equal, no key is NULL, and
// Residual (over the left columns then the right ones; nil: TRUE) is
// TRUE. A row whose window has fired when it arrives is late: counted,
// never joined. The output is the first LeftWidth columns of the left
// input followed by the first RightWidth columns of the right (none for
// semi and anti joins, whose output is the left columns alone); columns
// after those are keys computed for the join.
type WindowJoinSpec struct {
	Type                 WindowJoinType
	Window               WindowSpec
	LeftKeys, RightKeys  []int
	LeftHash, RightHash  []int
	LeftStart, LeftEnd   int
	RightStart, RightEnd int
	Residual             Expr
	LeftWidth            int
	RightWidth           int
	LeftSchema           types.Schema
	RightSchema          types.Schema
	// PairSchema is the schema of a joined pair (the left columns then the
	// right ones), which Residual reads.
	PairSchema types.Schema
	describe   string
}

func (*WindowJoinSpec) Kind() string                { return KindWindowJoin }
func (*WindowJoinSpec) KeepsKeyedState() bool       { return true }
func (s *WindowJoinSpec) Describe(*Operator) string { return s.describe }

// Identity: the join type, the window, the keys, the window columns, the
// residual and the output widths (they give the state its layout).
func (s *WindowJoinSpec) Identity(w *IDWriter) {
	w.Int(int64(s.Type))
	w.Str(s.Window.Kind)
	w.Int(s.Window.Size)
	w.Int(s.Window.Slide)
	w.Int(s.Window.Offset)
	w.Ints(s.LeftKeys)
	w.Ints(s.RightKeys)
	w.Ints([]int{s.LeftStart, s.LeftEnd, s.RightStart, s.RightEnd})
	if s.Residual != nil {
		w.Expr(s.Residual)
	} else {
		w.Str("")
	}
	w.Int(int64(s.LeftWidth))
	w.Int(int64(s.RightWidth))
}

// physical: as a regular join's, the keys hash both inputs (an expression
// key is computed by a projection below the join); without keys the rows
// are hashed by window end, so that a window's rows meet on one subtask.
func (w *WindowJoin) physical(b *physBuilder, o *Operator) {
	ls, rs := w.Left.Schema(), w.Right.Schema()
	nl, nr := len(ls), len(rs)
	cond := w.split()
	names := w.condSchema()
	ki := layJoinKeys(b, w.Left, w.Right, cond.pairs, names)
	lin, rin, lKeys, rKeys := ki.left, ki.right, ki.lKeys, ki.rKeys
	var eq []string
	for i := range ki.lNames {
		eq = append(eq, fmt.Sprintf("=(%s, %s)", ki.lNames[i], ki.rNames[i]))
	}
	spec := &WindowJoinSpec{
		Type: w.Type, Window: w.Window, LeftKeys: lKeys, RightKeys: rKeys,
		LeftStart: w.LeftStart, LeftEnd: w.LeftEnd, RightStart: w.RightStart, RightEnd: w.RightEnd,
		Residual: cond.residual, LeftWidth: nl, RightWidth: nr,
		LeftSchema: lin.Schema, RightSchema: rin.Schema,
	}
	spec.PairSchema = names
	spec.LeftHash, spec.RightHash = lKeys, rKeys
	if len(lKeys) == 0 {
		spec.LeftHash, spec.RightHash = []int{w.LeftEnd}, []int{w.RightEnd}
	}
	d := "WindowJoin(joinType=[" + w.Type.String() + "], window=[" + w.Window.String() + "]"
	d += fmt.Sprintf(", windowStart=[=(%s, %s)], windowEnd=[=(%s, %s)]",
		names[w.LeftStart].Name, names[nl+w.RightStart].Name, names[w.LeftEnd].Name, names[nl+w.RightEnd].Name)
	d += ", keys=[" + strings.Join(eq, ", ") + "]"
	if cond.residual != nil {
		d += ", residual=[" + describeOver(cond.residual, names) + "]"
	}
	spec.describe = d + ", select=[" + strings.Join(w.Schema().Names(), ", ") + "])"
	o.Spec = spec
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: lin, Partition: Hash, Keys: spec.LeftHash}, {From: rin, Partition: Hash, Keys: spec.RightHash}}
}

// checkWindowJoin rejects what a window join cannot do as asked: its late
// rows are counted (SHOW JOBS), never routed, so a late-records table set
// for its windows is an error rather than a table that stays empty.
//
// A regular join of unbounded window table functions that equates their
// window_start or window_end but is no window join (the windows differ,
// only one of the two is equated, or they are processing-time windows) is
// an error too, as in Flink: as a regular join it would keep every row
// forever. Over bounded inputs it stays a regular join, which gives the
// rows the window join would.
func checkWindowJoin(n Node) error {
	if j, ok := n.(*Join); ok && !IsBounded(j) {
		return notWindowJoin(j)
	}
	w, ok := n.(*WindowJoin)
	if !ok {
		return nil
	}
	for _, side := range []struct {
		in  Node
		col int
	}{{w.Left, w.LeftStart}, {w.Right, w.RightStart}} {
		if tvf, _ := windowCol(side.in, side.col); tvf != nil && tvf.Late != nil {
			return errAt(ErrUnsupported, w.Pos, "RESET '"+OptLateRecordsTable+"' for this statement: the job counts a window join's late rows (SHOW JOBS)",
				"a window join does not route its late rows to the late-records table '%s' ('%s' applies to window aggregations)", tvf.Late.Table.Name, OptLateRecordsTable)
		}
	}
	return nil
}

// notWindowJoin says why a join that equates window columns of two window
// table functions was not made a window join (nil: it equates none).
func notWindowJoin(j *Join) error {
	nl, nr := len(j.Left.Schema()), len(j.Right.Schema())
	var lw, rw *WindowTVF
	seen := [2]bool{}
	for _, p := range splitJoinCond(j.Cond, nl, nr).pairs {
		if p.left.expr != nil || p.right.expr != nil {
			continue
		}
		lt, lc := windowCol(j.Left, p.left.col)
		rt, rc := windowCol(j.Right, p.right.col)
		if lt == nil || rt == nil || lc != rc || lc == 2 {
			continue
		}
		lw, rw = lt, rt
		seen[lc] = true
	}
	switch {
	case lw == nil:
		return nil
	case !sameWindow(lw.Window, rw.Window):
		return errAt(ErrUnsupported, j.Pos, "window both sides with the same window table function, size, slide and offset",
			"a window join needs the same windows on both sides, but the left is %s and the right %s", lw.Window, rw.Window)
	case !seen[0] || !seen[1]:
		return errAt(ErrUnsupported, j.Pos, "add L.window_start = R.window_start AND L.window_end = R.window_end",
			"a window join must equate both window_start and window_end of its inputs; this join equates only %s",
			map[bool]string{true: "window_start", false: "window_end"}[seen[0]])
	case lw.Window.Proctime:
		return errAt(ErrUnsupported, j.Pos, "window the inputs by an event-time attribute (a column with a WATERMARK)",
			"window joins over processing-time windows are not supported")
	}
	return nil
}

// isRowtime reports whether output column col is a time attribute: the
// window_time of a side that is never padded (a window's rows are emitted
// when the watermark passes their window_time, before the watermark goes
// on, so a window over it downstream finds none of them late).
func (w *WindowJoin) isRowtime(col int) bool {
	nl := len(w.Left.Schema())
	in, c, padded := w.Left, col, w.Type.PadsLeft()
	if col >= nl {
		in, c, padded = w.Right, col-nl, w.Type.PadsRight()
	}
	if padded {
		return false
	}
	_, _, which := windowSource(in, c)
	return which == 2 && isRowtime(in, c)
}
