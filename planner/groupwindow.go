package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Group windows (Flink's older windowing form):
//
//	SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*)
//	FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), k
//
// with TUMBLE(ts, size), HOP(ts, slide, size) or SESSION(ts, gap) in GROUP
// BY, and TUMBLE_START / TUMBLE_END / TUMBLE_ROWTIME or, over a
// processing-time attribute, TUMBLE_PROCTIME (HOP_ and SESSION_ likewise;
// the last two are window_time) in the select list, HAVING and ORDER BY. SESSION's sessions
// are per the other GROUP BY keys (session_window.go). The binder rewrites
// it onto a window table function: the FROM input (after WHERE) becomes
// TUMBLE(TABLE input, DESCRIPTOR(ts), size), the group key TUMBLE(...)
// becomes window_start, window_end and window_time, and the auxiliary
// functions name those columns. The rule windowAggregates then plans the
// aggregation as a WindowAggregate, as for the table-function form.

// groupWindow is the group window of the SELECT being bound.
type groupWindow struct {
	kind string // TUMBLE, HOP or SESSION
	// call is the group-window call as written, to compare the auxiliary
	// functions' arguments against.
	call *ast.FuncCallExpr
	// args are the arguments' canonical text (time column, interval
	// lengths: INTERVAL '60' SECOND is INTERVAL '1' MINUTE).
	args []string
	// proctime says the window is over a processing-time attribute.
	proctime bool
}

// groupWindowKinds maps a group-window function to its window kind.
var groupWindowKinds = map[string]string{"tumble": "TUMBLE", "hop": "HOP", "session": "SESSION"}

// groupWindowAux maps an auxiliary function suffix to its window column.
// TUMBLE_ROWTIME belongs to event-time windows, TUMBLE_PROCTIME to
// processing-time ones (proctime.go); both are window_time.
var groupWindowAux = map[string]string{"_start": "window_start", "_end": "window_end", "_rowtime": "window_time", "_proctime": "window_time"}

// bindGroupWindow looks for a group window in sel's GROUP BY. If there is
// one it returns the windowed input, its scope and a copy of sel whose
// GROUP BY names the window columns instead; otherwise its arguments
// unchanged.
func (b *binder) bindGroupWindow(sel *ast.SelectStmt, input Node, sc *scope) (*ast.SelectStmt, Node, *scope, error) {
	if sel.GroupBy == nil {
		return sel, input, sc, nil
	}
	var call *ast.FuncCallExpr
	at := -1
	for i, item := range sel.GroupBy.Items {
		f, ok := item.Expr.(*ast.FuncCallExpr)
		if !ok {
			continue
		}
		if _, ok := groupWindowKinds[f.FnName.L]; !ok {
			continue
		}
		if call != nil {
			return nil, nil, nil, errAt(ErrUnsupported, b.pos(f), "", "GROUP BY may have only one group window")
		}
		call, at = f, i
	}
	if call == nil {
		return sel, input, sc, nil
	}
	kind := groupWindowKinds[call.FnName.L]
	pos := b.pos(call)
	want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
	maxArgs := want + 1 // an offset
	if kind == "SESSION" {
		maxArgs = want
	}
	if len(call.Args) < want || len(call.Args) > maxArgs {
		hint := map[string]string{"TUMBLE": "TUMBLE(ts, INTERVAL '1' MINUTE)", "HOP": "HOP(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)", "SESSION": "SESSION(ts, INTERVAL '5' MINUTE)"}[kind]
		return nil, nil, nil, errAt(ErrUnsupported, pos, hint, "%s in GROUP BY takes the time column and %d interval(s)", kind, want-1)
	}
	cn, ok := call.Args[0].(*ast.ColumnNameExpr)
	if !ok {
		return nil, nil, nil, errAt(ErrUnsupported, b.pos(call.Args[0]), "", "the first argument of %s must be the time column", kind)
	}
	ref, err := b.bindExpr(cn, sc, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	col := ref.(*ColumnRef).Index
	in := input.Schema()
	if in[col].Type.Kind != types.Timestamp {
		return nil, nil, nil, errAt(ErrTypeMismatch, b.pos(cn), "declare it TIMESTAMP(3) with a WATERMARK FOR clause",
			"the time column '%s' of %s must be a TIMESTAMP, it is %s", in[col].Name, kind, in[col].Type)
	}
	for _, c := range in {
		for _, n := range windowColumns {
			if strings.EqualFold(c.Name, n) {
				return nil, nil, nil, errAt(ErrUnsupported, pos, "rename the column", "the input of %s already has a column '%s'", kind, c.Name)
			}
		}
	}
	// The input's own window aggregations are planned later (rule
	// windowAggregates); judge the input as they will make it, so that
	// windows can be stacked on a window's rowtime.
	probe := windowJoins(windowAggregates(input))
	if ModeOf(probe) == Updating {
		return nil, nil, nil, errAt(ErrUnsupported, pos, "window an append-only table or view, or aggregate with GROUP BY without a window", "%s over an updating input (from %s) is not supported: windows need an append-only input", kind, producer(probe))
	}
	proctime, err := timeAttribute(probe, col, kind, b.pos(cn))
	if err != nil {
		return nil, nil, nil, err
	}
	spec := WindowSpec{Kind: kind, TimeCol: col, TimeName: in[col].Name, Proctime: proctime}
	gw := &groupWindow{kind: kind, call: call, args: []string{strings.ToLower(cn.Name.Name.O)}, proctime: proctime}
	var ivs []int64
	for _, a := range call.Args[1:] {
		iv, ok := sql.IntervalOf(b.stmt, a)
		if !ok {
			return nil, nil, nil, errAt(ErrUnsupported, b.pos(a), "write an interval such as INTERVAL '1' MINUTE", "the arguments of %s after the time column must be intervals", kind)
		}
		d, derr := iv.Duration()
		if derr != nil {
			return nil, nil, nil, errAt(ErrUnsupported, iv.Pos, "", "%s: %v", kind, derr)
		}
		if d <= 0 {
			return nil, nil, nil, errAt(ErrUnsupported, iv.Pos, "write a positive interval, such as INTERVAL '1' MINUTE", "the intervals of %s must be positive", kind)
		}
		ivs = append(ivs, d.Microseconds())
		gw.args = append(gw.args, d.String())
	}
	switch kind {
	case "TUMBLE", "SESSION":
		spec.Size = ivs[0]
		if len(ivs) > 1 {
			spec.Offset = ivs[1]
		}
	case "HOP":
		spec.Slide, spec.Size = ivs[0], ivs[1]
		if len(ivs) > 2 {
			spec.Offset = ivs[2]
		}
		if err := checkWindowsPerRow(spec, b.pos(call.Args[1])); err != nil {
			return nil, nil, nil, err
		}
	}
	late, err := b.lateRecords(input, kind, pos)
	if err != nil {
		return nil, nil, nil, err
	}
	tvf := &WindowTVF{Input: input, Window: spec, Late: late}
	wsc := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for _, n := range windowColumns {
		wsc.cols = append(wsc.cols, scopeCol{name: n, t: windowColType()})
	}
	// A copy of sel whose GROUP BY has the window columns for the call.
	s := *sel
	gb := *sel.GroupBy
	gb.Items = nil
	for i, item := range sel.GroupBy.Items {
		if i != at {
			gb.Items = append(gb.Items, item)
			continue
		}
		for _, n := range windowColumns {
			gb.Items = append(gb.Items, &ast.ByItem{Expr: windowColumnExpr(n)})
		}
	}
	s.GroupBy = &gb
	b.groupWin = gw
	return &s, tvf, wsc, nil
}

func windowColumnExpr(name string) *ast.ColumnNameExpr {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(name)}}
}

