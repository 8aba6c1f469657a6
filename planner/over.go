package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// OVER aggregations, Flink's OverAggregate:
//
//	SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts
//	    ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) FROM t
//
// Each distinct window of a select list binds to one Over node over the
// block's input (after its WHERE): the input's columns followed by the
// window's aggregates, one output row per input row. Over an unbounded
// input the window must be ordered by a time attribute, ascending, and end
// at the current row (Flink's streaming OVER); the input must be
// append-only, and so is the output. Over a bounded input it is ordered by
// any columns and framed as a batch engine does (FOLLOWING included).

// OverFrame is a window frame. Offsets count rows (ROWS) or are in the
// order column's unit (RANGE: microseconds for a timestamp).
type OverFrame struct {
	Rows bool
	// StartUnbounded: UNBOUNDED PRECEDING; else Start rows (or units)
	// PRECEDING, 0 being CURRENT ROW.
	StartUnbounded bool
	Start          int64
	// EndUnbounded: UNBOUNDED FOLLOWING; else End FOLLOWING, 0 being
	// CURRENT ROW.
	EndUnbounded bool
	End          int64
}

func (f OverFrame) String() string {
	kind, unit := "RANGE", ""
	if f.Rows {
		kind = "ROWS"
	}
	bound := func(unb bool, n int64, dir string) string {
		switch {
		case unb:
			return "UNBOUNDED " + dir
		case n == 0:
			return "CURRENT ROW"
		}
		return fmt.Sprintf("%d%s %s", n, unit, dir)
	}
	return kind + " BETWEEN " + bound(f.StartUnbounded, f.Start, "PRECEDING") + " AND " + bound(f.EndUnbounded, f.End, "FOLLOWING")
}

// Over computes Aggs over a window of each input row: the rows of its
// partition (Partition columns) in the order of Order within Frame. Its
// output is the input's columns followed by the aggregates.
type Over struct {
	Input     Node
	Partition []int
	Order     []SortKey
	Frame     OverFrame
	Aggs      []AggCall
	// Funcs are the window functions that are no aggregates (RANK, LAG,
	// ...): their results follow the aggregates'.
	Funcs []WindowCall
	// Rowtime, Proctime: ordered by one event-time (processing-time)
	// attribute, ascending.
	Rowtime, Proctime bool
	// Interval: the RANGE offsets are microseconds (a timestamp order).
	Interval bool
}

func (o *Over) Schema() types.Schema {
	out := append(types.Schema{}, o.Input.Schema()...)
	for _, c := range o.Aggs {
		out = append(out, types.Column{Name: c.Name, Type: c.T})
	}
	for _, c := range o.Funcs {
		out = append(out, types.Column{Name: c.Name, Type: c.T})
	}
	return out
}

// WindowFunc names a window function that is no aggregate.
type WindowFunc string

const (
	WinRowNumber   WindowFunc = "ROW_NUMBER"
	WinRank        WindowFunc = "RANK"
	WinDenseRank   WindowFunc = "DENSE_RANK"
	WinPercentRank WindowFunc = "PERCENT_RANK"
	WinCumeDist    WindowFunc = "CUME_DIST"
	WinNtile       WindowFunc = "NTILE"
	WinLag         WindowFunc = "LAG"
	WinLead        WindowFunc = "LEAD"
)

// WindowCall is one window function over an Over node's window. Ranking
// functions number a row by its place in the partition's order (peers,
// rows equal on the order keys, rank alike); LAG and LEAD read Arg of the
// row Offset rows before (after) in that order, Default's value (NULL
// without one) where there is none. The frame does not apply.
type WindowCall struct {
	Func WindowFunc
	// Arg: LAG/LEAD's value column; Default: its default's column, or -1.
	Arg, Default int
	// Offset: LAG/LEAD's offset; NTILE's number of buckets.
	Offset int64
	T      types.T
	Name   string
}

func (c *WindowCall) describe(in types.Schema) string {
	var args []string
	switch c.Func {
	case WinLag, WinLead:
		args = append(args, in[c.Arg].Name, strconv.FormatInt(c.Offset, 10))
		if c.Default >= 0 {
			args = append(args, in[c.Default].Name)
		}
	case WinNtile:
		args = append(args, strconv.FormatInt(c.Offset, 10))
	}
	return fmt.Sprintf("%s(%s) AS %s", c.Func, strings.Join(args, ", "), c.Name)
}

