package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// This file holds the rewrites that make Flink SQL text acceptable to the
// TiDB (MySQL) parser. Each rewrite is an edit of the script text; the
// offset map built with the edits moves every position the TiDB parser
// reports back onto the text the user wrote. Most edits keep the length
// (padding with spaces), so text outside them does not move at all.

// rewrites returns the edits for the tokens [lo, hi), and records in
// p.meta what they hide from the TiDB parser:
//
//   - CAST(x AS <Flink type>): the type becomes MySQL's nearest (CastTarget);
//     TRY_CAST becomes CAST (IsTryCast);
//   - VALUES (1, 2), (3, 4) becomes VALUES ROW(1, 2), ROW(3, 4);
//   - INTERVAL '5' SECONDS becomes singular, MINUTE TO SECOND becomes
//     MINUTE_SECOND, and an interval where MySQL allows none (a function
//     argument) becomes the call INTERVAL('5', 'SECOND') (IntervalOf);
//   - TABLE(TUMBLE(...)) and the other window functions become a
//     placeholder table name (WindowOf);
//   - FULL [OUTER] JOIN becomes STRAIGHT_JOIN, turned into a join of type
//     FullJoin after parsing;
//   - a IS NOT DISTINCT FROM b becomes a <=> b, and a IS DISTINCT FROM b
//     becomes a <=> b, turned into NOT (a <=> b) after parsing;
//   - t FOR SYSTEM_TIME AS OF e (temporal join) is blanked and t renamed to
//     a placeholder; after parsing the table gets its name back and AsOf.TsExpr
//     holds e;
//   - names MySQL reserves but Flink does not (key, index, ...) get
//     backquotes.
func (p *stmtParser) rewrites(lo, hi int) ([]edit, *Error) {
	var edits []edit
	toks := p.sc.toks
	for i := lo; i < hi; i++ {
		t := toks[i]
		if t.isPunct("#") {
			// The TiDB parser would take it for a MySQL comment and skip
			// the rest of the line.
			return nil, p.errAt(t.off, "unexpected character '#'")
		}
		if t.kind != tokIdent {
			continue
		}
		up := strings.ToUpper(t.val)
		next := token{kind: -1}
		if i+1 < hi {
			next = toks[i+1]
		}
		switch {
		case up == "TABLE":
			if c := p.windowCall(i, hi); c >= 0 {
				e, err := p.rewriteWindow(i, c)
				if err != nil {
					return nil, err
				}
				edits = append(edits, e)
				i = c
			}
		case (up == "CAST" || up == "TRY_CAST") && next.isPunct("("):
			e, err := p.rewriteCast(i)
			if err != nil {
				return nil, err
			}
			if up == "TRY_CAST" {
				edits = append(edits, edit{t.off, t.end, "CAST"})
				p.meta.tryCastAt[t.off] = true
			}
			if e != nil {
				edits = append(edits, *e)
			}
		case up == "VALUES" && next.isPunct("("):
			j := i + 1
			for j < hi && toks[j].isPunct("(") {
				edits = append(edits, edit{toks[j].off, toks[j].off, " ROW"})
				c := p.closing(j)
				if c+2 < hi && toks[c+1].isPunct(",") && toks[c+2].isPunct("(") {
					j = c + 2
					continue
				}
				break
			}
		case up == "INTERVAL":
			sub := p.sub(i, hi)
			iv, err := sub.interval()
			if err != nil {
				continue // not Flink's form; the TiDB parser will judge
			}
			last := sub.i - 1
			p.meta.intervalAt[t.off] = iv
			v := i + 1
			if toks[v].isPunct("-") {
				v++
			}
			p.meta.intervalAt[toks[v].off] = iv
			if p.intervalNeedsCall(i, last, lo, hi) {
				edits = append(edits, edit{t.off, toks[last].end,
					"INTERVAL('" + strings.ReplaceAll(iv.Value, "'", "''") + "', '" + iv.Unit + "')"})
				i = last
				continue
			}
			unit := strings.ReplaceAll(iv.Unit, " TO ", "_")
			from, to := toks[v+1].off, toks[last].end
			if !strings.EqualFold(p.sc.text[from:to], unit) {
				edits = append(edits, edit{from, to, pad(unit, to-from)})
			}
			i = last
		case up == "FULL" && (next.is("JOIN") || (next.is("OUTER") && i+2 < hi && toks[i+2].is("JOIN"))):
			j := i + 1
			if next.is("OUTER") {
				j++
			}
			edits = append(edits, edit{t.off, toks[j].end, pad("STRAIGHT_JOIN", toks[j].end-t.off)})
			i = j
		case up == "IS" && (next.is("DISTINCT") || (next.is("NOT") && i+2 < hi && toks[i+2].is("DISTINCT"))):
			j := i + 2
			if next.is("NOT") {
				j++
			}
			if j >= hi || !toks[j].is("FROM") {
				continue
			}
			edits = append(edits, edit{t.off, toks[j].end, pad("<=>", toks[j].end-t.off)})
			if !next.is("NOT") && j+1 < hi {
				p.meta.distinctAt[toks[j+1].off] = true
			}
			i = j
		case up == "FOR" && i > lo && toks[i-1].isName() && i+3 < hi && next.is("SYSTEM_TIME") && toks[i+2].is("AS") && toks[i+3].is("OF"):
			es, err := p.rewriteAsOf(lo, i, hi)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
			i = p.asOfEnd(i+4, hi) - 1
		case up == "STRAIGHT_JOIN":
			return nil, p.errAt(t.off, "STRAIGHT_JOIN is not supported")
		case quotedReserved[up] && !next.isPunct("(") && next.kind != tokString:
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		}
	}
	return edits, nil
}

