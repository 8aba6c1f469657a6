package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// IntervalJoin is Flink's interval join: a join of two append-only inputs
// whose condition bounds the left input's time attribute by the right's,
//
//	R.time + Lower <= L.time <= R.time + Upper
//
// (BETWEEN, >=, >, <=, < with constant day-time intervals on either side;
// a strict bound moves by one microsecond, the finest event time). Its rows
// are those of the Join with the same condition, but it needs to keep a
// row only while a row of the other side that could still arrive (one not
// behind the watermark) can fall within its bounds, so its state stays as
// small as the bounds allow. Outer interval joins emit a preserved row
// padded with NULLs when it leaves the state without a match. The output
// is append-only and keeps both inputs' time attributes; its watermark is
// the inputs' held back by WatermarkDelay (IntervalJoinSpec).
//
// A regular Join becomes an IntervalJoin by the interval-joins rule when
// its condition has both bounds over two time attributes of append-only
// inputs; checkIntervalJoins reports the conditions of that shape that
// cannot run as one (a column that is no time attribute, an updating
// input, an empty interval).
type IntervalJoin struct {
	Left, Right Node
	Type        JoinType
	// LeftTime and RightTime are the time attributes, as columns of each
	// input.
	LeftTime, RightTime int
	// Lower and Upper bound L.time - R.time, in microseconds, inclusive.
	Lower, Upper int64
	// Rest is the rest of the join condition over the output columns (the
	// equalities that become the join keys and a residual; nil: TRUE).
	Rest Expr
	// Pos is where the join's condition is, for errors.
	Pos  sql.Pos
	cols types.Schema
}

// Schema: as the regular join's, the left columns then the right ones.
func (j *IntervalJoin) Schema() types.Schema {
	if j.cols == nil {
		j.cols = (&Join{Left: j.Left, Right: j.Right, Type: j.Type}).Schema()
	}
	return j.cols
}

func (j *IntervalJoin) Children() []Node { return []Node{j.Left, j.Right} }
func (j *IntervalJoin) WithChildren(ch []Node) Node {
	c := *j
	c.Left, c.Right, c.cols = ch[0], ch[1], nil
	return &c
}

func (j *IntervalJoin) Expressions() []Expr {
	if j.Rest == nil {
		return nil
	}
	return []Expr{j.Rest}
}
func (j *IntervalJoin) WithExpressions(es []Expr) Node {
	c := *j
	if len(es) > 0 {
		c.Rest = es[0]
	}
	return &c
}

// Mode: append-only (the rule converts only joins of append-only inputs,
// and a padded row is emitted once, when its row expires unmatched).
func (*IntervalJoin) Mode([]Mode) Mode { return AppendOnly }

// UpsertKey: none (an append-only stream of joined rows).
func (*IntervalJoin) UpsertKey([][]int) []int { return nil }

func (j *IntervalJoin) Describe() string {
	s := j.Schema()
	nl := len(j.Left.Schema())
	d := "IntervalJoin(joinType=[" + j.Type.String() + "], windowBounds=[isRowTime=true, " +
		j.boundsText(s[j.LeftTime].Name, s[nl+j.RightTime].Name) + "]"
	if j.Rest != nil {
		d += ", where=[" + describeOver(j.Rest, s) + "]"
	}
	return d + ", select=[" + strings.Join(s.Names(), ", ") + "])"
}

func (j *IntervalJoin) boundsText(lname, rname string) string {
	return fmt.Sprintf("leftLowerBound=%s, leftUpperBound=%s, leftTimeIndex=%d(%s), rightTimeIndex=%d(%s)",
		boundMillis(j.Lower), boundMillis(j.Upper), j.LeftTime, lname, j.RightTime, rname)
}

// boundMillis prints a bound in microseconds as milliseconds, Flink's
// unit, with the fraction a strict bound adds.
func boundMillis(us int64) string {
	if us%1000 == 0 {
		return strconv.FormatInt(us/1000, 10)
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 3, 64)
}