func (o *Over) Children() []Node { return []Node{o.Input} }
func (o *Over) WithChildren(ch []Node) Node {
	c := *o
	c.Input = ch[0]
	return &c
}

// Expressions: an OVER aggregation reads its input's columns by index.
func (*Over) Expressions() []Expr           { return nil }
func (o *Over) WithExpressions([]Expr) Node { return o }

// Mode: one row out per row in; bindOver refuses an updating input.
func (o *Over) Mode(in []Mode) Mode                   { return in[0] }
func (o *Over) UpsertKey(in [][]int) []int            { return in[0] }
func (o *Over) prune([]bool) (Node, map[int]int)      { return keepAll(o) }
func (o *Over) Describe() string                      { return describeOverAgg(o, "") }
func (o *Over) physical(b *physBuilder, op *Operator) { o.build(b, op) }

func describeOverAgg(o *Over, mode string) string {
	in := o.Input.Schema()
	var part, order, sel []string
	for _, k := range o.Partition {
		part = append(part, in[k].Name)
	}
	for _, k := range o.Order {
		d := in[k.Index].Name + " ASC"
		if k.Desc {
			d = in[k.Index].Name + " DESC"
		}
		order = append(order, d)
	}
	sel = append(sel, in.Names()...)
	for i := range o.Aggs {
		sel = append(sel, o.Aggs[i].describe(in))
	}
	for i := range o.Funcs {
		sel = append(sel, o.Funcs[i].describe(in))
	}
	if mode != "" {
		mode = "mode=[" + mode + "], "
	}
	return fmt.Sprintf("OverAggregate(%spartitionBy=[%s], orderBy=[%s], window=[%s], select=[%s])",
		mode, strings.Join(part, ", "), strings.Join(order, ", "), o.Frame, strings.Join(sel, ", "))
}

func (o *Over) build(b *physBuilder, op *Operator) {
	in := b.build(o.Input)
	op.Spec = &OverSpec{Over: o, Bounded: !o.timeOrdered()}
	if len(o.Partition) == 0 {
		op.Parallelism = 1
		op.Inputs = []Edge{{From: in, Partition: Global}}
		return
	}
	op.Parallelism = b.par
	op.Inputs = []Edge{{From: in, Partition: Hash, Keys: o.Partition}}
}

// timeOrdered says the window is one streaming runs: ordered by a time
// attribute and ending at the current row. Others run sorted, on bounded
// input only; a bounded input ordered by time runs as streaming does, as
// Flink's streaming mode runs it.
func (o *Over) timeOrdered() bool {
	for _, c := range o.Funcs {
		if c.Func != WinLag {
			return false // ranks and LEAD read the whole partition
		}
	}
	return (o.Rowtime || o.Proctime) && !o.Frame.EndUnbounded && o.Frame.End == 0
}

// KindOver is the operator of an Over node.
const KindOver = "OverAggregate"

// OverSpec runs an Over node. Time-ordered (Bounded false), it buffers each
// row until the watermark passes its time (Flink's RowTime*Function; by
// processing time, at once) and keeps per partition the accumulators and
// the rows a later frame still covers; otherwise (bounded input), it keeps
// every row of a partition and frames them, sorted, at the end of the input.
type OverSpec struct {
	Over    *Over
	Bounded bool
}

func (*OverSpec) Kind() string { return KindOver }
func (s *OverSpec) Describe(o *Operator) string {
	return describeOverAgg(s.Over, s.TimeMode())
}
func (*OverSpec) KeepsKeyedState() bool { return true }

// TimeMode names how rows are ordered: ROWTIME, PROCTIME or SORTED.
func (s *OverSpec) TimeMode() string {
	switch {
	case s.Bounded:
		return "SORTED"
	case s.Over.Proctime:
		return "PROCTIME"
	}
	return "ROWTIME"
}

