package planner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

var binaryOps = map[opcode.Op]string{
	opcode.LogicAnd: "AND", opcode.LogicOr: "OR",
	opcode.GE: ">=", opcode.LE: "<=", opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.GT: ">",
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.Mod: "%",
	opcode.IntDiv: "DIV", opcode.NullEQ: "IS NOT DISTINCT FROM",
}

// MaxExprDepth is how deeply expressions may nest (a chain a + b + c ...
// of n terms is n-1 deep): deeper ones are refused with an error rather
// than risking the stack of the recursive passes over them.
const MaxExprDepth = 100000

// bindExpr binds e against sc. Above a GROUP BY, agg is the aggregate scope
// (group keys and aggregate calls); otherwise nil.
func (b *binder) bindExpr(e ast.ExprNode, sc *scope, agg *aggScope) (Expr, error) {
	if b.steps++; b.steps%1024 == 0 {
		if err := b.p.ctxErr(); err != nil {
			return nil, err
		}
	}
	if b.depth >= MaxExprDepth {
		return nil, errAt(ErrUnsupported, b.pos(e), "split the expression, or compute parts of it in a view or subquery",
			"expression nested more than %d levels deep", MaxExprDepth)
	}
	b.depth++
	defer func() { b.depth-- }()
	if agg != nil {
		x, handled, err := b.bindAggregated(e, sc, agg)
		if handled {
			return x, err
		}
	}
	switch e := e.(type) {
	case *driver.ValueExpr:
		return b.literal(e)
	case *ast.ColumnNameExpr:
		if x, ok, err := b.bindField(e.Name, sc, e); ok {
			return x, err
		}
		return b.resolveColumn(e.Name, sc, e)
	case *ast.ParenthesesExpr:
		return b.bindExpr(e.Expr, sc, agg)
	case *ast.RowExpr:
		return b.bindRow(e, sc, agg)
	case *ast.BinaryOperationExpr:
		name, ok := binaryOps[e.Op]
		if !ok {
			return nil, errAt(ErrUnsupported, b.pos(e), "", "operator %s is not supported", e.Op.String())
		}
		l, err := b.bindExpr(e.L, sc, agg)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(e.R, sc, agg)
		if err != nil {
			return nil, err
		}
		if name == "DIV" {
			return b.call("/", b.pos(e), l, r)
		}
		return b.call(name, b.pos(e), l, r)
	case *ast.UnaryOperationExpr:
		x, err := b.bindExpr(e.V, sc, agg)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case opcode.Minus:
			return b.call("NEG", b.pos(e), x)
		case opcode.Plus:
			return x, nil
		case opcode.Not, opcode.Not2:
			return b.call("NOT", b.pos(e), x)
		}
		return nil, errAt(ErrUnsupported, b.pos(e), "", "operator %s is not supported", e.Op.String())
	case *ast.IsNullExpr:
		x, err := b.bindExpr(e.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		if e.Not {
			return b.call("IS NOT NULL", b.pos(e), x)
		}
		return b.call("IS NULL", b.pos(e), x)
	case *ast.IsTruthExpr:
		x, err := b.bindExpr(e.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		name := "IS TRUE"
		if e.True == 0 {
			name = "IS FALSE"
		}
		if e.Not {
			name = strings.Replace(name, "IS ", "IS NOT ", 1)
		}
		return b.call(name, b.pos(e), x)
	case *ast.BetweenExpr:
		x, err := b.bindExpr(e.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		lo, err := b.bindExpr(e.Left, sc, agg)
		if err != nil {
			return nil, err
		}
		hi, err := b.bindExpr(e.Right, sc, agg)
		if err != nil {
			return nil, err
		}
		ge, err := b.call(">=", b.pos(e), x, lo)
		if err != nil {
			return nil, err
		}
		le, err := b.call("<=", b.pos(e), x, hi)
		if err != nil {
			return nil, err
		}
		and, err := b.call("AND", b.pos(e), ge, le)
		if err != nil || !e.Not {
			return and, err
		}
		return b.call("NOT", b.pos(e), and)
	case *ast.PatternInExpr:
		return b.bindIn(e, sc, agg)
	case *ast.PatternLikeOrIlikeExpr:
		x, err := b.bindExpr(e.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		p, err := b.bindExpr(e.Pattern, sc, agg)
		if err != nil {
			return nil, err
		}
		if !e.IsLike {
			if x, err = b.call("LOWER", b.pos(e), x); err != nil {
				return nil, err
			}
			if p, err = b.call("LOWER", b.pos(e), p); err != nil {
				return nil, err
			}
		}
		args := []Expr{x, p}
		if e.EscapeExplicit {
			args = append(args, &Literal{Value: string(rune(e.Escape)), T: types.StringType})
		}
		name := "LIKE"
		if sql.IsSimilar(b.stmt, e) {
			name = "SIMILAR TO"
		}
		if e.Not {
			name = "NOT " + name
		}
		return b.call(name, b.pos(e), args...)
	case *ast.CaseExpr:
		return b.bindCase(e, sc, agg)
	case *ast.FuncCallExpr:
		return b.bindFunc(e, sc, agg)
	case *ast.FuncCastExpr:
		x, err := b.bindExpr(e.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		t, err := b.castTarget(e)
		if err != nil {
			return nil, err
		}
		// TRY_CAST gives NULL where CAST fails, so its type is nullable.
		try := sql.IsTryCast(b.stmt, e)
		cast := functions.Cast
		if try {
			cast = functions.TryCast
			t.NotNull = false
		}
		k, err := cast(x.Type(), t)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, b.pos(e), "", "%v", err)
		}
		return b.castLength(e, &Cast{Arg: x, T: t, Try: try, Kernel: k})
	case *ast.WindowFuncExpr:
		if r, ok := b.over[e]; ok {
			return r, nil
		}
		return nil, errAt(ErrUnsupported, b.pos(e), "an aggregate with GROUP BY, a window table function (TUMBLE, HOP, CUMULATE, SESSION), or ROW_NUMBER() OVER (...) AS rn as a column of a select list filtered by rn <= N around it",
			"OVER windows are not supported yet")
	case *ast.TimeUnitExpr:
		return &Literal{Value: e.Unit.String(), T: types.StringType}, nil
	case *ast.TrimDirectionExpr:
		return &Literal{Value: e.Direction.String(), T: types.StringType}, nil
	case *ast.SubqueryExpr:
		if x, err := b.scalarSubqueryJoin(e, sc); x != nil || err != nil {
			return x, err
		}
		return b.scalarSubquery(e)
	case *ast.ExistsSubqueryExpr:
		sq, ok := e.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, errAt(ErrUnsupported, b.pos(e), "", "unsupported EXISTS form")
		}
		if x, err := b.existsJoin(sq, e.Not, sc, b.pos(e)); x != nil || err != nil {
			return x, err
		}
		rows, _, err := b.runSubquery(sq)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: (len(rows) > 0) != e.Not, T: types.BooleanType}, nil
	case *ast.CompareSubqueryExpr:
		return b.bindCompareSubquery(e, sc, agg)
	case *ast.AggregateFuncExpr:
		return nil, errAt(ErrUnsupported, b.pos(e), "", "aggregate function %s is not allowed here", strings.ToUpper(e.F))
	case *ast.DefaultExpr:
		return nil, errAt(ErrUnsupported, b.pos(e), "", "DEFAULT is not supported")
	}
	return nil, errAt(ErrUnsupported, b.pos(e), "", "unsupported expression %T", e)
}