// prune: each input keeps what is needed above, its time attribute and
// what the rest of the condition reads.
func (j *IntervalJoin) prune(need []bool) (Node, map[int]int) {
	nl := len(j.Left.Schema())
	nr := len(j.Right.Schema())
	used := map[int]bool{j.LeftTime: true, nl + j.RightTime: true}
	if j.Rest != nil {
		columnsUsed(j.Rest, used)
	}
	ln, rn := make([]bool, nl), make([]bool, nr)
	for i := 0; i < nl+nr; i++ {
		if !used[i] && (i >= len(need) || !need[i]) {
			continue
		}
		if i < nl {
			ln[i] = true
		} else {
			rn[i-nl] = true
		}
	}
	l, lm := prune(j.Left, ln)
	r, rm := prune(j.Right, rn)
	m := map[int]int{}
	nl2 := len(l.Schema())
	for i, ok := range ln {
		if ok {
			m[i] = lm[i]
		}
	}
	for i, ok := range rn {
		if ok {
			m[nl+i] = nl2 + rm[i]
		}
	}
	out := &IntervalJoin{Left: l, Right: r, Type: j.Type, LeftTime: lm[j.LeftTime], RightTime: rm[j.RightTime],
		Lower: j.Lower, Upper: j.Upper, Pos: j.Pos}
	if j.Rest != nil {
		out.Rest = remapColumns(j.Rest, m)
	}
	return out, m
}

// intervalBounds is the time bounds found in a join condition.
type intervalBounds struct {
	leftTime, rightTime int // input columns
	lower, upper        int64
	rest                Expr
	pos                 sql.Pos // the first bound's
}

// timeBound is one conjunct L.time >= R.time + k (lower) or L.time <=
// R.time + k (upper), k in microseconds.
type timeBound struct {
	leftTime, rightTime int
	lower               bool
	k                   int64
	pos                 sql.Pos
}

// findIntervalBounds looks in j's condition for a lower and an upper bound
// of one left TIMESTAMP column by one right TIMESTAMP column (the first
// such pair in the condition's order); the bounds of that pair are
// combined (the largest lower, the smallest upper) and the other
// conjuncts are the rest.
func findIntervalBounds(j *Join) (intervalBounds, bool) {
	if j.Cond == nil {
		return intervalBounds{}, false
	}
	nl := len(j.Left.Schema())
	cs := conjunctsOf(j.Cond)
	bounds := make([]*timeBound, len(cs))
	for i, c := range cs {
		if b, ok := parseTimeBound(c, nl); ok {
			bounds[i] = &b
		}
	}
	for _, first := range bounds {
		if first == nil {
			continue
		}
		out := intervalBounds{leftTime: first.leftTime, rightTime: first.rightTime, pos: first.pos}
		var hasLo, hasHi bool
		var rest []Expr
		for i, b := range bounds {
			if b == nil || b.leftTime != first.leftTime || b.rightTime != first.rightTime {
				rest = append(rest, cs[i])
				continue
			}
			if b.lower {
				if !hasLo || b.k > out.lower {
					out.lower = b.k
				}
				hasLo = true
			} else {
				if !hasHi || b.k < out.upper {
					out.upper = b.k
				}
				hasHi = true
			}
		}
		if !hasLo || !hasHi {
			continue
		}
		for _, c := range rest {
			if out.rest == nil {
				out.rest = c
			} else {
				out.rest = and(out.rest, c)
			}
		}
		return out, true
	}
	return intervalBounds{}, false
}