// quotedReserved are words MySQL reserves but Flink lets users write as
// names; in queries they are always names, so they are quoted for the TiDB
// parser.
var quotedReserved = map[string]bool{
	"KEY": true, "KEYS": true, "INDEX": true, "READ": true, "CHANGE": true,
	"OPTION": true, "USAGE": true, "SCHEMA": true, "DATABASE": true,
	"REQUIRE": true, "LOCK": true, "FORCE": true, "USE": true, "MAXVALUE": true,
}

// pad returns s padded with spaces to n bytes (s itself if it is longer).
func pad(s string, n int) string {
	if len(s) < n {
		s += strings.Repeat(" ", n-len(s))
	}
	return s
}

// intervalNeedsCall reports whether the interval literal toks[i..last]
// stands where the MySQL grammar has no place for one. MySQL takes
// intervals in date arithmetic (ts - INTERVAL ..., INTERVAL ... + ts), in
// DATE_ADD/DATE_SUB and in window frames (RANGE INTERVAL ... PRECEDING).
func (p *stmtParser) intervalNeedsCall(i, last, lo, hi int) bool {
	toks := p.sc.toks
	if i > lo && (toks[i-1].isPunct("+") || toks[i-1].isPunct("-")) {
		return false
	}
	if last+1 < hi {
		n := toks[last+1]
		if n.isPunct("+") || n.is("PRECEDING") || n.is("FOLLOWING") {
			return false
		}
	}
	if i > lo && toks[i-1].isPunct(",") {
		depth := 0
		for j := i - 1; j >= lo; j-- {
			switch {
			case toks[j].isPunct(")"):
				depth++
			case toks[j].isPunct("("):
				if depth == 0 {
					if j > lo {
						switch strings.ToUpper(toks[j-1].val) {
						case "DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE":
							return false
						}
					}
					return true
				}
				depth--
			}
		}
	}
	return true
}