// Identity: partition and order keys, the frame, the aggregates and the
// time mode.
func (s *OverSpec) Identity(w *IDWriter) {
	o := s.Over
	w.Ints(o.Partition)
	w.Int(int64(len(o.Order)))
	for _, k := range o.Order {
		w.Int(int64(k.Index))
		w.Bool(k.Desc)
		w.Bool(k.NullsFirst)
	}
	f := o.Frame
	w.Bool(f.Rows)
	w.Bool(f.StartUnbounded)
	w.Int(f.Start)
	w.Bool(f.EndUnbounded)
	w.Int(f.End)
	w.AggCalls(o.Aggs)
	for _, c := range o.Funcs { // none: the ids of windows of aggregates only stay
		w.Str(string(c.Func))
		w.Int(int64(c.Arg))
		w.Int(int64(c.Default))
		w.Int(c.Offset)
		w.Type(c.T)
	}
	w.Str(s.TimeMode())
}

// overCall is one OVER call of a select list.
type overCall struct {
	e    *ast.WindowFuncExpr
	spec *ast.WindowSpec
	name string
}

// windowFuncs lists the OVER calls in e (not in subqueries).
type windowFuncs struct{ found []*ast.WindowFuncExpr }

func (v *windowFuncs) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WindowFuncExpr:
		v.found = append(v.found, x)
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}
func (v *windowFuncs) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// hasOverAggregate says whether fields hold an OVER call that is not a
// numbering function (those bind to a Rank, rank.go).
func hasOverAggregate(fields []selectField) bool {
	for _, f := range fields {
		if f.expr == nil {
			continue
		}
		v := &windowFuncs{}
		f.expr.Accept(v)
		for _, e := range v.found {
			switch strings.ToUpper(e.Name) {
			case "ROW_NUMBER", "RANK", "DENSE_RANK":
			default:
				return true
			}
		}
	}
	return false
}

// isNumbering says whether name is a function that numbers rows.
func isNumbering(name string) bool {
	switch strings.ToUpper(name) {
	case "ROW_NUMBER", "RANK", "DENSE_RANK":
		return true
	}
	return false
}

// needsOverNodes says whether the OVER calls of fields bind to Over nodes
// (bindOverAggregates) rather than to a Rank (bindOver, rank.go): every
// select list with an OVER aggregation or another window function, with
// several OVER calls, or with RANK() / DENSE_RANK() over a bounded input.
// A lone ROW_NUMBER(), and over an unbounded input a lone RANK() or
// DENSE_RANK() (the TopN pattern), number rows in a Rank.
func needsOverNodes(fields []selectField, input Node) bool {
	var calls []*ast.WindowFuncExpr
	for _, f := range fields {
		if f.expr == nil {
			continue
		}
		v := &windowFuncs{}
		f.expr.Accept(v)
		calls = append(calls, v.found...)
	}
	switch {
	case hasOverAggregate(fields), len(calls) > 1:
		return true
	case len(calls) == 1:
		return !strings.EqualFold(calls[0].Name, "ROW_NUMBER") && IsBounded(input)
	}
	return false
}