// literal types a constant as Flink does: integer literals are INT when
// they fit, else BIGINT; exact decimals are DECIMAL(p, s); floats DOUBLE.
func (b *binder) literal(v *driver.ValueExpr) (Expr, error) {
	switch v.Kind() {
	case driver.KindNull:
		return &Literal{T: types.NullType}, nil
	case driver.KindInt64:
		n := v.GetInt64()
		if v.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			return &Literal{Value: n != 0, T: types.T{Kind: types.Boolean, NotNull: true}}, nil
		}
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return &Literal{Value: n, T: types.T{Kind: types.Int, NotNull: true}}, nil
		}
		return &Literal{Value: n, T: types.T{Kind: types.BigInt, NotNull: true}}, nil
	case driver.KindUint64:
		u := v.GetUint64()
		if u <= math.MaxInt64 {
			return &Literal{Value: int64(u), T: types.T{Kind: types.BigInt, NotNull: true}}, nil
		}
		return b.decimalLiteral(strconv.FormatUint(u, 10), v)
	case driver.KindFloat32, driver.KindFloat64:
		return &Literal{Value: v.GetFloat64(), T: types.T{Kind: types.Double, NotNull: true}}, nil
	case driver.KindMysqlDecimal:
		return b.decimalLiteral(v.GetMysqlDecimal().String(), v)
	case driver.KindString, driver.KindBytes:
		return &Literal{Value: v.GetString(), T: types.T{Kind: types.String, NotNull: true}}, nil
	case driver.KindBinaryLiteral:
		return &Literal{Value: []byte(v.GetBinaryLiteral()), T: types.T{Kind: types.Bytes, NotNull: true}}, nil
	}
	return nil, errAt(ErrUnsupported, b.pos(v), "", "unsupported literal")
}