// rewriteCast handles CAST(expr AS type) at toks[i]: MySQL's CAST accepts
// only a few target types (SIGNED, CHAR, DATETIME, ...), so the Flink type
// is recorded for CastTarget and replaced by the closest MySQL one.
func (p *stmtParser) rewriteCast(i int) (*edit, *Error) {
	toks := p.sc.toks
	c := p.closing(i + 1)
	if c >= p.hi {
		return nil, nil // let the TiDB parser report it
	}
	as := -1
	depth := 0
	for j := i + 2; j < c; j++ {
		switch {
		case toks[j].isPunct("("):
			depth++
		case toks[j].isPunct(")"):
			depth--
		case depth == 0 && toks[j].is("AS"):
			as = j
		}
	}
	if as < 0 || as+1 >= c {
		return nil, nil
	}
	sub := p.sub(as+1, c)
	tn, err := sub.typeName()
	if err != nil {
		return nil, err
	}
	if !sub.atEnd() {
		return nil, sub.unexpected("expected ')' after the type")
	}
	p.meta.castAt[toks[i].off] = tn
	mysql, ok := mysqlCastType(tn)
	if !ok {
		e := p.errAt(toks[as+1].off, "cannot CAST to type %s", tn.Name)
		e.Hint = "use BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), CHAR(n), VARCHAR(n), STRING, BYTES, DATE, TIME or TIMESTAMP(p)"
		return nil, e
	}
	from, to := toks[as+1].off, toks[c-1].end
	if strings.EqualFold(p.sc.text[from:to], mysql) {
		return nil, nil
	}
	return &edit{from, to, pad(mysql, to-from)}, nil
}

// mysqlCastType is the MySQL CAST type standing in for t.
func mysqlCastType(t TypeName) (string, bool) {
	switch t.Name {
	case "BOOLEAN", "BOOL", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT":
		return "SIGNED", true
	case "BIGINT UNSIGNED", "INT UNSIGNED", "UNSIGNED":
		return "UNSIGNED", true
	case "FLOAT":
		return "FLOAT", true
	case "DOUBLE", "DOUBLE PRECISION", "REAL":
		return "DOUBLE", true
	case "DECIMAL", "DEC", "NUMERIC":
		s := "DECIMAL"
		switch len(t.Args) {
		case 1:
			s += "(" + itoa(t.Args[0]) + ")"
		case 2:
			s += "(" + itoa(t.Args[0]) + "," + itoa(t.Args[1]) + ")"
		}
		return s, true
	case "CHAR", "CHARACTER", "VARCHAR", "CHARACTER VARYING", "STRING", "TEXT":
		return "CHAR", true
	case "BYTES", "BINARY", "VARBINARY", "BLOB":
		return "BINARY", true
	case "DATE":
		return "DATE", true
	case "TIME", "TIME WITHOUT TIME ZONE":
		return "TIME", true
	case "TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP_LTZ",
		"TIMESTAMP WITH LOCAL TIME ZONE", "DATETIME":
		if len(t.Args) == 1 && t.Args[0] <= 6 {
			return "DATETIME(" + itoa(t.Args[0]) + ")", true
		}
		return "DATETIME", true
	}
	return "", false
}

// parseQuery parses the tokens from i to the end of the statement as a
// query (SELECT, set operations, VALUES, WITH).
func (p *stmtParser) parseQuery(i int) (ast.ResultSetNode, *Error) {
	if i >= p.hi {
		p.i = i
		return nil, p.unexpected("expected a query")
	}
	edits, err := p.rewrites(i, p.hi)
	if err != nil {
		return nil, err
	}
	text, m := p.sc.rewrite(p.sc.toks[i].off, p.end, "", edits)
	st, err := p.tidbParse(text, m)
	if err != nil {
		return nil, err
	}
	switch q := st.(type) {
	case *ast.SelectStmt:
		return q, nil
	case *ast.SetOprStmt:
		return q, nil
	}
	return nil, p.errAt(p.sc.toks[i].off, "expected a query (SELECT, VALUES or WITH)")
}