// bindOverAggregates binds the OVER aggregations of a select list: one
// Over node per distinct window, stacked over input, and the scope
// extended by their results (hidden columns the calls then read, through
// binder.over).
func (b *binder) bindOverAggregates(sel *ast.SelectStmt, fields []selectField, input Node, sc *scope, grouped bool) (Node, *scope, error) {
	named := map[string]*ast.WindowSpec{}
	if sel != nil {
		for i := range sel.WindowSpecs {
			named[strings.ToLower(sel.WindowSpecs[i].Name.O)] = &sel.WindowSpecs[i]
		}
	}
	var calls []overCall
	for _, f := range fields {
		if f.expr == nil {
			continue
		}
		v := &windowFuncs{}
		f.expr.Accept(v)
		for _, e := range v.found {
			c := overCall{e: e, spec: &e.Spec}
			if e == f.expr {
				c.name = f.name
			}
			if name := e.Spec.Name.O; e.Spec.OnlyAlias && name != "" {
				w, ok := named[strings.ToLower(name)]
				if !ok {
					return nil, nil, errAt(ErrUnsupported, b.pos(e), "define it: WINDOW "+name+" AS (PARTITION BY ... ORDER BY ...)", "window %s is not defined", name)
				}
				c.spec = w
			} else if e.Spec.Ref.O != "" || e.Spec.Name.O != "" {
				return nil, nil, errAt(ErrUnsupported, b.pos(e), "write OVER w or the whole window inline", "a window that refines a named window is not supported")
			}
			calls = append(calls, c)
		}
	}
	if grouped {
		return nil, nil, errAt(ErrUnsupported, b.pos(calls[0].e), "group in a subquery and aggregate over its rows in the query around it", "an OVER aggregation in a query with GROUP BY or aggregates is not supported")
	}
	if ModeOf(input) == Updating {
		return nil, nil, errAt(ErrUnsupported, b.pos(calls[0].e), "aggregate an append-only table or view (Flink's OVER aggregation takes append-only input)",
			"OVER aggregation over an updating input (from %s) is not supported", producer(input))
	}
	bounded := IsBounded(input)
	// The arguments that are no plain column are computed by a projection
	// below the windows.
	width := len(input.Schema())
	pre := &Project{Input: input}
	for i, c := range sc.cols {
		pre.Exprs = append(pre.Exprs, &ColumnRef{Index: i, Name: c.name, T: c.t})
		pre.Names = append(pre.Names, c.name)
	}
	cols := append([]scopeCol{}, sc.cols...)
	argCol := func(e Expr, name string) int {
		if c, ok := e.(*ColumnRef); ok {
			return c.Index
		}
		for i := width; i < len(pre.Exprs); i++ {
			if pre.Exprs[i].String() == e.String() {
				return i
			}
		}
		pre.Exprs = append(pre.Exprs, e)
		pre.Names = append(pre.Names, name)
		cols = append(cols, scopeCol{qual: "$over", name: "$" + name, t: e.Type(), hidden: true})
		return len(pre.Exprs) - 1
	}
	type window struct {
		key    string
		over   *Over
		refs   []*ast.WindowFuncExpr
		fnRefs []*ast.WindowFuncExpr
	}
	var wins []*window
	for _, c := range calls {
		name := strings.ToUpper(c.e.Name)
		var fn *WindowCall
		if nonAggWindowFuncs[WindowFunc(name)] {
			x, err := b.bindWindowCall(c, sc, bounded, func(e Expr, what string) int {
				return argCol(e, fmt.Sprintf("$%s%d", what, len(pre.Exprs)))
			})
			if err != nil {
				return nil, nil, err
			}
			fn = &x
		}
		o, err := b.overWindow(c, sc, input, bounded)
		if err != nil {
			return nil, nil, err
		}
		key := fmt.Sprintf("%v %v %v %v %v %v", o.Partition, o.Order, o.Frame, o.Rowtime, o.Proctime, o.Interval)
		var w *window
		for _, x := range wins {
			if x.key == key {
				w = x
			}
		}
		if w == nil {
			w = &window{key: key, over: o}
			wins = append(wins, w)
		}
		if fn != nil {
			w.over.Funcs = append(w.over.Funcs, *fn)
			w.fnRefs = append(w.fnRefs, c.e)
			continue
		}
		call, arg, filter, _, err := b.bindAggCall(aggNode{node: c.e, call: c.e, name: name, args: c.e.Args, distinct: c.e.Distinct}, sc)
		if err != nil {
			return nil, nil, err
		}
		if call.Distinct {
			return nil, nil, errAt(ErrUnsupported, b.pos(c.e), "", "%s(DISTINCT ...) OVER is not supported", name)
		}
		if arg != nil {
			call.Arg = argCol(arg, fmt.Sprintf("$arg%d", len(pre.Exprs)))
		}
		if filter != nil {
			call.HasFilter = true
			call.Filter = argCol(filter, fmt.Sprintf("$filter%d", len(pre.Exprs)))
		}
		call.Name = c.name
		w.over.Aggs = append(w.over.Aggs, call)
		w.refs = append(w.refs, c.e)
	}
	var node Node = input
	if len(pre.Exprs) > width {
		node = pre
	}
	if b.over == nil {
		b.over = map[*ast.WindowFuncExpr]*ColumnRef{}
	}
	for wi, w := range wins {
		at := len(node.Schema())
		for j := range w.over.Aggs {
			c := &w.over.Aggs[j]
			if c.Name == "" {
				c.Name = fmt.Sprintf("w%d$o%d", wi, j)
			}
			b.over[w.refs[j]] = &ColumnRef{Index: at + j, Name: c.Name, T: c.T}
			cols = append(cols, scopeCol{qual: "$over", name: "$" + c.Name, t: c.T, hidden: true})
		}
		at += len(w.over.Aggs)
		for j := range w.over.Funcs {
			c := &w.over.Funcs[j]
			if c.Name == "" {
				c.Name = fmt.Sprintf("w%d$f%d", wi, j)
			}
			b.over[w.fnRefs[j]] = &ColumnRef{Index: at + j, Name: c.Name, T: c.T}
			cols = append(cols, scopeCol{qual: "$over", name: "$" + c.Name, t: c.T, hidden: true})
		}
		w.over.Input = node
		node = w.over
	}
	return node, &scope{cols: cols}, nil
}

