package sql

import "strings"

// RisingWave's emit mode: a query may end with
//
//	EMIT ON WINDOW CLOSE
//
// which asks that the windows of its window aggregation be emitted once,
// when the watermark passes their end, and not before (nor at the end of a
// bounded input). The clause is blanked for the TiDB parser and recorded;
// EmitOnWindowClose reports it. Whether the query can honour it is the
// planner's call.

// EmitOnWindowClose reports whether the query of stmt (a *Select, the query
// of a *CreateView or of an *Insert) ends with EMIT ON WINDOW CLOSE, and
// where the clause starts.
func EmitOnWindowClose(stmt Statement) (Pos, bool) {
	m := metaOf(stmt)
	if m == nil || m.emitAt == nil {
		return Pos{}, false
	}
	return *m.emitAt, true
}

// emitClause looks for EMIT ON ... at the top level of the query starting
// at toks[i]. EMIT ON WINDOW CLOSE must end the query; it returns the edit
// that blanks it. Other emit modes are errors.
func (p *stmtParser) emitClause(i int) (*edit, *Error) {
	toks := p.sc.toks
	depth := 0
	for j := i; j < p.hi; j++ {
		t := toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.is("EMIT") && j+1 < p.hi && toks[j+1].is("ON") && j > i && !toks[j-1].isPunct(","):
			if j+3 >= p.hi || !toks[j+2].is("WINDOW") || !toks[j+3].is("CLOSE") {
				e := p.errAt(t.off, "unsupported emit mode %q", p.near(t.off))
				e.Hint = "only EMIT ON WINDOW CLOSE is supported; without it, results are emitted as they change"
				return nil, e
			}
			if j+4 < p.hi {
				e := p.errAt(toks[j+4].off, "syntax error near %q", p.near(toks[j+4].off))
				e.Hint = "EMIT ON WINDOW CLOSE must end the query"
				return nil, e
			}
			if p.meta.emitAt != nil {
				return nil, p.errAt(t.off, "a query can have only one EMIT ON WINDOW CLOSE")
			}
			pos := p.sc.pos(t.off)
			p.meta.emitAt = &pos
			end := toks[j+3].end
			return &edit{t.off, end, strings.Repeat(" ", end-t.off)}, nil
		}
	}
	return nil, nil
}