// parseTimeBound reads a comparison of a time term of one input with a
// time term of the other (timeTerm) as a bound of L.time by R.time.
func parseTimeBound(e Expr, nl int) (timeBound, bool) {
	c, ok := e.(*Call)
	if !ok || len(c.Args) != 2 {
		return timeBound{}, false
	}
	switch c.Func {
	case ">=", ">", "<=", "<":
	default:
		return timeBound{}, false
	}
	ac, ak, ok1 := timeTerm(c.Args[0])
	bc, bk, ok2 := timeTerm(c.Args[1])
	if !ok1 || !ok2 || (ac < nl) == (bc < nl) {
		return timeBound{}, false
	}
	op := c.Func
	var b timeBound
	if ac < nl { // L + ak op R + bk
		b = timeBound{leftTime: ac, rightTime: bc - nl, k: bk - ak}
	} else { // R + ak op L + bk: L flip(op) R + ak - bk
		b = timeBound{leftTime: bc, rightTime: ac - nl, k: ak - bk}
		op = map[string]string{">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op]
	}
	b.pos = c.Pos
	switch op {
	case ">=":
		b.lower = true
	case ">":
		b.lower, b.k = true, b.k+1
	case "<":
		b.k--
	}
	return b, true
}

// timeTerm reads e as a TIMESTAMP column plus a constant day-time offset:
// col, col + INTERVAL, INTERVAL + col, col - INTERVAL (nested, through
// widening casts); the offset in microseconds.
func timeTerm(e Expr) (col int, off int64, ok bool) {
	switch x := e.(type) {
	case *ColumnRef:
		return x.Index, 0, x.T.Kind == types.Timestamp
	case *Cast: // an implicit widening between TIMESTAMPs keeps the value
		a := x.Arg.Type()
		if x.T.Kind != types.Timestamp || a.Kind != types.Timestamp || x.T.Precision < a.Precision {
			return 0, 0, false
		}
		return timeTerm(x.Arg)
	case *Call:
		if len(x.Args) != 2 || (x.Func != "+" && x.Func != "-") {
			return 0, 0, false
		}
		a, b := x.Args[0], x.Args[1]
		if x.Func == "+" {
			if _, isLit := a.(*Literal); isLit {
				a, b = b, a
			}
		}
		lit, isLit := b.(*Literal)
		if !isLit || lit.T.Kind != types.IntervalDayTime {
			return 0, 0, false
		}
		ms, isInt := lit.Value.(int64)
		if !isInt {
			return 0, 0, false
		}
		col, off, ok := timeTerm(a)
		if !ok {
			return 0, 0, false
		}
		if x.Func == "-" {
			ms = -ms
		}
		return col, off + ms*1000, true
	}
	return 0, 0, false
}

// toIntervalJoin returns the interval join j is, or nil when it is a
// regular join: its condition must bound a time attribute of one
// append-only input by one of the other, with a non-empty interval.
func toIntervalJoin(j *Join) *IntervalJoin {
	return intervalJoinOver(j, ModeOf(j.Left), ModeOf(j.Right))
}

// intervalJoinOver is toIntervalJoin given the inputs' modes (so that
// Join.Mode, given them, does not infer them again: the cost stays linear
// in the depth of nested joins).
func intervalJoinOver(j *Join, left, right Mode) *IntervalJoin {
	if j.Type.LeftOnly() || left != AppendOnly || right != AppendOnly {
		return nil
	}
	b, ok := findIntervalBounds(j)
	if !ok || b.lower > b.upper {
		return nil
	}
	if !isRowtime(j.Left, b.leftTime) || !isRowtime(j.Right, b.rightTime) {
		return nil
	}
	noTTL("an interval join", j.stateTTL[:]...)
	return &IntervalJoin{Left: j.Left, Right: j.Right, Type: j.Type, LeftTime: b.leftTime, RightTime: b.rightTime,
		Lower: b.lower, Upper: b.upper, Rest: b.rest, Pos: j.Pos}
}

// Rule: interval joins. A Join whose condition bounds one append-only
// input's time attribute by the other's becomes an IntervalJoin. Runs
// after predicate pushdown (the bounds may be written in WHERE) and
// projection pruning.
func intervalJoins(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		if j, ok := n.(*Join); ok {
			if ij := toIntervalJoin(j); ij != nil {
				return ij
			}
		}
		return n
	})
}