// nonAggWindowFuncs are the window functions bindWindowCall binds.
var nonAggWindowFuncs = map[WindowFunc]bool{WinRowNumber: true, WinRank: true, WinDenseRank: true,
	WinPercentRank: true, WinCumeDist: true, WinNtile: true, WinLag: true, WinLead: true}

// bindWindowCall binds a window function that is no aggregate. They run on
// bounded input; over an unbounded one only LAG runs (over a window
// ordered by time: the rows emitted before), numbering rows is the TopN
// pattern's (rank.go), and LEAD would need rows that have not arrived.
// argCol gives the input column of an argument ("value", "default").
func (b *binder) bindWindowCall(c overCall, sc *scope, bounded bool, argCol func(e Expr, what string) int) (WindowCall, error) {
	name := WindowFunc(strings.ToUpper(c.e.Name))
	pos := b.pos(c.e)
	if pos == b.stmt.Pos() { // the parser places no LEAD call
		pos = b.identPos(c.e.Name)
	}
	fn := WindowCall{Func: name, Arg: -1, Default: -1, Name: c.name, T: types.T{Kind: types.BigInt, NotNull: true}}
	if !bounded {
		switch name {
		case WinLag:
		case WinLead:
			return fn, errAt(ErrUnsupported, pos, "run it on a bounded table",
				"LEAD() OVER an unbounded input is not supported: it reads rows that have not arrived (Flink refuses it in streaming mode too)")
		default:
			return fn, errAt(ErrUnsupported, pos, "over an unbounded input, number rows in the TopN pattern: SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) AS rn FROM t) WHERE rn <= N",
				"%s() OVER an unbounded input is supported only alone in the TopN pattern, as in Flink", name)
		}
	}
	if c.e.IgnoreNull || c.e.FromLast || c.e.Distinct {
		return fn, errAt(ErrUnsupported, pos, "", "%s() takes no IGNORE NULLS, FROM LAST or DISTINCT", name)
	}
	if c.spec.OrderBy == nil || len(c.spec.OrderBy.Items) == 0 {
		return fn, errAt(ErrUnsupported, pos, "add ORDER BY to the window", "%s() OVER needs an ORDER BY", name)
	}
	if c.spec.Frame != nil {
		return fn, errAt(ErrUnsupported, pos, "leave the frame out: "+string(name)+"() reads the whole partition in its order",
			"%s() takes no ROWS or RANGE frame", name)
	}
	args := c.e.Args
	switch name {
	case WinRowNumber, WinRank, WinDenseRank, WinPercentRank, WinCumeDist:
		if len(args) != 0 {
			return fn, errAt(ErrUnsupported, pos, "", "%s() takes no arguments", name)
		}
		if name == WinPercentRank || name == WinCumeDist {
			fn.T = types.T{Kind: types.Double, NotNull: true}
		}
		return fn, nil
	case WinNtile:
		if len(args) != 1 {
			return fn, errAt(ErrUnsupported, pos, "", "NTILE() takes one argument, the number of buckets")
		}
		n, ok := intLiteral(args[0])
		if !ok || n <= 0 {
			return fn, errAt(ErrUnsupported, b.pos(args[0]), "", "NTILE's number of buckets must be a positive integer literal")
		}
		fn.Offset = n
		return fn, nil
	}
	// LAG, LEAD: (value [, offset [, default]]).
	if len(args) < 1 || len(args) > 3 {
		return fn, errAt(ErrUnsupported, pos, "", "%s() takes one to three arguments: value, offset, default", name)
	}
	v, err := b.bindExpr(args[0], sc, nil)
	if err != nil {
		return fn, err
	}
	fn.T = v.Type().Nullable()
	fn.Offset = 1
	if len(args) > 1 {
		n, ok := intLiteral(args[1])
		if !ok || n < 0 {
			return fn, errAt(ErrUnsupported, b.pos(args[1]), "", "%s's offset must be a non-negative integer literal", name)
		}
		fn.Offset = n
	}
	if len(args) > 2 {
		d, err := b.bindExpr(args[2], sc, nil)
		if err != nil {
			return fn, err
		}
		dc, err := implicitCast(d, fn.T)
		if err != nil {
			return fn, errAt(ErrUnsupported, b.pos(args[2]), "cast the default to the value's type", "%s's default of type %s does not fit the value's type %s", name, d.Type(), fn.T)
		}
		fn.Default = argCol(dc, "default")
	}
	fn.Arg = argCol(v, "value")
	return fn, nil
}

