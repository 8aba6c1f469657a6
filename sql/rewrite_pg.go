package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// This file holds the rewrites for forms of PostgreSQL (RisingWave's
// suites) and SQLite (sqllogictest) that the TiDB parser lacks: x::type,
// x IN (), ORDER BY ... NULLS FIRST | LAST, and the quoting that
// IGNORE_SPACE needs (sqlMode).

// builtinFuncNames are the names the TiDB parser reads as keywords when a
// '(' follows (its btFuncTokenMap); with IGNORE_SPACE white space may come
// between. Such a name cannot name a CTE with a column list unquoted.
var builtinFuncNames = map[string]bool{
	"BIT_AND": true, "BIT_OR": true, "BIT_XOR": true, "CAST": true, "COUNT": true,
	"APPROX_COUNT_DISTINCT": true, "APPROX_PERCENTILE": true, "CURDATE": true,
	"CURTIME": true, "DATE_ADD": true, "DATE_SUB": true, "EXTRACT": true,
	"GROUP_CONCAT": true, "MAX": true, "MID": true, "MIN": true, "NOW": true,
	"POSITION": true, "STD": true, "STDDEV": true, "STDDEV_POP": true,
	"STDDEV_SAMP": true, "SUBSTR": true, "SUBSTRING": true, "SUM": true,
	"SYSDATE": true, "TRANSLATE": true, "TRIM": true, "VARIANCE": true,
	"VAR_POP": true, "VAR_SAMP": true,
}

// cteName reports whether the name at toks[i], followed by '(', names a
// CTE with a column list: WITH max (a) AS (...) or , max (a) AS (...).
func (p *stmtParser) cteName(lo, i, hi int) bool {
	toks := p.sc.toks
	if i == lo || !(toks[i-1].is("WITH") || toks[i-1].is("RECURSIVE") || toks[i-1].isPunct(",")) {
		return false
	}
	c := p.closing(i + 1)
	return c+2 < hi && toks[c+1].is("AS") && toks[c+2].isPunct("(")
}

// pgTypeNames are PostgreSQL's names of types, accepted after :: as the
// Flink type they stand for.
var pgTypeNames = map[string]string{
	"INT2": "SMALLINT", "INT4": "INT", "INT8": "BIGINT",
	"FLOAT4": "REAL", "FLOAT8": "DOUBLE", "BYTEA": "BYTES",
}

// notOperand are keywords that can stand before a '(' without being a
// function's name: in (a + b)::INT after them, the operand is the
// parenthesis.
var notOperand = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "CASE": true,
	"WHEN": true, "THEN": true, "ELSE": true, "SELECT": true, "WHERE": true,
	"ON": true, "BY": true, "AS": true, "FROM": true, "HAVING": true,
	"BETWEEN": true, "LIKE": true, "DISTINCT": true, "ALL": true,
	"VALUES": true, "ROW": true, "ANY": true, "SOME": true, "USING": true,
}

// pgCast rewrites PostgreSQL's cast x::type at toks[i] (the ::) into
// CAST(x AS type): the operand is the primary just before (a name, a
// literal, a call or a parenthesis, as :: binds tighter than any
// operator); ends maps the last token of an earlier cast to its operand's
// first, so x::a::b casts twice. The type is kept for CastTarget like a
// CAST's. It returns the index of the type's last token.
func (p *stmtParser) pgCast(lo, i, hi int, ends map[int]int, edits *[]edit) (int, *Error) {
	toks := p.sc.toks
	start := p.castOperand(lo, i, ends)
	if start < 0 {
		e := p.errAt(toks[i].off, "syntax error near %q", p.near(toks[i].off))
		e.Hint = "write the operand of :: as a name, a literal, a call or a parenthesis, or use CAST(x AS type)"
		return 0, e
	}
	sub := p.sub(i+1, hi)
	if i+1 >= hi {
		sub.i = hi
		return 0, sub.unexpected("expected a type after ::")
	}
	tn, err := sub.typeName()
	if err != nil {
		return 0, err
	}
	if sub.peek().isPunct("[") {
		return 0, p.errAt(sub.peek().off, "array types are not supported")
	}
	last := sub.i - 1
	if n, ok := pgTypeNames[tn.Name]; ok {
		tn.Name = n
	}
	mysql, ok := mysqlCastType(tn)
	if !ok {
		e := p.errAt(toks[i+1].off, "cannot CAST to type %s", tn.Name)
		e.Hint = "use BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), CHAR(n), VARCHAR(n), STRING, BYTES, DATE, TIME or TIMESTAMP(p)"
		return 0, e
	}
	off := toks[start].off
	p.meta.pgCastAt[off] = append(p.meta.pgCastAt[off], tn)
	*edits = append(*edits, edit{off, off, "CAST("}, edit{toks[i].off, toks[last].end, " AS " + mysql + ")"})
	ends[last] = start
	return last, nil
}