func (b *binder) decimalLiteral(s string, v ast.ExprNode) (Expr, error) {
	digits := strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ".", ""), "0")
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
	}
	p := max(len(digits), scale, 1)
	if p > 38 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, b.pos(v), "", "bad number %s", s)
		}
		return &Literal{Value: f, T: types.T{Kind: types.Double, NotNull: true}}, nil
	}
	n, err := types.ParseDecimal(s, p, scale)
	if err != nil {
		return nil, errAt(ErrTypeMismatch, b.pos(v), "", "%v", err)
	}
	t := types.DecimalOf(p, scale)
	t.NotNull = true
	return &Literal{Value: n, T: t}, nil
}

// call resolves name over args, inserting the implicit casts it asks for.
func (b *binder) call(name string, pos sql.Pos, args ...Expr) (Expr, error) {
	f, ok := functions.Lookup(name)
	if !ok {
		if uf, ok := b.userFunction(name); ok {
			return b.userCall(uf, pos, args)
		}
		hint := ""
		if m := closestFunc(name); m != "" {
			hint = fmt.Sprintf("did you mean %s?", m)
		}
		return nil, errAt(ErrUnsupported, pos, hint, "unknown function %s", name)
	}
	fargs := make([]functions.Arg, len(args))
	for i, a := range args {
		fargs[i] = functions.Arg{Type: a.Type()}
		if l, ok := b.consts.constOf(a); ok {
			fargs[i].Const, fargs[i].Value = true, l.Value
		}
	}
	r, err := f.ResolveArgs(fargs)
	if err != nil {
		msg := err.Error()
		if !strings.Contains(msg, name) {
			msg = name + ": " + msg
		}
		if errors.Is(err, functions.ErrUnsupportedType) {
			// A function whose result needs a type we lack (MAP, ARRAY).
			return nil, errAt(ErrUnsupported, pos, "", "%s", strings.TrimSuffix(msg, ": "+functions.ErrUnsupportedType.Error()))
		}
		if errors.Is(err, functions.ErrInvalidArgument) {
			// A literal argument that can never work (a bad pattern).
			return nil, errAt(ErrTypeMismatch, pos, "", "%s", msg)
		}
		return nil, errAt(ErrTypeMismatch, pos, "CAST the arguments to types that "+name+" accepts", "%s", msg)
	}
	for i := range args {
		if i < len(r.ArgTypes) && !args[i].Type().Equal(r.ArgTypes[i]) {
			if args[i], err = implicitCast(args[i], r.ArgTypes[i]); err != nil {
				return nil, errAt(ErrTypeMismatch, pos, "", "%s: %v", name, err)
			}
		}
	}
	c := &Call{Func: f.Name, Args: args, Resolved: r}
	if b.viewDepth == 0 {
		c.Pos = pos
	}
	// A call on constants is its value (constant folding would make it so
	// anyway): evaluated once here, it is not evaluated again by the rule.
	if l, ok := b.consts.constOf(c); ok {
		return l, nil
	}
	return c, nil
}