// intLiteral reads an integer literal.
func intLiteral(e ast.ExprNode) (int64, bool) {
	lit, ok := e.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	switch v := lit.GetValue().(type) {
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= 1<<62
	}
	return 0, false
}

// overWindow binds the window of call c: partition and order keys and
// the frame, checked against what the input allows.
func (b *binder) overWindow(c overCall, sc *scope, input Node, bounded bool) (*Over, error) {
	spec, pos := c.spec, b.pos(c.e)
	o := &Over{}
	if spec.PartitionBy != nil {
		for _, it := range spec.PartitionBy.Items {
			k, err := b.overColumn(it.Expr, sc, "PARTITION BY")
			if err != nil {
				return nil, err
			}
			o.Partition = append(o.Partition, k)
		}
	}
	if spec.OrderBy != nil {
		for _, it := range spec.OrderBy.Items {
			k, err := b.overColumn(it.Expr, sc, "ORDER BY")
			if err != nil {
				return nil, err
			}
			nullsFirst := !it.Desc
			if first, ok := sql.NullsFirst(b.stmt, it); ok {
				nullsFirst = first
			}
			o.Order = append(o.Order, SortKey{Index: k, Desc: it.Desc, NullsFirst: nullsFirst})
		}
	}
	streamHint := "order by a time attribute (a WATERMARK column or a PROCTIME() column), ascending"
	if len(o.Order) == 1 && !o.Order[0].Desc {
		o.Proctime = isProctime(input, o.Order[0].Index)
		o.Rowtime = !o.Proctime && isRowtime(input, o.Order[0].Index)
	}
	if !bounded {
		if len(o.Order) != 1 {
			return nil, errAt(ErrUnsupported, pos, streamHint, "an OVER aggregation on an unbounded input must be ordered by one time attribute")
		}
		k := o.Order[0]
		if !isProctime(input, k.Index) && !isRowtime(input, k.Index) {
			return nil, errAt(ErrUnsupported, pos, streamHint, "an OVER aggregation on an unbounded input must be ordered by a time attribute, not by %s", sc.cols[k.Index].name)
		}
		if k.Desc {
			return nil, errAt(ErrUnsupported, pos, streamHint, "an OVER aggregation on an unbounded input must be ordered by its time attribute ascending")
		}
	}
	f := spec.Frame
	switch {
	case f == nil && len(o.Order) == 0:
		o.Frame = OverFrame{Rows: true, StartUnbounded: true, EndUnbounded: true}
	case f == nil:
		o.Frame = OverFrame{StartUnbounded: true}
	default:
		if f.Type != ast.Rows && f.Type != ast.Ranges {
			return nil, errAt(ErrUnsupported, pos, "use ROWS or RANGE", "GROUPS frames are not supported")
		}
		o.Frame.Rows = f.Type == ast.Rows
		var err error
		if o.Frame.StartUnbounded, o.Frame.Start, err = b.frameBound(&f.Extent.Start, o, sc, true); err != nil {
			return nil, err
		}
		if o.Frame.EndUnbounded, o.Frame.End, err = b.frameBound(&f.Extent.End, o, sc, false); err != nil {
			return nil, err
		}
	}
	if !bounded && (o.Frame.EndUnbounded || o.Frame.End != 0) {
		return nil, errAt(ErrUnsupported, pos, "end the frame at CURRENT ROW: ROWS BETWEEN n PRECEDING AND CURRENT ROW, or run it on a bounded table",
			"an OVER window on an unbounded input cannot reach FOLLOWING rows (Flink supports only frames ending at the current row)")
	}
	if !o.Frame.Rows && (o.Frame.Start > 0 || o.Frame.End > 0) {
		if len(o.Order) != 1 {
			return nil, errAt(ErrUnsupported, pos, "use ROWS, or order by one column", "a RANGE frame with an offset needs exactly one ORDER BY column")
		}
		if o.Order[0].Desc {
			return nil, errAt(ErrUnsupported, pos, "order ascending, or use ROWS", "a RANGE frame with an offset over a descending order is not supported")
		}
	}
	return o, nil
}

