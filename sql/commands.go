package sql

import "strings"

// parseSet parses SET, SET 'k' = 'v' and SET k = v (an unquoted key runs up
// to '=', an unquoted value is the rest of the statement as written), and
// PostgreSQL's SET name TO value for a one-word name.
func (p *stmtParser) parseSet() (Statement, *Error) {
	s := &Set{Span: p.span(p.lo, p.hi)}
	p.i++ // SET
	if p.atEnd() {
		return s, nil
	}
	var err *Error
	if s.Key, err = p.setKey(); err != nil {
		return nil, err
	}
	sep := "TO"
	if !p.accept("TO") {
		sep = "'='"
		if err := p.expectPunct("=", "expected '=' and a value, e.g. SET 'parallelism.default' = '4'"); err != nil {
			return nil, err
		}
	}
	if p.atEnd() {
		return nil, p.unexpected("expected a value after " + sep)
	}
	if t := p.peek(); t.kind == tokString && p.i+1 < p.hi {
		// SET 'k' = 'v' running into the next statement.
		if h, ok := p.missingSemicolon(p.i + 1); ok {
			e := p.errAt(p.sc.toks[p.i+1].off, "syntax error near %q", p.near(p.sc.toks[p.i+1].off))
			e.Hint = h
			return nil, e
		}
	}
	if t := p.peek(); t.kind == tokString && p.i+1 == p.hi {
		s.Value = t.val
	} else {
		s.Value = p.sc.text[t.off:p.end]
	}
	p.i = p.hi
	return s, nil
}

// setKey parses the key of SET or RESET: a string literal or the unquoted
// text up to '=', the end, or TO after a one-word key.
func (p *stmtParser) setKey() (string, *Error) {
	t := p.peek()
	if t.kind == tokString {
		p.i++
		return t.val, nil
	}
	if !t.isName() {
		return "", p.unexpected("expected an option key such as 'execution.checkpointing.interval'")
	}
	lo := p.i
	for !p.atEnd() && !p.peek().isPunct("=") && !(p.i == lo+1 && p.peek().is("TO")) {
		p.i++
	}
	if p.i == lo+1 && t.kind == tokQuoted {
		return t.val, nil
	}
	return p.sc.text[t.off:p.sc.toks[p.i-1].end], nil
}

// parseReset parses RESET and RESET 'k'.
func (p *stmtParser) parseReset() (Statement, *Error) {
	r := &Reset{Span: p.span(p.lo, p.hi)}
	p.i++ // RESET
	if p.atEnd() {
		return r, nil
	}
	var err *Error
	if r.Key, err = p.setKey(); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return r, nil
}

// parseStopJob parses STOP JOB 'id' [WITH SAVEPOINT [FORMAT CANONICAL |
// NATIVE]].
func (p *stmtParser) parseStopJob() (Statement, *Error) {
	s := &StopJob{Span: p.span(p.lo, p.hi)}
	p.i++ // STOP
	if err := p.expect("JOB", "expected JOB after STOP"); err != nil {
		return nil, err
	}
	var err *Error
	if s.ID, err = p.stringLit("the job id"); err != nil {
		return nil, err
	}
	s.WithSavepoint = p.accept("WITH", "SAVEPOINT")
	if s.WithSavepoint && p.accept("FORMAT") {
		switch t := p.peek(); {
		case t.is("CANONICAL"), t.is("NATIVE"):
			s.Format = strings.ToUpper(t.val)
			p.i++
		default:
			return nil, p.unexpected("expected CANONICAL or NATIVE: the savepoint formats")
		}
	}
	if !p.atEnd() {
		if s.WithSavepoint && s.Format == "" {
			return nil, p.unexpected("expected FORMAT CANONICAL, FORMAT NATIVE or the end of the statement")
		}
		if s.WithSavepoint {
			return nil, p.unexpected("expected the end of the statement")
		}
		return nil, p.unexpected("expected WITH SAVEPOINT or the end of the statement")
	}
	return s, nil
}

// parseDescribe parses DESCRIBE name and DESC name, and DESCRIBE JOB 'id'.
func (p *stmtParser) parseDescribe() (Statement, *Error) {
	if p.peekAt(1).is("JOB") && p.peekAt(2).kind == tokString {
		return p.parseDescribeJob()
	}
	if p.peekAt(1).is("FUNCTION") && p.peekAt(2).isName() {
		return p.parseDescribeFunction()
	}
	d := &Describe{Span: p.span(p.lo, p.hi)}
	p.i++ // DESCRIBE | DESC
	var err *Error
	if d.Name, d.NamePos, err = p.name("a table or view name"); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return d, nil
}

// parseExplain parses EXPLAIN [PLAN FOR] stmt, where stmt is a query, an
// INSERT or a statement set.
func (p *stmtParser) parseExplain() (Statement, *Error) {
	x := &Explain{Span: p.span(p.lo, p.hi)}
	p.i++ // EXPLAIN
	p.accept("PLAN", "FOR")
	if p.atEnd() {
		return nil, p.unexpected("expected a query, INSERT or statement set to explain")
	}
	t := p.peek()
	if t.is("EXPLAIN") {
		return nil, p.errAt(t.off, "cannot EXPLAIN an EXPLAIN")
	}
	st, err := p.sub(p.i, p.hi).parseStatement()
	if err != nil {
		return nil, err
	}
	switch st.(type) {
	case *Select, *Insert, *StatementSet:
	default:
		return nil, p.errAt(t.off, "cannot EXPLAIN %s", strings.ToUpper(t.val))
	}
	x.Stmt = st
	return x, nil
}