// castOperand returns the index of the first token of the operand of the
// :: at toks[i], or -1.
func (p *stmtParser) castOperand(lo, i int, ends map[int]int) int {
	toks := p.sc.toks
	j := i - 1
	if j < lo {
		return -1
	}
	if s, ok := ends[j]; ok {
		return s
	}
	t := toks[j]
	switch {
	case t.isPunct(")"):
		depth := 0
		for k := j; k >= lo; k-- {
			switch {
			case toks[k].isPunct(")"):
				depth++
			case toks[k].isPunct("("):
				depth--
				if depth == 0 {
					if k-1 >= lo && toks[k-1].kind == tokIdent && !notOperand[strings.ToUpper(toks[k-1].val)] {
						return p.nameStart(lo, k-1)
					}
					return k
				}
			}
		}
		return -1
	case t.kind == tokString:
		if j-1 >= lo && (toks[j-1].is("DATE") || toks[j-1].is("TIME") || toks[j-1].is("TIMESTAMP")) {
			return j - 1
		}
		return j
	case t.kind == tokNumber:
		return j
	case t.kind == tokIdent && notOperand[strings.ToUpper(t.val)]:
		return -1
	case t.isName():
		return p.nameStart(lo, j)
	}
	return -1
}

// emptyIn rewrites x IN () (SQLite's empty list; toks[i] is IN) into
// x IN (NULL), marked so that the AST walk empties the list again: the
// planner sees a PatternInExpr without items, which is FALSE (NOT IN:
// TRUE) whatever x is, NULL included.
func (p *stmtParser) emptyIn(i int, edits *[]edit) {
	c := p.sc.toks[i+2]
	p.meta.emptyInAt[c.off] = true
	*edits = append(*edits, edit{c.off, c.end, "NULL)"})
}

// Names of the calls that carry an ORDER BY item's NULLS FIRST / NULLS LAST
// through the TiDB parser; the AST walk takes them off again (NullsFirst).
const (
	nullsFirstFunc = "__nulls_first"
	nullsLastFunc  = "__nulls_last"
)

// nullsOrder rewrites the ORDER BY item ending in NULLS FIRST | LAST
// (toks[i] is NULLS) into __nulls_first(item) [ASC|DESC]: the call opens
// where the item starts (after ORDER BY or a ',') and closes before its
// direction; the NULLS words are blanked. The opening goes into opens,
// which come before every other edit at the same offset. The ORDER BY of
// a query and of a window (OVER (...), WINDOW w AS (...)) take it; inside
// a call it is an error.
func (p *stmtParser) nullsOrder(lo, i int, opens, edits *[]edit) *Error {
	toks := p.sc.toks
	t := toks[i]
	end := i - 1
	if end >= lo && (toks[end].is("ASC") || toks[end].is("DESC")) {
		end--
	}
	start := -1
	depth := 0
	for k := end; k >= lo; k-- {
		tk := toks[k]
		switch {
		case tk.isPunct(")"):
			depth++
		case tk.isPunct("("):
			depth--
		case depth == 0 && (tk.isPunct(",") || (tk.is("BY") && k-1 >= lo && toks[k-1].is("ORDER"))):
			start = k + 1
		}
		if depth < 0 || start >= 0 {
			break
		}
		if depth == 0 && tk.is("BY") {
			break
		}
	}
	word := "NULLS " + strings.ToUpper(toks[i+1].val)
	if start < 0 || start > end || !p.queryOrderBy(lo, start) {
		e := p.errAt(t.off, "%s is supported only in the ORDER BY of a query or of OVER (...)", word)
		e.Hint = "in aggregate calls the order of NULLs is the default: first for ASC, last for DESC"
		return e
	}
	fn := nullsFirstFunc
	if toks[i+1].is("LAST") {
		fn = nullsLastFunc
	}
	*opens = append(*opens, edit{toks[start].off, toks[start].off, fn + "("})
	*edits = append(*edits, edit{toks[end].end, toks[end].end, ")"},
		edit{t.off, toks[i+1].end, pad("", toks[i+1].end-t.off)})
	return nil
}

