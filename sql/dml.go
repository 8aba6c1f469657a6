package sql

import "github.com/pingcap/tidb/pkg/parser/ast"

// parseInsert parses INSERT INTO name [(col, ...)] query, where query is a
// SELECT (possibly in parentheses or in a set operation) or VALUES (...), ....
func (p *stmtParser) parseInsert() (Statement, *Error) {
	ins := &Insert{Span: p.span(p.lo, p.hi)}
	p.i++ // INSERT
	if p.peek().is("OVERWRITE") {
		return nil, p.errAt(p.peek().off, "INSERT OVERWRITE is not supported")
	}
	if err := p.expect("INTO", "expected INTO after INSERT"); err != nil {
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
