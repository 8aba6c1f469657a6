package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// parseInsert parses INSERT INTO name [(col, ...)] query, where query is a
// SELECT (possibly in parentheses or in a set operation) or VALUES (...), ....
// REPLACE INTO and INSERT OR REPLACE INTO are the same with Replace set.
func (p *stmtParser) parseInsert() (Statement, *Error) {
	ins := &Insert{Span: p.span(p.lo, p.hi)}
	ins.Replace = p.peek().is("REPLACE")
	p.i++ // INSERT or REPLACE
	if !ins.Replace && p.peek().is("OR") {
		if !p.peekAt(1).is("REPLACE") {
			p.i++
			return nil, p.unexpected("only INSERT OR REPLACE is supported")
		}
		p.i += 2
		ins.Replace = true
	}
	if p.peek().is("OVERWRITE") {
		return nil, p.errAt(p.peek().off, "INSERT OVERWRITE is not supported")
	}
	verb := "INSERT"
	if ins.Replace {
		verb = "REPLACE"
	}
	if err := p.expect("INTO", "expected INTO after "+verb); err != nil {
		return nil, err
	}
	var err *Error
	if ins.Table, ins.TablePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if p.peek().is("PARTITION") {
		return nil, p.errAt(p.peek().off, "INSERT ... PARTITION is not supported")
	}
	if p.peek().isPunct("(") {
		// A column list, unless the parenthesis opens the query.
		n := p.peekAt(1)
		if !(n.is("SELECT") || n.is("WITH") || n.is("VALUES") || n.isPunct("(")) {
			if ins.Columns, err = p.nameList("column name"); err != nil {
				return nil, err
			}
		}
	}
	if t := p.peek(); !(t.is("SELECT") || t.is("WITH") || t.is("VALUES") || t.isPunct("(")) {
		return nil, p.unexpected("expected SELECT or VALUES")
	}
	q, err := p.parseQuery(p.i)
	if err != nil {
		return nil, err
	}
	if sel, ok := q.(*ast.SelectStmt); ok && sel.Kind == ast.SelectStmtKindValues && sel.OrderBy == nil && sel.Limit == nil {
		for _, row := range sel.Lists {
			ins.Values = append(ins.Values, row.Values)
		}
		return ins, nil
	}
	ins.Query = q
	return ins, nil
}

// parseStatementSet parses EXECUTE STATEMENT SET BEGIN stmt; ... END or
// BEGIN STATEMENT SET; stmt; ... END. Every inner statement must be an
// INSERT; the ';' after the last one may be left out.
func (p *stmtParser) parseStatementSet() (Statement, *Error) {
	begin, _ := setBegin(p.sc.toks[:p.hi], p.i)
	set := &StatementSet{Span: p.span(p.i, p.hi)}
	endTok := p.hi - 1 // the splitter ends a set at its END
	if !p.sc.toks[endTok].is("END") {
		return nil, p.errAt(p.sc.toks[p.i].off, "statement set is not closed")
	}
	i := begin + 1
	for i < endTok {
		if p.sc.toks[i].isPunct(";") {
			i++
			continue
		}
		j := i
		for j < endTok && !p.sc.toks[j].isPunct(";") {
			j++
		}
		sub := p.sub(i, j)
		if !sub.peek().is("INSERT") {
			e := p.errAt(p.sc.toks[i].off, "only INSERT statements may appear in a statement set")
			return nil, e
		}
		st, err := sub.parseInsert()
		if err != nil {
			return nil, err
		}
		set.Inserts = append(set.Inserts, st.(*Insert))
		i = j
	}
	if len(set.Inserts) == 0 {
		return nil, p.errAt(p.sc.toks[endTok].off, "statement set has no INSERT statements")
	}
	return set, nil
}

// parseUpdate parses UPDATE name SET col = expr [, ...] [WHERE cond].
func (p *stmtParser) parseUpdate() (Statement, *Error) {
	up := &Update{Span: p.span(p.lo, p.hi)}
	p.i++ // UPDATE
	var err *Error
	if up.Table, up.TablePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if err := p.expect("SET", "expected SET after the table name"); err != nil {
		return nil, err
	}
	where := p.clauseAt(p.i, "WHERE", "ORDER", "LIMIT")
	for {
		col, pos, err := p.name("a column name")
		if err != nil {
			return nil, err
		}
		if k := strings.LastIndexByte(col, '.'); k >= 0 {
			col = col[k+1:] // t.col
		}
		if err := p.expectPunct("=", "expected '=' and the column's new value"); err != nil {
			return nil, err
		}
		end := min(p.exprEnd(p.i), where)
		if end < p.hi && p.sc.toks[end].isPunct(")") {
			p.i = end
			return nil, p.unexpected("the parenthesis is not open")
		}
		e, err := p.parseExpr(p.i, end)
		if err != nil {
			return nil, err
		}
		up.Set = append(up.Set, Assignment{Column: col, Pos: pos, Expr: e})
		p.i = end
		if !p.acceptPunct(",") {
			break
		}
	}
	if up.Where, err = p.parseWhere(); err != nil {
		return nil, err
	}
	return up, nil
}

// parseDelete parses DELETE FROM name [WHERE cond].
func (p *stmtParser) parseDelete() (Statement, *Error) {
	del := &Delete{Span: p.span(p.lo, p.hi)}
	p.i++ // DELETE
	if err := p.expect("FROM", "expected FROM after DELETE"); err != nil {
		return nil, err
	}
	var err *Error
	if del.Table, del.TablePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if del.Where, err = p.parseWhere(); err != nil {
		return nil, err
	}
	return del, nil
}

// parseWhere parses [WHERE cond] up to the end of the statement.
func (p *stmtParser) parseWhere() (ast.ExprNode, *Error) {
	if p.atEnd() {
		return nil, nil
	}
	if !p.accept("WHERE") {
		return nil, p.unexpected(noOrderLimit(p.peek()))
	}
	end := p.clauseAt(p.i, "ORDER", "LIMIT")
	e, err := p.parseExpr(p.i, end)
	if err != nil {
		return nil, err
	}
	p.i = end
	if !p.atEnd() {
		return nil, p.unexpected(noOrderLimit(p.peek()))
	}
	return e, nil
}

func noOrderLimit(t token) string {
	if t.is("ORDER") || t.is("LIMIT") {
		return "UPDATE and DELETE take no ORDER BY or LIMIT"
	}
	return "expected WHERE or the end of the statement"
}

// clauseAt returns the index of the first of the keywords at or after i
// outside parentheses, or hi.
func (p *stmtParser) clauseAt(i int, keywords ...string) int {
	depth := 0
	for j := i; j < p.hi; j++ {
		t := p.sc.toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.kind == tokIdent:
			for _, k := range keywords {
				if t.is(k) {
					return j
				}
			}
		}
	}
	return p.hi
}