func closestFunc(name string) string {
	return catalog.Closest(name, functions.Names())
}

// implicitCast converts e to t where Flink would do so implicitly.
func implicitCast(e Expr, t types.T) (Expr, error) {
	from := e.Type()
	if from.Equal(t) {
		return e, nil
	}
	if l, ok := e.(*Literal); ok && l.Value == nil {
		return &Literal{T: t.Nullable()}, nil
	}
	k, err := functions.Cast(from, t)
	if err != nil {
		return nil, err
	}
	return &Cast{Arg: e, T: t, Kernel: k}, nil
}

func commonType(a, b types.T) (types.T, bool) {
	if a.Kind == types.Null {
		return b, true
	}
	if b.Kind == types.Null {
		return a, true
	}
	return functions.CommonType(a, b)
}

func (b *binder) bindIn(e *ast.PatternInExpr, sc *scope, agg *aggScope) (Expr, error) {
	x, err := b.bindExpr(e.Expr, sc, agg)
	if err != nil {
		return nil, err
	}
	args := []Expr{x}
	if e.Sel != nil {
		sq, ok := e.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, errAt(ErrUnsupported, b.pos(e), "", "unsupported IN form")
		}
		if agg == nil || (b.sub != nil && b.sub.agg == agg) {
			if run, err := b.runsWhilePlanning(sq.Query, sc, b.pos(sq)); err != nil {
				return nil, err
			} else if !run {
				// Correlated, or over unbounded tables: a join.
				in, err := b.quantifiedJoin(x, "=", false, sq, sc, b.pos(e))
				if err != nil || !e.Not {
					return in, err
				}
				return b.call("NOT", b.pos(e), in)
			}
		}
		rows, cols, err := b.runSubquery(sq)
		if err != nil {
			return nil, err
		}
		if len(cols) != 1 {
			return nil, errAt(ErrTypeMismatch, b.pos(e), "", "IN subquery must return one column, it returns %d", len(cols))
		}
		if len(rows) == 0 {
			return &Literal{Value: e.Not, T: types.BooleanType}, nil
		}
		for _, r := range rows {
			args = append(args, &Literal{Value: r[0], T: cols[0].Type})
		}
	} else {
		if len(e.List) == 0 {
			// x IN () (SQLite): FALSE whatever x is; NOT IN (): TRUE.
			return &Literal{Value: e.Not, T: types.BooleanType}, nil
		}
		for _, item := range e.List {
			v, err := b.bindExpr(item, sc, agg)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
	}
	name := "IN"
	if e.Not {
		name = "NOT IN"
	}
	return b.call(name, b.pos(e), args...)
}

// bindCase binds CASE [x] WHEN ... THEN ... [ELSE ...] END into the
// searched form CASE(cond1, val1, ..., [else]).
func (b *binder) bindCase(e *ast.CaseExpr, sc *scope, agg *aggScope) (Expr, error) {
	var operand Expr
	if e.Value != nil {
		var err error
		if operand, err = b.bindExpr(e.Value, sc, agg); err != nil {
			return nil, err
		}
	}
	var args []Expr
	for _, w := range e.WhenClauses {
		cond, err := b.bindExpr(w.Expr, sc, agg)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = b.call("=", b.pos(w.Expr), operand, cond); err != nil {
				return nil, err
			}
		} else if cond.Type().Kind != types.Boolean && cond.Type().Kind != types.Null {
			if cond, err = b.bindBoolExpr(cond, b.pos(w.Expr)); err != nil {
				return nil, err
			}
		}
		res, err := b.bindExpr(w.Result, sc, agg)
		if err != nil {
			return nil, err
		}
		args = append(args, cond, res)
	}
	if e.ElseClause != nil {
		x, err := b.bindExpr(e.ElseClause, sc, agg)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	return b.call("CASE", b.pos(e), args...)
}