// groupWindowFunc binds an auxiliary group-window function
// (TUMBLE_START(ts, size) and the like) to its window column; ok is false
// for other functions.
func (b *binder) groupWindowFunc(e *ast.FuncCallExpr, sc *scope, agg *aggScope) (Expr, bool, error) {
	name := e.FnName.L
	var kind, col string
	for fn, k := range groupWindowKinds {
		if !strings.HasPrefix(name, fn+"_") {
			continue
		}
		if c, ok := groupWindowAux[name[len(fn):]]; ok {
			kind, col = k, c
		}
	}
	if kind == "" {
		if _, ok := groupWindowKinds[name]; ok {
			return nil, true, errAt(ErrUnsupported, b.pos(e), "group windows belong in GROUP BY; or use FROM TABLE("+strings.ToUpper(name)+"(TABLE t, DESCRIPTOR(ts), ...))",
				"%s(...) is only allowed in GROUP BY", strings.ToUpper(name))
		}
		return nil, false, nil
	}
	gw := b.groupWin
	upper := strings.ToUpper(name)
	if gw == nil {
		return nil, true, errAt(ErrUnsupported, b.pos(e), "", "%s needs a %s group window in GROUP BY", upper, kind)
	}
	if gw.kind != kind || !sameGroupWindowArgs(b.stmt, e.Args, gw.args) {
		return nil, true, errAt(ErrUnsupported, b.pos(e), "", "the arguments of %s must be those of the group window %s in GROUP BY", upper, gw.kind)
	}
	switch {
	case strings.HasSuffix(name, "_rowtime") && gw.proctime:
		return nil, true, errAt(ErrUnsupported, b.pos(e), "use "+kind+"_PROCTIME",
			"%s needs an event-time window, and '%s' is a processing-time attribute", upper, e.Args[0].(*ast.ColumnNameExpr).Name.Name.O)
	case strings.HasSuffix(name, "_proctime") && !gw.proctime:
		return nil, true, errAt(ErrUnsupported, b.pos(e), "use "+kind+"_ROWTIME",
			"%s needs a processing-time window (a column pt AS PROCTIME()), and '%s' is not one", upper, e.Args[0].(*ast.ColumnNameExpr).Name.Name.O)
	}
	x, err := b.bindExpr(windowColumnExpr(col), sc, agg)
	return x, true, err
}

func sameGroupWindowArgs(stmt sql.Statement, args []ast.ExprNode, want []string) bool {
	if len(args) != len(want) {
		return false
	}
	cn, ok := args[0].(*ast.ColumnNameExpr)
	if !ok || strings.ToLower(cn.Name.Name.O) != want[0] {
		return false
	}
	for i, a := range args[1:] {
		iv, ok := sql.IntervalOf(stmt, a)
		if !ok {
			return false
		}
		if d, err := iv.Duration(); err != nil || d.String() != want[i+1] {
			return false
		}
	}
	return true
}