// frameBound reads one bound of a frame: unbounded, and the offset (0:
// CURRENT ROW).
func (b *binder) frameBound(fb *ast.FrameBound, o *Over, sc *scope, start bool) (bool, int64, error) {
	pos := b.stmt.Pos()
	if fb.Expr != nil {
		pos = b.pos(fb.Expr)
	}
	switch {
	case fb.Type == ast.CurrentRow:
		return false, 0, nil
	case start && fb.Type == ast.Following, !start && fb.Type == ast.Preceding:
		return false, 0, errAt(ErrUnsupported, pos, "start the frame at or before the current row and end it at or after", "a frame that does not hold the current row is not supported")
	case fb.UnBounded:
		return true, 0, nil
	}
	lit, ok := fb.Expr.(ast.ValueExpr)
	if !ok {
		return false, 0, errAt(ErrUnsupported, pos, "", "a frame offset must be a literal")
	}
	var n int64
	var err error
	switch v := lit.GetValue().(type) {
	case int64:
		n = v
	case uint64:
		n = int64(v)
	case string:
		n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	default:
		err = fmt.Errorf("not an integer")
	}
	if err != nil || n < 0 {
		return false, 0, errAt(ErrUnsupported, pos, "", "a frame offset must be a non-negative integer")
	}
	if o.Frame.Rows {
		if fb.Unit != ast.TimeUnitInvalid {
			return false, 0, errAt(ErrUnsupported, pos, "use RANGE for an interval", "a ROWS frame offset counts rows, not an interval")
		}
		return false, n, nil
	}
	if len(o.Order) != 1 {
		return false, 0, errAt(ErrUnsupported, pos, "use ROWS, or order by one column", "a RANGE frame with an offset needs exactly one ORDER BY column")
	}
	t := sc.cols[o.Order[0].Index].t
	if fb.Unit == ast.TimeUnitInvalid {
		if !t.IsInteger() {
			return false, 0, errAt(ErrUnsupported, pos, "write INTERVAL 'n' SECOND (or MINUTE, HOUR, DAY) PRECEDING", "a RANGE offset without a unit needs an integer ORDER BY column, not %s", t)
		}
		return false, n, nil
	}
	if t.Kind != types.Timestamp {
		return false, 0, errAt(ErrUnsupported, pos, "", "a RANGE offset with an interval needs a TIMESTAMP ORDER BY column, not %s", t)
	}
	unit := map[ast.TimeUnitType]int64{ast.TimeUnitMicrosecond: 1, ast.TimeUnitSecond: 1e6, ast.TimeUnitMinute: 60e6, ast.TimeUnitHour: 3600e6, ast.TimeUnitDay: 86400e6}
	m, ok := unit[fb.Unit]
	if !ok {
		return false, 0, errAt(ErrUnsupported, pos, "use SECOND, MINUTE, HOUR or DAY", "interval unit %s in a frame is not supported", fb.Unit)
	}
	o.Interval = true
	return false, n * m, nil
}