func (b *binder) bindBoolExpr(x Expr, pos sql.Pos) (Expr, error) {
	if x.Type().IsNumeric() {
		return b.call("<>", pos, x, &Literal{Value: int64(0), T: types.IntType})
	}
	return nil, errAt(ErrTypeMismatch, pos, "", "condition must be BOOLEAN, got %s", x.Type())
}

// funcAliases maps MySQL spellings onto the function library's names.
var funcAliases = map[string]string{
	"ifnull": "COALESCE", "nvl": "COALESCE", "ceiling": "CEIL", "substr": "SUBSTRING",
	"character_length": "CHAR_LENGTH", "current_timestamp": "CURRENT_TIMESTAMP", "now": "NOW",
	"localtimestamp": "LOCALTIMESTAMP", "curdate": "CURRENT_DATE", "current_date": "CURRENT_DATE",
}

func (b *binder) bindFunc(e *ast.FuncCallExpr, sc *scope, agg *aggScope) (Expr, error) {
	if clause, ok := groupingMarker(e); ok {
		return nil, errAt(ErrUnsupported, b.pos(e), "write GROUP BY GROUPING SETS ((a, b), (a), ())", "%s is allowed only as an item of GROUP BY", clause)
	}
	if e.FnName.L == "grouping" || e.FnName.L == "grouping_id" {
		return nil, errAt(ErrUnsupported, b.pos(e), "", "%s is allowed only in the select list, HAVING or ORDER BY of a query with GROUP BY", strings.ToUpper(e.FnName.O))
	}
	if e.FnName.L == "group_id" {
		return nil, errAt(ErrUnsupported, b.pos(e), "tell duplicate grouping sets apart by GROUPING_ID() or list each set once", "GROUP_ID() is not supported")
	}
	// Group-window functions: TUMBLE_START(ts, size) and the like (groupwindow.go).
	if x, ok, err := b.groupWindowFunc(e, sc, agg); ok {
		return x, err
	}
	name := strings.ToLower(e.FnName.L)
	if _, ok := sql.IntervalOf(b.stmt, e); ok && name == "interval" && len(e.Args) == 2 {
		// An interval where MySQL has no place for one (a function's
		// argument: OVERLAPS(t, INTERVAL '1' HOUR, ...)) arrives as
		// INTERVAL('1', 'HOUR').
		q, err := b.bindExpr(e.Args[0], sc, agg)
		if err != nil {
			return nil, err
		}
		u, err := b.bindExpr(e.Args[1], sc, agg)
		if err != nil {
			return nil, err
		}
		return b.interval(q, u, b.pos(e))
	}
	if err := b.knownFunc(name, e); err != nil {
		// Said before the arguments are bound, whose errors (a column
		// neither grouped nor aggregated) would hide it.
		return nil, err
	}
	var args []Expr
	for _, a := range e.Args {
		x, err := b.bindExpr(a, sc, agg)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	pos := b.pos(e)
	switch name {
	case "proctime":
		if b.proctime != nil && len(args) == 0 {
			c := *b.proctime
			return &c, nil
		}
		return nil, errAt(ErrUnsupported, pos, "declare it in the table: CREATE TABLE t (..., pt AS PROCTIME()), or add it to a view or subquery: SELECT *, PROCTIME() AS pt FROM t",
			"PROCTIME() can only define a computed column of CREATE TABLE or a column of a select list")
	case ast.TimestampLiteral, ast.DateLiteral, ast.TimeLiteral:
		// TIMESTAMP '2024-01-01 00:00:00', DATE '...', TIME '...'.
		t := map[string]types.T{ast.TimestampLiteral: types.TimestampType, ast.DateLiteral: types.DateType, ast.TimeLiteral: types.TimeType}[name]
		if len(args) != 1 {
			return nil, errAt(ErrUnsupported, pos, "", "bad %s literal", t)
		}
		if l, ok := args[0].(*Literal); ok && t.Kind != types.Date {
			// The precision of a literal is the number of digits it has after the point.
			if str, ok := l.Value.(string); ok {
				t.Precision = 0
				if i := strings.LastIndexByte(str, '.'); i >= 0 {
					t.Precision = min(len(strings.TrimSpace(str[i+1:])), 9)
				}
			}
		}
		k, err := functions.Cast(args[0].Type(), t)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, pos, "", "%v", err)
		}
		return foldExpr(&Cast{Arg: args[0], T: t, Kernel: k}), nil
	case "date_add", "date_sub", "adddate", "subdate":
		// x +/- INTERVAL 'n' UNIT arrives as date_add(x, n, unit).
		if len(args) != 3 {
			return nil, errAt(ErrUnsupported, pos, "", "unsupported %s form", name)
		}
		iv, err := b.interval(args[1], args[2], pos)
		if err != nil {
			return nil, err
		}
		op := "+"
		if name == "date_sub" || name == "subdate" {
			op = "-"
		}
		return b.call(op, pos, args[0], iv)
	case "trim":
		// TiDB: trim(s), trim(s, chars), trim(s, chars, direction).
		switch len(args) {
		case 1:
			return b.call("TRIM", pos, args[0])
		case 2:
			return b.call("TRIM", pos, &Literal{Value: "BOTH", T: types.StringType}, args[1], args[0])
		case 3:
			dir := args[2]
			if l, ok := dir.(*Literal); ok && l.Value == "BOTH DEFAULT" {
				dir = &Literal{Value: "BOTH", T: types.StringType}
			}
			return b.call("TRIM", pos, dir, args[1], args[0])
		}
	case "extract":
		// extract(unit, x)
		return b.call("EXTRACT", pos, args...)
	}
	if alias, ok := funcAliases[name]; ok {
		name = alias
	}
	return b.call(strings.ToUpper(name), pos, args...)
}