// parseExpr parses the tokens [lo, hi) as one expression.
func (p *stmtParser) parseExpr(lo, hi int) (ast.ExprNode, *Error) {
	if lo >= hi {
		p.i = lo
		return nil, p.unexpected("expected an expression")
	}
	edits, err := p.rewrites(lo, hi)
	if err != nil {
		return nil, err
	}
	from := p.sc.toks[lo].off
	text, m := p.sc.rewrite(from, p.sc.toks[hi-1].end, "SELECT ", edits)
	st, err := p.tidbParse(text, m)
	if err != nil {
		return nil, err
	}
	sel, ok := st.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 ||
		sel.Fields.Fields[0].Expr == nil || sel.Fields.Fields[0].AsName.O != "" {
		return nil, p.errAt(from, "expected one expression")
	}
	return sel.Fields.Fields[0].Expr, nil
}

// asOf is a table of a temporal join: t FOR SYSTEM_TIME AS OF expr.
type asOf struct {
	schema, name string
	expr         ast.ExprNode
}

const asOfPlaceholder = "__asof_"

// rewriteAsOf handles name FOR SYSTEM_TIME AS OF expr, where toks[i] is
// FOR: the expression is parsed on its own, the clause blanked and the
// table name replaced by a placeholder that the AST walk turns back.
func (p *stmtParser) rewriteAsOf(lo, i, hi int) ([]edit, *Error) {
	toks := p.sc.toks
	k := i - 1
	for k-2 >= lo && toks[k-1].isPunct(".") && toks[k-2].isName() {
		k -= 2
	}
	var parts []string
	for j := k; j < i; j += 2 {
		parts = append(parts, toks[j].val)
	}
	end := p.asOfEnd(i+4, hi)
	if end == i+4 {
		sub := p.sub(i+4, hi)
		return nil, sub.unexpected("expected the time attribute, e.g. FOR SYSTEM_TIME AS OF o.proc_time")
	}
	expr, err := p.parseExpr(i+4, end)
	if err != nil {
		return nil, err
	}
	a := &asOf{name: parts[len(parts)-1], expr: expr}
	if len(parts) > 1 {
		a.schema = strings.Join(parts[:len(parts)-1], ".")
	}
	name := asOfPlaceholder + itoa(len(p.meta.asOfAt))
	p.meta.asOfAt[name] = a
	return []edit{
		{toks[k].off, toks[i-1].end, name},
		{toks[i].off, toks[end-1].end, pad("", toks[end-1].end-toks[i].off)},
	}, nil
}

// asOfEnd returns the end (exclusive token index) of the expression after
// FOR SYSTEM_TIME AS OF starting at toks[i]: operands and operators
// alternate, so an identifier where an operator would come (an alias) or a
// keyword such as ON ends it.
func (p *stmtParser) asOfEnd(i, hi int) int {
	toks := p.sc.toks
	depth := 0
	operand := true // an operand is expected next
	for j := i; j < hi; j++ {
		t := toks[j]
		if depth > 0 {
			if t.isPunct("(") {
				depth++
			} else if t.isPunct(")") {
				depth--
			}
			continue
		}
		switch {
		case t.isPunct("("):
			depth++
			operand = false
		case t.isPunct(")") || t.isPunct(",") || t.isPunct(";"):
			return j
		case t.kind == tokPunct:
			operand = true
		case operand && !(t.kind == tokIdent && asOfStop[strings.ToUpper(t.val)]):
			operand = false
		default:
			return j
		}
	}
	return hi
}

// asOfStop are the keywords that cannot start the AS OF expression.
var asOfStop = map[string]bool{
	"AS": true, "ON": true, "USING": true, "WHERE": true, "JOIN": true,
	"LEFT": true, "RIGHT": true, "INNER": true, "FULL": true, "CROSS": true,
	"GROUP": true, "ORDER": true, "LIMIT": true, "UNION": true, "HAVING": true,
}