// checkIntervalJoins rejects the joins of unbounded inputs whose condition
// has an interval join's bounds but that stayed regular joins, which would
// keep both inputs forever: a bound column that is not a time attribute
// while the other is, processing time, an updating input, or an empty
// interval. An interval join without an equality runs on one subtask,
// which needs parallelism 1, as for a regular join.
func checkIntervalJoins(n Node, par int) error {
	return Inspect(n, func(n Node) error {
		if ij, ok := n.(*IntervalJoin); ok {
			if par <= 1 || IsBounded(ij) {
				return nil
			}
			if keys := splitJoinCond(ij.Rest, len(ij.Left.Schema()), len(ij.Right.Schema())); len(keys.pairs) == 0 {
				return errAt(ErrUnsupported, ij.Pos, "add an equality between the two sides (a.k = b.k), or SET 'parallelism.default' = '1'",
					"an interval join of unbounded inputs without an equality between them runs on one subtask, but 'parallelism.default' is %d", par)
			}
			return nil
		}
		j, ok := n.(*Join)
		if !ok || IsBounded(j) {
			return nil
		}
		b, ok := findIntervalBounds(j)
		if !ok {
			return nil
		}
		pos := b.pos
		if pos == (sql.Pos{}) {
			pos = j.Pos
		}
		ls, rs := j.Left.Schema(), j.Right.Schema()
		lname, rname := ls[b.leftTime].Name, rs[b.rightTime].Name
		if isProctime(j.Left, b.leftTime) || isProctime(j.Right, b.rightTime) {
			return errAt(ErrUnsupported, pos, "bound the inputs' row-time columns (WATERMARK FOR) instead",
				"processing-time interval joins are not supported: the condition bounds the left input's '%s' by the right input's '%s'", lname, rname)
		}
		lt, rt := isRowtime(j.Left, b.leftTime), isRowtime(j.Right, b.rightTime)
		switch {
		case !lt && !rt:
			return nil // a regular join with a time condition, as in Flink
		case !lt || !rt:
			side, col, in, c := "left", lname, j.Left, b.leftTime
			if lt {
				side, col, in, c = "right", rname, j.Right, b.rightTime
			}
			hint := fmt.Sprintf("declare WATERMARK FOR %s in its table (and read it unchanged), so that both bounds are over time attributes", col)
			if src, _, which := windowSource(in, c); src != nil && which != 2 {
				hint = "bound the window's window_time instead (window_end - 1 ms), the time attribute of a window's rows"
			}
			return errAt(ErrUnsupported, pos, hint,
				"the interval join condition bounds the left input's '%s' by the right input's '%s', but the %s input's '%s' is not a time attribute: as a regular join it would keep both inputs in state forever", lname, rname, side, col)
		case b.lower > b.upper:
			return errAt(ErrUnsupported, pos, "swap the bounds",
				"the interval join condition's lower bound (%s ms) is above its upper bound (%s ms): no pair of rows can join", boundMillis(b.lower), boundMillis(b.upper))
		}
		side, name := "left", lname
		if ModeOf(j.Left) == AppendOnly {
			side, name = "right", rname
		}
		return errAt(ErrUnsupported, pos, "join the append-only rows before aggregating them, or bound columns that are not time attributes (a regular join)",
			"an interval join over the time attribute '%s' needs append-only inputs, but the %s input is updating", name, side)
	})
}

// IntervalJoinSpec is an interval join as the runtime runs it.
//
// Input 0 is the left input, input 1 the right; their rows arrive hashed
// by LeftKeys and RightKeys (all on one subtask when there are none). A
// left row at time lt (column LeftTime) and a right row at rt (RightTime)
// join when their keys are equal and not NULL, rt+Lower <= lt <= rt+Upper
// and Residual (over the output columns; nil: TRUE) is TRUE. The output is
// the first LeftWidth columns of the left input then the first RightWidth
// of the right, append-only.
type IntervalJoinSpec struct {
	Type                JoinType
	LeftKeys, RightKeys []int
	Residual            Expr
	LeftWidth           int
	RightWidth          int
	LeftTime, RightTime int
	Lower, Upper        int64
	LeftSchema          types.Schema
	RightSchema         types.Schema
	describeLeftKeys    []string
	describeRightKeys   []string
}

// KindIntervalJoin is the kind of an interval join.
const KindIntervalJoin = "IntervalJoin"

