package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Windows (Flink's window table-valued functions).
//
//	FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//	FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//	FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, max size [, offset]))
//
// bind to a WindowTVF node: the input's columns followed by window_start,
// window_end and window_time (window_end - 1 ms), all TIMESTAMP(3) NOT
// NULL; HOP and CUMULATE give one row per window a row belongs to. A
// GROUP BY over such an input that names both window_start and window_end
// becomes a WindowAggregate (rule windowAggregates): it keeps one
// accumulator per key and window and emits each window's rows once, when
// the watermark passes the window's end, so its output is append-only.
// A GROUP BY over a window aggregate's (or window TopN's) output that
// names both its window_start and window_end, under any names, is a
// WindowAggregate too, over the same windows read from those columns
// (Flink's cascading window aggregation, attachedWindowAggregate).
//
// SESSION windows (session_window.go) exist only inside window
// aggregation; the older GROUP BY TUMBLE(ts, size) form (groupwindow.go)
// and RisingWave's FROM TUMBLE(t, ts, size) bind to the same nodes.
//
// The time column must be a TIMESTAMP with a watermark (a time attribute)
// unless the input is bounded: then the windows fire at the end of input.
// An updating input is an error.

// WindowSpec describes the windows of a window table function. Durations
// are in microseconds.
type WindowSpec struct {
	// Kind is TUMBLE, HOP, CUMULATE or SESSION.
	Kind string
	// TimeCol is the index of the time column in the input; TimeName its name.
	TimeCol  int
	TimeName string
	// Size is the window size (CUMULATE: the maximum size).
	Size int64
	// Slide is HOP's slide and CUMULATE's step.
	Slide int64
	// Offset shifts the window boundaries (0: aligned to the epoch).
	Offset int64
	// Partition are SESSION's PARTITION BY columns, by name (session_window.go).
	Partition []string
	// Proctime says the time column is a processing-time attribute
	// (proctime.go): the watermarks are the sources' wall clocks.
	Proctime bool
	// Attached says the windows are not assigned from a time column but
	// read from the input's window columns, as a window aggregation over
	// the output of another windowed operator reads them (Flink's
	// cascading window aggregation, WindowAttachedWindowingStrategy):
	// StartCol (named StartName) is the window_start column, TimeCol (named
	// TimeName) the window_end column. Kind, Size, Slide and Offset are
	// those of the windows the columns come from.
	Attached  bool
	StartCol  int
	StartName string
}

// String is the window as EXPLAIN prints it (Flink's form).
func (w WindowSpec) String() string {
	var b strings.Builder
	mark := ""
	if w.Proctime {
		mark = " *PROCTIME*"
	}
	if w.Attached {
		fmt.Fprintf(&b, "%s(win_start=[%s], win_end=[%s]", w.Kind, w.StartName, w.TimeName)
	} else {
		fmt.Fprintf(&b, "%s(time_col=[%s%s]", w.Kind, w.TimeName, mark)
	}
	switch w.Kind {
	case "TUMBLE":
		fmt.Fprintf(&b, ", size=[%s]", fmtMicros(w.Size))
	case "HOP":
		fmt.Fprintf(&b, ", size=[%s], slide=[%s]", fmtMicros(w.Size), fmtMicros(w.Slide))
	case "CUMULATE":
		fmt.Fprintf(&b, ", max_size=[%s], step=[%s]", fmtMicros(w.Size), fmtMicros(w.Slide))
	case "SESSION":
		if len(w.Partition) > 0 {
			fmt.Fprintf(&b, ", partition_keys=[%s]", strings.Join(w.Partition, ", "))
		}
		fmt.Fprintf(&b, ", gap=[%s]", fmtMicros(w.Size))
	}
	if w.Offset != 0 {
		fmt.Fprintf(&b, ", offset=[%s]", fmtMicros(w.Offset))
	}
	return b.String() + ")"
}

// fmtMicros prints a duration in the largest unit that divides it.
func fmtMicros(us int64) string {
	neg := ""
	if us < 0 {
		neg, us = "-", -us
	}
	for _, u := range []struct {
		n    int64
		name string
	}{{86400e6, "d"}, {3600e6, "h"}, {60e6, "min"}, {1e6, "s"}, {1e3, "ms"}} {
		if us != 0 && us%u.n == 0 {
			return fmt.Sprintf("%s%d %s", neg, us/u.n, u.name)
		}
	}
	return fmt.Sprintf("%s%d us", neg, us)
}

// WindowTVF is a window table function over Input.
type WindowTVF struct {
	Input  Node
	Window WindowSpec
	// Late, if set, routes the records a window aggregation over this
	// function finds late to a table; Exprs are over Input (late.go).
	Late *LateRecords
}

// The window columns a WindowTVF appends, in order.
var windowColumns = []string{"window_start", "window_end", "window_time"}

func windowColType() types.T {
	t := types.TimestampOf(3)
	t.NotNull = true
	return t
}

func (w *WindowTVF) Schema() types.Schema {
	in := w.Input.Schema()
	out := make(types.Schema, 0, len(in)+3)
	out = append(out, in...)
	for _, n := range windowColumns {
		out = append(out, types.Column{Name: n, Type: windowColType()})
	}
	return out
}
func (w *WindowTVF) Children() []Node            { return []Node{w.Input} }
func (w *WindowTVF) WithChildren(ch []Node) Node { c := *w; c.Input = ch[0]; return &c }

// Expressions are the late-records table's columns (LateRecords.Exprs).
func (w *WindowTVF) Expressions() []Expr { return w.Late.exprs() }
func (w *WindowTVF) WithExpressions(es []Expr) Node {
	c := *w
	c.Late = w.Late.withExprs(es)
	return &c
}

// Windowing keeps the input's mode (an updating input is an error).
func (*WindowTVF) Mode(in []Mode) Mode { return anyUpdating(in) }
func (w *WindowTVF) Describe() string  { return describeWindowNode(w) }

// Window key markers in WindowAggregate.Keys.
const (
	WindowStartKey = -1 - iota
	WindowEndKey
	WindowTimeKey
)

// WindowAggregate groups the rows of Input by window (assigned from the
// time column as Window says) and Keys, and emits each group once, after the
// watermark passed the window's end (or at the end of input).
type WindowAggregate struct {
	// Input is the un-windowed input.
	Input  Node
	Window WindowSpec
	// Keys are the GROUP BY keys in order: an Input column index, or
	// WindowStartKey, WindowEndKey, WindowTimeKey.
	Keys []int
	// Aggs are the aggregates; Arg indexes Input.
	Aggs []AggCall
	// EmitOnWindowClose (RisingWave's EMIT ON WINDOW CLOSE, emit.go) keeps
	// the windows the watermark has not passed unemitted at the end of
	// input, instead of firing them all.
	EmitOnWindowClose bool
	// Late, if set, routes late records to a table instead of dropping
	// them; its Exprs are over Input (late.go).
	Late *LateRecords
	// cols is the output: the keys then the aggregates.
	cols types.Schema
	// emitAt is where EMIT ON WINDOW CLOSE was written (for errors).
	emitAt *sql.Pos
}

// Schema is the keys (window columns TIMESTAMP(3) NOT NULL) then the
// aggregates.
func (w *WindowAggregate) Schema() types.Schema {
	if w.cols == nil {
		in := w.Input.Schema()
		for _, k := range w.Keys {
			if k < 0 {
				w.cols = append(w.cols, types.Column{Name: windowColumns[-1-k], Type: windowColType()})
			} else {
				w.cols = append(w.cols, in[k])
			}
		}
		for _, c := range w.Aggs {
			w.cols = append(w.cols, types.Column{Name: c.Name, Type: c.T})
		}
	}
	return w.cols
}
func (w *WindowAggregate) Children() []Node { return []Node{w.Input} }

// WithChildren keeps the output schema (cols), which names the columns as
// the aggregation it replaced did.
func (w *WindowAggregate) WithChildren(ch []Node) Node { c := *w; c.Input = ch[0]; return &c }

// Expressions are the late-records table's columns (LateRecords.Exprs).
func (w *WindowAggregate) Expressions() []Expr { return w.Late.exprs() }
func (w *WindowAggregate) WithExpressions(es []Expr) Node {
	c := *w
	c.Late = w.Late.withExprs(es)
	return &c
}

// A window aggregation emits each window's result once: append-only.
func (*WindowAggregate) Mode([]Mode) Mode   { return AppendOnly }
func (w *WindowAggregate) Describe() string { return describeWindowNode(w) + lateSuffix(w.Late) }

// PartitionKeys are the keys that are Input columns (the window columns
// excluded): the hash exchange in front of the operator routes by them.
func (w *WindowAggregate) PartitionKeys() []int {
	var out []int
	for _, k := range w.Keys {
		if k >= 0 {
			out = append(out, k)
		}
	}
	return out
}

// bindWindow binds a window table function of FROM.
func (b *binder) bindWindow(w *sql.WindowTVF) (Node, error) {
	if w.Kind == "SESSION" {
		return b.bindSessionWindow(w) // session_window.go
	}
	input, col, err := b.bindWindowInput(w)
	if err != nil {
		return nil, err
	}
	in := input.Schema()
	for _, c := range in {
		for _, n := range windowColumns {
			if strings.EqualFold(c.Name, n) {
				return nil, errAt(ErrUnsupported, w.Pos, "rename the column", "the input of %s already has a column '%s'", w.Kind, c.Name)
			}
		}
	}
	if in[col].Type.Kind != types.Timestamp {
		return nil, errAt(ErrTypeMismatch, w.TimeColPos, "declare it TIMESTAMP(3) with a WATERMARK FOR clause",
			"the time column '%s' of %s must be a TIMESTAMP, it is %s", in[col].Name, w.Kind, in[col].Type)
	}
	// The input's own window aggregations are planned later (rule
	// windowAggregates); judge the input as they will make it, so that a
	// window can be stacked on a window's window_time (Flink's cascading
	// window aggregation), as a group window can (groupwindow.go).
	probe := windowJoins(windowAggregates(input))
	if ModeOf(probe) == Updating {
		return nil, errAt(ErrUnsupported, w.Pos, "window an append-only table or view, or aggregate with GROUP BY without a window", "%s over an updating input (from %s) is not supported: windows need an append-only input", w.Kind, producer(probe))
	}
	proctime, err := timeAttribute(probe, col, w.Kind, w.TimeColPos)
	if err != nil {
		return nil, err
	}
	spec := WindowSpec{Kind: w.Kind, TimeCol: col, TimeName: in[col].Name, Proctime: proctime}
	dur := func(iv sql.Interval, what string) (int64, error) {
		d, err := iv.Duration()
		if err != nil {
			return 0, errAt(ErrUnsupported, iv.Pos, "", "%s: %v", what, err)
		}
		if d <= 0 && what != "offset" {
			return 0, errAt(ErrUnsupported, iv.Pos, "write a positive interval, such as INTERVAL '1' MINUTE", "the %s of %s must be positive", what, w.Kind)
		}
		return d.Microseconds(), nil
	}
	if spec.Size, err = dur(w.Size, "size"); err != nil {
		return nil, err
	}
	switch w.Kind {
	case "HOP":
		if spec.Slide, err = dur(w.Slide, "slide"); err != nil {
			return nil, err
		}
	case "CUMULATE":
		if spec.Slide, err = dur(w.Slide, "step"); err != nil {
			return nil, err
		}
		if spec.Size%spec.Slide != 0 {
			return nil, errAt(ErrUnsupported, w.Size.Pos, "make the max size a whole number of steps", "the max size of CUMULATE (%s) must be a multiple of its step (%s)", fmtMicros(spec.Size), fmtMicros(spec.Slide))
		}
	}
	if w.Offset.Unit != "" {
		if spec.Offset, err = dur(w.Offset, "offset"); err != nil {
			return nil, err
		}
	}
	if err := checkWindowsPerRow(spec, w.Slide.Pos); err != nil {
		return nil, err
	}
	late, err := b.lateRecords(input, w.Kind, w.Pos)
	if err != nil {
		return nil, err
	}
	return &WindowTVF{Input: input, Window: spec, Late: late}, nil
}

// MaxWindowsPerRow bounds the windows one row of a HOP or CUMULATE belongs
// to (its size over its slide or step): each is state the row updates, so
// HOP(1 ms slide, 100 days) would never get through its first row.
const MaxWindowsPerRow = 100_000

// checkWindowsPerRow refuses a HOP or CUMULATE whose rows would each belong
// to more than MaxWindowsPerRow windows; pos is where its slide is written.
func checkWindowsPerRow(spec WindowSpec, pos sql.Pos) error {
	if spec.Kind != "HOP" && spec.Kind != "CUMULATE" || spec.Slide <= 0 {
		return nil
	}
	slide := "slide"
	if spec.Kind == "CUMULATE" {
		slide = "step"
	}
	if n := (spec.Size + spec.Slide - 1) / spec.Slide; n > MaxWindowsPerRow {
		return errAt(ErrUnsupported, pos, fmt.Sprintf("make the %s longer or the size shorter", slide),
			"each row of %s (size %s, %s %s) would belong to %d windows; at most %d are supported", spec.Kind, fmtMicros(spec.Size), slide, fmtMicros(spec.Slide), n, MaxWindowsPerRow)
	}
	return nil
}

// isRowtime reports whether column col of n is a time attribute: a scan's
// row-time column with a watermark, carried through filters, projections
// (as a plain column), unions, windows and interval joins, or a window's
// window_time.
func isRowtime(n Node, col int) bool {
	switch x := n.(type) {
	case *Scan:
		return x.Watermark != nil && col < len(x.Fields) && x.Fields[col] == x.Watermark.Column
	case *Filter:
		return isRowtime(x.Input, col)
	case *Project:
		if c, ok := x.Exprs[col].(*ColumnRef); ok {
			return isRowtime(x.Input, c.Index)
		}
	case *Union:
		for _, in := range x.Inputs {
			if !isRowtime(in, col) {
				return false
			}
		}
		return true
	case *WindowTVF:
		nIn := len(x.Input.Schema())
		if col < nIn {
			return isRowtime(x.Input, col)
		}
		return col == nIn+2 && isRowtime(x.Input, x.Window.TimeCol)
	case *WindowAggregate:
		return col < len(x.Keys) && x.Keys[col] == WindowTimeKey
	case *WindowJoin:
		return x.isRowtime(col) // window_join.go
	case *WindowRank:
		return x.isRowtime(col) // window_rank.go
	case *TemporalJoin: // the probe side's time attributes pass through
		return col < len(x.Left.Schema()) && isRowtime(x.Left, col)
	case *IntervalJoin:
		if nl := len(x.Left.Schema()); col >= nl {
			return isRowtime(x.Right, col-nl)
		}
		return isRowtime(x.Left, col)
	case *Join:
		// As the interval-joins rule will make it (an updating input is an
		// error then, checkIntervalJoins).
		if ij := intervalJoinOver(x, AppendOnly, AppendOnly); ij != nil {
			return isRowtime(ij, col)
		}
	}
	return false
}

// Rule: window aggregation. An Aggregate whose keys include window_start and
// window_end of one WindowTVF below it, through filters and projections
// that do not compute over the window columns, becomes a WindowAggregate
// over the TVF's input: windows are assigned inside the aggregate, and the
// result is append-only. One whose keys include them for a window
// aggregate's or window TopN's output becomes a WindowAggregate over its
// input as it is, the windows read from those columns. Runs after
// projection pruning, bottom up, so that the aggregates below are window
// aggregates when the one above is looked at.
func windowAggregates(n Node) Node {
	return TransformUp(n, func(n Node) Node {
		if a, ok := n.(*Aggregate); ok {
			if w := toWindowAggregate(a); w != nil {
				return w
			}
		}
		return n
	})
}

// windowCol traces column col of n down to a WindowTVF's window column:
// it returns the TVF and which column (0 start, 1 end, 2 time), or nil.
func windowCol(n Node, col int) (*WindowTVF, int) {
	switch x := n.(type) {
	case *Filter:
		return windowCol(x.Input, col)
	case *Project:
		if c, ok := x.Exprs[col].(*ColumnRef); ok {
			return windowCol(x.Input, c.Index)
		}
	case *Expand:
		if x.passes(col) {
			return windowCol(x.Input, col)
		}
	case *WindowTVF:
		if nIn := len(x.Input.Schema()); col >= nIn {
			return x, col - nIn
		}
	}
	return nil, -1
}

// windowSource traces column col of n down to the operator that made it a
// window column, through filters and projections that pass it through
// (under its name or another): a window table function, a window
// aggregate (its window_start, window_end and window_time keys) or a
// window TopN (which passes its input's window columns through, and emits
// a window's rows when the watermark passes the window's end, as a window
// aggregate does). It returns that node, its windows and which column (0
// start, 1 end, 2 time); nil if none.
func windowSource(n Node, col int) (Node, WindowSpec, int) {
	switch x := n.(type) {
	case *Filter:
		return windowSource(x.Input, col)
	case *Project:
		if c, ok := x.Exprs[col].(*ColumnRef); ok {
			return windowSource(x.Input, c.Index)
		}
	case *Expand:
		if x.passes(col) {
			return windowSource(x.Input, col)
		}
	case *WindowTVF:
		if nIn := len(x.Input.Schema()); col >= nIn {
			return x, x.Window, col - nIn
		}
	case *WindowAggregate:
		if col < len(x.Keys) && x.Keys[col] < 0 {
			return x, x.Window, -1 - x.Keys[col]
		}
	case *WindowRank:
		if col < len(x.Rank.Input.Schema()) {
			if s, spec, which := windowSource(x.Rank.Input, col); s != nil {
				return x, spec, which
			}
		}
	}
	return nil, WindowSpec{}, -1
}

// toWindowAggregate makes a an aggregation over the windows of a window
// table function below it, or else over the windows of a windowed
// operator's output (attachedWindowAggregate); nil if it is neither.
func toWindowAggregate(a *Aggregate) *WindowAggregate {
	if w := tvfWindowAggregate(a); w != nil {
		return w
	}
	return attachedWindowAggregate(a)
}

// attachedWindowAggregate is Flink's cascading window aggregation: an
// Aggregate whose keys include window_start and window_end of one window
// aggregate's or window TopN's output (windowSource) aggregates per those
// windows. It reads the windows from those columns (WindowSpec.Attached)
// rather than assigning them from a time column: a window's input rows
// arrive when the operator below fires the window, before the watermark
// that fired it, so none is late here, and the window fires when that
// watermark arrives. Not for session or processing-time windows (they
// stay a regular aggregation).
func attachedWindowAggregate(a *Aggregate) *WindowAggregate {
	var src Node
	var spec WindowSpec
	startCol, endCol := -1, -1
	keys := make([]int, len(a.Keys))
	for i, k := range a.Keys {
		keys[i] = k
		s, sp, which := windowSource(a.Input, k)
		if s == nil {
			continue
		}
		if _, tvf := s.(*WindowTVF); tvf {
			return nil
		}
		if src != nil && src != s {
			return nil
		}
		src, spec = s, sp
		keys[i] = -1 - which
		switch which {
		case 0:
			startCol = k
		case 1:
			endCol = k
		}
	}
	if src == nil || startCol < 0 || endCol < 0 || spec.Kind == "SESSION" || spec.Proctime {
		return nil
	}
	in := a.Input.Schema()
	spec.Attached = true
	spec.StartCol, spec.StartName = startCol, in[startCol].Name
	spec.TimeCol, spec.TimeName = endCol, in[endCol].Name
	spec.Partition = nil
	noTTL("a window aggregate", a.stateTTL)
	return &WindowAggregate{Input: a.Input, Window: spec, Keys: keys, Aggs: a.Aggs, cols: a.Schema(),
		EmitOnWindowClose: a.emitAt != nil, emitAt: a.emitAt}
}

// tvfWindowAggregate makes a an aggregation over the windows of a window
// table function below it (windowCol), assigned from the function's time
// column over the function's input.
func tvfWindowAggregate(a *Aggregate) *WindowAggregate {
	var tvf *WindowTVF
	seen := [3]bool{}
	for _, k := range a.Keys {
		w, which := windowCol(a.Input, k)
		if w == nil {
			continue
		}
		if tvf != nil && tvf != w {
			return nil
		}
		tvf = w
		seen[which] = true
	}
	if tvf == nil || !windowKeyed(tvf.Window.Kind, seen, a.emitAt != nil) {
		return nil
	}
	var lateCols []int
	if tvf.Late != nil {
		lateCols = tvf.Late.columns()
	}
	in, cols, timeCol, latePos, ok := unwindow(a.Input, tvf, lateCols)
	if !ok {
		return nil
	}
	spec := tvf.Window
	spec.TimeCol = timeCol
	noTTL("a window aggregate", a.stateTTL)
	wa := &WindowAggregate{Input: in, Window: spec, cols: a.Schema(), EmitOnWindowClose: a.emitAt != nil, emitAt: a.emitAt}
	if tvf.Late != nil {
		m := map[int]int{}
		for i, c := range lateCols {
			m[c] = latePos[i]
		}
		wa.Late = tvf.Late.remap(m)
	}
	for _, k := range a.Keys {
		c := cols[k]
		if c.win > 0 {
			wa.Keys = append(wa.Keys, -c.win)
		} else {
			wa.Keys = append(wa.Keys, c.idx)
		}
	}
	for _, c := range a.Aggs {
		if c.Arg >= 0 {
			if cols[c.Arg].win > 0 {
				return nil
			}
			c.Arg = cols[c.Arg].idx
		}
		if c.HasFilter {
			if cols[c.Filter].win > 0 {
				return nil
			}
			c.Filter = cols[c.Filter].idx
		}
		wa.Aggs = append(wa.Aggs, c)
	}
	return wa
}

// colSrc says where a column of a node above a TVF comes from once the TVF
// is gone: column idx of the rewritten node, or window column win (1
// start, 2 end, 3 time).
type colSrc struct {
	idx int
	win int
}

// unwindow rebuilds the chain of filters and projections from n down to
// tvf directly over tvf's input, without the window columns (which may only
// be passed through, not computed on). It returns the new node, where each
// old column comes from, the index of the time column in the new node and
// the indexes there of tvf's input columns carry (which projections pass
// through, for late records).
func unwindow(n Node, tvf *WindowTVF, carry []int) (Node, []colSrc, int, []int, bool) {
	if n == Node(tvf) {
		nIn := len(tvf.Input.Schema())
		cols := make([]colSrc, nIn+3)
		for i := range cols {
			if i < nIn {
				cols[i] = colSrc{idx: i}
			} else {
				cols[i] = colSrc{win: i - nIn + 1}
			}
		}
		return tvf.Input, cols, tvf.Window.TimeCol, carry, true
	}
	switch x := n.(type) {
	case *Filter:
		in, cols, tc, carried, ok := unwindow(x.Input, tvf, carry)
		if !ok {
			return nil, nil, 0, nil, false
		}
		cond, ok := remapWindowed(x.Cond, cols)
		if !ok {
			return nil, nil, 0, nil, false
		}
		return &Filter{Input: in, Cond: cond}, cols, tc, carried, true
	case *Project:
		in, inCols, tc, carried, ok := unwindow(x.Input, tvf, carry)
		if !ok {
			return nil, nil, 0, nil, false
		}
		p := &Project{Input: in}
		cols := make([]colSrc, len(x.Exprs))
		for i, e := range x.Exprs {
			if c, isRef := e.(*ColumnRef); isRef && inCols[c.Index].win > 0 {
				cols[i] = colSrc{win: inCols[c.Index].win}
				continue
			}
			re, ok := remapWindowed(e, inCols)
			if !ok {
				return nil, nil, 0, nil, false
			}
			cols[i] = colSrc{idx: len(p.Exprs)}
			p.Exprs = append(p.Exprs, re)
			p.Names = append(p.Names, x.Names[i])
		}
		newTC := passThrough(p, in, tc)
		var out []int
		for _, c := range carried {
			out = append(out, passThrough(p, in, c))
		}
		if isIdentity(p, in) {
			return in, cols, newTC, out, true
		}
		return p, cols, newTC, out, true
	case *Expand:
		// Grouping sets of a window aggregation: the window columns are
		// in every set, so the copies keep them, and the Expand goes over
		// the rebuilt input without them.
		in, inCols, tc, carried, ok := unwindow(x.Input, tvf, carry)
		if !ok {
			return nil, nil, 0, nil, false
		}
		e := &Expand{Input: in}
		for j, k := range x.Keys {
			if inCols[k].win > 0 {
				if !x.inEverySet(j) {
					return nil, nil, 0, nil, false
				}
				continue
			}
			e.Keys = append(e.Keys, inCols[k].idx)
		}
		for _, set := range x.Sets {
			var keep []bool
			for j, k := range x.Keys {
				if inCols[k].win == 0 {
					keep = append(keep, set[j])
				}
			}
			e.Sets = append(e.Sets, keep)
		}
		cols := append(append([]colSrc(nil), inCols...), colSrc{idx: len(in.Schema())})
		return e, cols, tc, carried, true
	}
	return nil, nil, 0, nil, false
}

// passThrough returns the column of p that is column c of its input in,
// adding it to p if p has none.
func passThrough(p *Project, in Node, c int) int {
	for i, e := range p.Exprs {
		if r, isRef := e.(*ColumnRef); isRef && r.Index == c {
			return i
		}
	}
	s := in.Schema()[c]
	p.Exprs = append(p.Exprs, &ColumnRef{Index: c, Name: s.Name, T: s.Type})
	p.Names = append(p.Names, s.Name)
	return len(p.Exprs) - 1
}

// remapWindowed rewrites e's column references through cols; false if e
// reads a window column.
func remapWindowed(e Expr, cols []colSrc) (Expr, bool) {
	used := map[int]bool{}
	columnsUsed(e, used)
	m := map[int]int{}
	for c := range used {
		if cols[c].win > 0 {
			return nil, false
		}
		m[c] = cols[c].idx
	}
	return remapColumns(e, m), true
}

func isIdentity(p *Project, in Node) bool {
	s := in.Schema()
	if len(p.Exprs) != len(s) {
		return false
	}
	for i, e := range p.Exprs {
		c, ok := e.(*ColumnRef)
		if !ok || c.Index != i || p.Names[i] != s[i].Name {
			return false
		}
	}
	return true
}

// pruneWindowTVF prunes below a window table function: its input keeps the
// columns needed above and the time column; the window columns stay.
func pruneWindowTVF(x *WindowTVF, need []bool) (Node, map[int]int) {
	nIn := len(x.Input.Schema())
	inNeed := make([]bool, nIn)
	copy(inNeed, need[:nIn])
	inNeed[x.Window.TimeCol] = true
	if x.Late != nil {
		// Late records keep the columns of their table.
		for _, c := range x.Late.columns() {
			inNeed[c] = true
		}
	}
	in, im := prune(x.Input, inNeed)
	w := &WindowTVF{Input: in, Window: x.Window, Late: x.Late.remap(im)}
	w.Window.TimeCol = im[x.Window.TimeCol]
	m := map[int]int{}
	for i := 0; i < nIn; i++ {
		if j, ok := im[i]; ok {
			m[i] = j
		}
	}
	n := len(in.Schema())
	for k := 0; k < 3; k++ {
		m[nIn+k] = n + k
	}
	return w, m
}

func describeWindowNode(n Node) string {
	switch x := n.(type) {
	case *WindowTVF:
		return "WindowTableFunction(window=[" + x.Window.String() + "])"
	case *WindowAggregate:
		return describeWindowAgg(x)
	}
	return fmt.Sprintf("%T", n)
}

// lateSuffix is what the logical plan adds to a window node that routes
// late records.
func lateSuffix(l *LateRecords) string {
	if l == nil {
		return ""
	}
	return ", lateRecords=[" + l.Table.Name + "]"
}

func describeWindowAgg(w *WindowAggregate) string {
	in := w.Input.Schema()
	var keys, sel []string
	for _, k := range w.PartitionKeys() {
		keys = append(keys, in[k].Name)
	}
	for i := range w.Keys {
		sel = append(sel, w.cols[i].Name)
	}
	for _, c := range w.Aggs {
		sel = append(sel, c.describe(in))
	}
	emit := ""
	if w.EmitOnWindowClose {
		emit = ", emit=[on window close]"
	}
	return "WindowAggregate(groupBy=[" + strings.Join(keys, ", ") + "], window=[" + w.Window.String() + "], select=[" + strings.Join(sel, ", ") + "]" + emit + ")"
}

func (x *WindowTVF) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	o.Spec, o.Parallelism = &WindowTVFSpec{TVF: x}, in.Parallelism
	o.Inputs = []Edge{{From: in, Partition: Forward}}
}

// A window aggregate hashes its input by the keys that are input columns;
// with none it runs at parallelism 1.
func (x *WindowAggregate) physical(b *physBuilder, o *Operator) {
	in := b.build(x.Input)
	o.Spec = &WindowAggSpec{Agg: x}
	if keys := x.PartitionKeys(); len(keys) == 0 {
		o.Parallelism = 1
		o.Inputs = []Edge{{From: in, Partition: Global}}
	} else {
		o.Parallelism = b.par
		o.Inputs = []Edge{{From: in, Partition: Hash, Keys: keys}}
	}
}

// bindWindowInput binds the table of a window table function and finds its
// time column (DESCRIPTOR(ts)).
func (b *binder) bindWindowInput(w *sql.WindowTVF) (input Node, col int, err error) {
	if input, err = b.bindTableName(w.Table, nil); err != nil {
		return nil, -1, err
	}
	in := input.Schema()
	for i, c := range in {
		if strings.EqualFold(c.Name, w.TimeCol) {
			return input, i, nil
		}
	}
	return nil, -1, errAt(ErrUnknownColumn, w.TimeColPos, "available columns: "+strings.Join(in.Names(), ", "), "column '%s' not found in '%s'", w.TimeCol, w.Table)
}