// knownFunc returns the error of an unknown function name: nil for a
// function of the registry (or its alias) and for the names bindFunc
// rewrites itself.
func (b *binder) knownFunc(name string, e *ast.FuncCallExpr) error {
	switch name {
	case "proctime", ast.TimestampLiteral, ast.DateLiteral, ast.TimeLiteral,
		"date_add", "date_sub", "adddate", "subdate", "trim", "extract":
		return nil
	}
	if alias, ok := funcAliases[name]; ok {
		name = alias
	}
	if _, ok := functions.Lookup(strings.ToUpper(name)); ok {
		return nil
	}
	if _, ok := b.userFunction(name); ok {
		return nil
	}
	_, err := b.call(strings.ToUpper(name), b.pos(e))
	return err
}

// interval builds an interval literal from a quantity and a unit name.
func (b *binder) interval(q, unit Expr, pos sql.Pos) (Expr, error) {
	ql, ok1 := foldExpr(q).(*Literal)
	ul, ok2 := unit.(*Literal)
	if !ok1 || !ok2 || ql.Value == nil {
		return nil, errAt(ErrUnsupported, pos, "write INTERVAL '5' SECOND", "INTERVAL needs a constant quantity")
	}
	var n float64
	switch v := ql.Value.(type) {
	case int64:
		n = float64(v)
	case float64:
		n = v
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, pos, "", "bad INTERVAL quantity '%s'", v)
		}
		n = f
	default:
		s := types.Format(ql.T, ql.Value)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, pos, "", "bad INTERVAL quantity %s", s)
		}
		n = f
	}
	ms := map[string]float64{"MICROSECOND": 0.001, "MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60000, "HOUR": 3600000, "DAY": 86400000, "WEEK": 7 * 86400000}
	months := map[string]int64{"MONTH": 1, "QUARTER": 3, "YEAR": 12}
	u := strings.ToUpper(ul.Value.(string))
	// Flink keeps a day-time interval in a BIGINT of milliseconds and a
	// year-month one in an INT of months: a literal beyond them is an
	// error, never a wrapped value.
	outOfRange := func(max string) error {
		return errAt(ErrTypeMismatch, pos, "", "INTERVAL '%s' %s is out of range (at most %s)", types.Format(ql.T, ql.Value), u, max)
	}
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, errAt(ErrTypeMismatch, pos, "", "bad INTERVAL quantity '%s'", types.Format(ql.T, ql.Value))
	}
	if m, ok := ms[u]; ok {
		v := math.Round(n * m)
		if math.Abs(v) >= math.MaxInt64 {
			return nil, outOfRange(fmt.Sprintf("%d milliseconds, about 292 million years", int64(math.MaxInt64)))
		}
		return &Literal{Value: int64(v), T: types.T{Kind: types.IntervalDayTime, NotNull: true}}, nil
	}
	if m, ok := months[u]; ok {
		v := math.Trunc(n) * float64(m)
		if math.Abs(v) > math.MaxInt32 {
			return nil, outOfRange(fmt.Sprintf("%d months", math.MaxInt32))
		}
		return &Literal{Value: int64(v), T: types.T{Kind: types.IntervalYearMonth, NotNull: true}}, nil
	}
	return nil, errAt(ErrUnsupported, pos, "", "INTERVAL unit %s is not supported", u)
}