func (*IntervalJoinSpec) Kind() string          { return KindIntervalJoin }
func (*IntervalJoinSpec) KeepsKeyedState() bool { return true }

// LeftRelative is how long after a left row's time a right row can still
// join it (-Lower); RightRelative the same for a right row (Upper). A row
// at t is kept while t + its relative size is above the watermark.
func (s *IntervalJoinSpec) LeftRelative() int64  { return -s.Lower }
func (s *IntervalJoinSpec) RightRelative() int64 { return s.Upper }

// WatermarkDelay is how far the output's watermark trails the inputs':
// the larger relative size (Flink's getMaxOutputDelay, without allowed
// lateness), since a joined or padded row leaves with a time that far
// behind the watermark at most.
func (s *IntervalJoinSpec) WatermarkDelay() int64 {
	return max(s.LeftRelative(), s.RightRelative(), 0)
}

func (s *IntervalJoinSpec) Describe(o *Operator) string {
	var eq []string
	for i := range s.LeftKeys {
		l, r := fmt.Sprintf("$%d", s.LeftKeys[i]), fmt.Sprintf("$%d", s.RightKeys[i])
		if i < len(s.describeLeftKeys) {
			l, r = s.describeLeftKeys[i], s.describeRightKeys[i]
		}
		eq = append(eq, fmt.Sprintf("=(%s, %s)", l, r))
	}
	d := "IntervalJoin(joinType=[" + s.Type.String() + "], " + describeJoinKeys(eq)
	d += ", leftLowerBound=" + boundMillis(s.Lower) + ", leftUpperBound=" + boundMillis(s.Upper)
	d += fmt.Sprintf(", leftTimeIndex=%d, rightTimeIndex=%d", s.LeftTime, s.RightTime)
	if s.Residual != nil {
		d += ", residual=[" + describeOver(s.Residual, o.Schema) + "]"
	}
	return d + ", select=[" + strings.Join(o.Schema.Names(), ", ") + "])"
}

// Identity: the join type, keys, time columns, bounds, residual and
// widths: all the state's rows and their expiry depend on.
func (s *IntervalJoinSpec) Identity(w *IDWriter) {
	w.Int(int64(s.Type))
	w.Ints(s.LeftKeys)
	w.Ints(s.RightKeys)
	w.Int(int64(s.LeftTime))
	w.Int(int64(s.RightTime))
	w.Int(s.Lower)
	w.Int(s.Upper)
	if s.Residual != nil {
		w.Expr(s.Residual)
	} else {
		w.Str("")
	}
	w.Int(int64(s.LeftWidth))
	w.Int(int64(s.RightWidth))
}

// physical: as a regular join's, the equalities of Rest become hash edges
// (expression keys computed by a projection below); without keys the join
// runs on one subtask.
func (j *IntervalJoin) physical(b *physBuilder, o *Operator) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	nl, nr := len(ls), len(rs)
	cond := splitJoinCond(j.Rest, nl, nr)
	ki := layJoinKeys(b, j.Left, j.Right, cond.pairs, j.Schema())
	lin, rin, lKeys, rKeys, lNames, rNames := ki.left, ki.right, ki.lKeys, ki.rKeys, ki.lNames, ki.rNames
	o.Spec = &IntervalJoinSpec{
		Type: j.Type, LeftKeys: lKeys, RightKeys: rKeys, Residual: cond.residual,
		LeftWidth: nl, RightWidth: nr, LeftTime: j.LeftTime, RightTime: j.RightTime,
		Lower: j.Lower, Upper: j.Upper, LeftSchema: lin.Schema, RightSchema: rin.Schema,
		describeLeftKeys: lNames, describeRightKeys: rNames,
	}
	if len(lKeys) == 0 {
		o.Parallelism = 1
		o.Inputs = []Edge{{From: lin, Partition: Global}, {From: rin, Partition: Global}}
		return
	}
	o.Parallelism = b.par
	o.Inputs = []Edge{{From: lin, Partition: Hash, Keys: lKeys}, {From: rin, Partition: Hash, Keys: rKeys}}
}