// queryOrderBy reports whether the ORDER BY list that holds toks[k] is a
// query's or a window's: not inside a parenthesis, or inside one that opens
// a subquery, follows OVER, or follows AS (WINDOW w AS (...)).
func (p *stmtParser) queryOrderBy(lo, k int) bool {
	toks := p.sc.toks
	depth := 0
	for j := k - 1; j >= lo; j-- {
		switch {
		case toks[j].isPunct(")"):
			depth++
		case toks[j].isPunct("("):
			if depth == 0 {
				n := toks[j+1]
				if j-1 >= lo && (toks[j-1].is("OVER") || toks[j-1].is("AS")) {
					return true
				}
				return n.is("SELECT") || n.is("WITH") || n.is("VALUES") || n.isPunct("(")
			}
			depth--
		}
	}
	return true
}

// unwrapNulls takes the __nulls_first / __nulls_last call off an ORDER BY
// item and records the order under the item; an ordinal comes back as the
// position the TiDB parser would have made of it.
func (v *posFixer) unwrapNulls(x *ast.ByItem) {
	f, ok := x.Expr.(*ast.FuncCallExpr)
	if !ok || len(f.Args) != 1 || (f.FnName.L != nullsFirstFunc && f.FnName.L != nullsLastFunc) {
		return
	}
	x.Expr = f.Args[0]
	if ve, ok := x.Expr.(*driver.ValueExpr); ok {
		if n, ok := ve.GetValue().(int64); ok {
			pe := &ast.PositionExpr{N: int(n)}
			pe.SetOriginTextPosition(ve.OriginTextPosition())
			x.Expr = pe
		}
	}
	x.NullOrder = false
	v.p.meta.nulls[x] = f.FnName.L == nullsFirstFunc
}

// NullsFirst reports the order of NULLs written for ORDER BY item of stmt
// (NULLS FIRST: true; NULLS LAST: false); ok is false when the item does
// not say, and then NULLs come first for ASC and last for DESC, as in
// Flink (its default null collation, LOW).
func NullsFirst(stmt Statement, item *ast.ByItem) (first, ok bool) {
	m := metaOf(stmt)
	if m == nil {
		return false, false
	}
	first, ok = m.nulls[item]
	return first, ok
}

// orderInCall reports an ORDER BY (toks[i] is ORDER) inside a call's
// parentheses, as in STRING_AGG(s, ',' ORDER BY t) or FIRST_VALUE(v ORDER
// BY t), which Flink does not have: its LISTAGG and FIRST_VALUE follow the
// order rows arrive in. OVER (ORDER BY ...) and a named window's
// w AS (ORDER BY ...) are no calls.
func (p *stmtParser) orderInCall(lo, i int) *Error {
	toks := p.sc.toks
	depth := 0
	for j := i - 1; j >= lo; j-- {
		switch {
		case toks[j].isPunct(")"):
			depth++
		case toks[j].isPunct("("):
			if depth > 0 {
				depth--
				continue
			}
			if n := toks[j+1]; n.is("SELECT") || n.is("WITH") || n.is("VALUES") || n.isPunct("(") {
				return nil // a subquery
			}
			if j-1 < lo || toks[j-1].kind != tokIdent || toks[j-1].is("OVER") || toks[j-1].is("AS") || notOperand[strings.ToUpper(toks[j-1].val)] {
				return nil
			}
			e := p.errAt(toks[i].off, "ORDER BY inside a call of %s is not supported", strings.ToUpper(toks[j-1].val))
			e.Hint = "LISTAGG (STRING_AGG), FIRST_VALUE and LAST_VALUE take the rows in the order they arrive, as in Flink"
			return e
		}
	}
	return nil
}