// castLength applies the length of CAST(x AS VARCHAR(n)) and CHAR(n) to
// the cast c, as Flink does since 1.16: VARCHAR(n) keeps the first n
// characters, CHAR(n) also pads a shorter string with spaces to n. The
// type stays STRING, which keeps no length.
func (b *binder) castLength(e *ast.FuncCastExpr, c *Cast) (Expr, error) {
	tn, ok := sql.CastTarget(b.stmt, e)
	if !ok || len(tn.Args) != 1 || c.T.Kind != types.String {
		return c, nil
	}
	n := &Literal{Value: int64(tn.Args[0]), T: types.T{Kind: types.BigInt, NotNull: true}}
	switch tn.Name {
	case "VARCHAR", "CHARACTER VARYING":
		return b.call("SUBSTRING", b.pos(e), c, &Literal{Value: int64(1), T: types.T{Kind: types.BigInt, NotNull: true}}, n)
	case "CHAR":
		return b.call("RPAD", b.pos(e), c, n, &Literal{Value: " ", T: types.T{Kind: types.String, NotNull: true}})
	}
	return c, nil
}

// castTarget is the type named in CAST(x AS type).
func (b *binder) castTarget(e *ast.FuncCastExpr) (types.T, error) {
	if tn, ok := sql.CastTarget(b.stmt, e); ok {
		return typeFromName(tn)
	}
	return types.T{}, errAt(ErrUnsupported, b.pos(e), "", "unsupported CAST target %s", e.Tp.String())
}

// typeFromName converts a type as written into a logical type.
func typeFromName(tn sql.TypeName) (types.T, error) {
	if tn.Name == "ROW" && len(tn.Fields) > 0 {
		t := types.T{Kind: types.Row}
		for _, f := range tn.Fields {
			ft, err := typeFromName(f.Type)
			if err != nil {
				return types.T{}, err
			}
			ft.NotNull = f.NotNull
			t.Fields = append(t.Fields, types.Column{Name: f.Name, Type: ft})
		}
		return t, nil
	}
	s := tn.Name
	if u, ok := unsignedTypes[s]; ok && len(tn.Args) == 0 {
		s = u
	}
	if len(tn.Args) > 0 {
		var parts []string
		for _, a := range tn.Args {
			parts = append(parts, strconv.Itoa(a))
		}
		s += "(" + strings.Join(parts, ",") + ")"
	}
	t, err := types.Parse(s)
	if err != nil {
		return types.T{}, &sql.Error{Pos: tn.Pos, Msg: err.Error(), Hint: "types: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, VARCHAR, BYTES, DATE, TIME, TIMESTAMP(p), ROW<name TYPE, ...>"}
	}
	return t, nil
}

// unsignedTypes are the signed types that hold every value of MySQL's
// (and Arroyo's) unsigned integer types.
var unsignedTypes = map[string]string{
	"TINYINT UNSIGNED": "SMALLINT", "SMALLINT UNSIGNED": "INT",
	"INT UNSIGNED": "BIGINT", "INTEGER UNSIGNED": "BIGINT",
	"BIGINT UNSIGNED": "DECIMAL(20,0)",
}

// TypeFromName converts a column type as written in DDL into a logical type.
func TypeFromName(tn sql.TypeName) (types.T, error) { return typeFromName(tn) }
