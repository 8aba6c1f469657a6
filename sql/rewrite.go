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

// rewrites returns the edits for the tokens [lo, hi). It records the target
// type of each CAST in p.meta.
func (p *stmtParser) rewrites(lo, hi int) ([]edit, *Error) {
	var edits []edit
	toks := p.sc.toks
	for i := lo; i < hi; i++ {
		t := toks[i]
		switch {
		case t.is("CAST") && i+1 < hi && toks[i+1].isPunct("("):
			e, err := p.rewriteCast(i)
			if err != nil {
				return nil, err
			}
			if e != nil {
				edits = append(edits, *e)
			}
		case t.is("VALUES") && i+1 < hi && toks[i+1].isPunct("("):
			// Standard VALUES (1, 2), (3, 4) is VALUES ROW(1, 2), ROW(3, 4)
			// to MySQL.
			j := i + 1
			for j < hi && toks[j].isPunct("(") {
				edits = append(edits, edit{toks[j].off, toks[j].off, "ROW"})
				c := p.closing(j)
				if c+2 < hi && toks[c+1].isPunct(",") && toks[c+2].isPunct("(") {
					j = c + 2
					continue
				}
				break
			}
		case t.is("INTERVAL") && i+2 < hi && (toks[i+1].kind == tokString || toks[i+1].kind == tokNumber):
			// Flink accepts plural units: INTERVAL '5' SECONDS.
			u := toks[i+2]
			if u.kind == tokIdent {
				up := strings.ToUpper(u.val)
				if sing, ok := pluralUnits[up]; ok {
					edits = append(edits, edit{u.off, u.end, sing + " "})
				}
			}
		}
	}
	return edits, nil
}

var pluralUnits = map[string]string{
	"SECONDS": "SECOND", "MINUTES": "MINUTE", "HOURS": "HOUR", "DAYS": "DAY",
	"WEEKS": "WEEK", "MONTHS": "MONTH", "YEARS": "YEAR",
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
	if len(mysql) < to-from {
		mysql += strings.Repeat(" ", to-from-len(mysql))
	}
	return &edit{from, to, mysql}, nil
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
