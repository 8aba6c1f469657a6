package sql

import (
	"strings"
	"unicode/utf8"
)

// The catalog statements of Flink's SQL client: SHOW of every kind, USE
// and DESCRIBE JOB.

// LikePattern is the [NOT] LIKE | ILIKE 'pattern' of a SHOW statement.
type LikePattern struct {
	Pattern string
	// Not is NOT LIKE; Fold is ILIKE (case-insensitive).
	Not, Fold bool
}

// Match reports whether name matches the pattern: '%' stands for any run
// of characters, '_' for one character, '\' makes the character after it
// literal, as in Flink's SHOW ... LIKE.
func (l *LikePattern) Match(name string) bool {
	if l == nil {
		return true
	}
	p, n := l.Pattern, name
	if l.Fold {
		p, n = strings.ToLower(p), strings.ToLower(n)
	}
	return likeMatch(p, n) != l.Not
}

// likeMatch matches s against SQL LIKE pattern p.
func likeMatch(p, s string) bool {
	for p != "" {
		c, size := utf8.DecodeRuneInString(p)
		switch c {
		case '%':
			rest := p[size:]
			for i := 0; ; {
				if likeMatch(rest, s[i:]) {
					return true
				}
				if i == len(s) {
					return false
				}
				_, w := utf8.DecodeRuneInString(s[i:])
				i += w
			}
		case '_':
			if s == "" {
				return false
			}
			_, w := utf8.DecodeRuneInString(s)
			p, s = p[size:], s[w:]
			continue
		case '\\':
			if len(p) > size {
				p = p[size:]
				c, size = utf8.DecodeRuneInString(p)
			}
		}
		r, w := utf8.DecodeRuneInString(s)
		if s == "" || r != c {
			return false
		}
		p, s = p[size:], s[w:]
	}
	return s == ""
}

// Use is USE CATALOG name (Catalog set) or USE [catalog.]database.
type Use struct {
	Span
	Catalog bool
	Name    string
	NamePos Pos
}

// DescribeJob is DESCRIBE JOB 'id' (also DESC JOB): every figure the
// session keeps of one job.
type DescribeJob struct {
	Span
	ID string
}

// parseShow parses SHOW TABLES [LIKE] | VIEWS | JOBS | CREATE TABLE|VIEW
// name | COLUMNS FROM|IN name [LIKE] | [USER] FUNCTIONS [LIKE] | CATALOGS
// [LIKE] | DATABASES [LIKE] | CURRENT CATALOG|DATABASE.
func (p *stmtParser) parseShow() (Statement, *Error) {
	s := &Show{Span: p.span(p.lo, p.hi)}
	p.i++         // SHOW
	like := false // whether [NOT] LIKE may follow
	switch {
	case p.accept("TABLES"):
		s.Kind, like = ShowTables, true
	case p.accept("VIEWS"):
		s.Kind = ShowViews
	case p.accept("JOBS"):
		s.Kind = ShowJobs
	case p.accept("CREATE", "TABLE"):
		s.Kind = ShowCreateTable
	case p.accept("CREATE", "VIEW"):
		s.Kind = ShowCreateView
	case p.accept("CREATE"):
		return nil, p.unexpected("expected TABLE or VIEW after SHOW CREATE")
	case p.accept("COLUMNS"):
		s.Kind, like = ShowColumns, true
		if !p.accept("FROM") && !p.accept("IN") {
			return nil, p.unexpected("expected FROM and a table or view name after SHOW COLUMNS")
		}
	case p.accept("FUNCTIONS"):
		s.Kind, like = ShowFunctions, true
	case p.accept("USER", "FUNCTIONS"):
		s.Kind, s.User, like = ShowFunctions, true, true
	case p.accept("CATALOGS"):
		s.Kind, like = ShowCatalogs, true
	case p.accept("DATABASES"):
		s.Kind, like = ShowDatabases, true
	case p.accept("CURRENT", "CATALOG"):
		s.Kind = ShowCurrentCatalog
	case p.accept("CURRENT", "DATABASE"):
		s.Kind = ShowCurrentDatabase
	case p.accept("CURRENT"):
		return nil, p.unexpected("expected CATALOG or DATABASE after SHOW CURRENT")
	default:
		return nil, p.unexpected("expected TABLES, VIEWS, JOBS, CREATE TABLE, CREATE VIEW, COLUMNS, FUNCTIONS, CATALOGS, DATABASES or CURRENT after SHOW")
	}
	switch s.Kind {
	case ShowCreateTable, ShowCreateView, ShowColumns:
		what := "a table name"
		if s.Kind != ShowCreateTable {
			what = "a view name"
			if s.Kind == ShowColumns {
				what = "a table or view name"
			}
		}
		var err *Error
		if s.Name, s.NamePos, err = p.name(what); err != nil {
			return nil, err
		}
	}
	if like && !p.atEnd() {
		l := &LikePattern{Not: p.accept("NOT")}
		switch {
		case p.accept("LIKE"):
		case p.accept("ILIKE"):
			l.Fold = true
		default:
			return nil, p.unexpected("expected [NOT] LIKE 'pattern' or the end of the statement")
		}
		var err *Error
		if l.Pattern, err = p.stringLit("a LIKE pattern"); err != nil {
			return nil, err
		}
		s.Like = l
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return s, nil
}

// parseUse parses USE CATALOG name and USE [catalog.]database.
func (p *stmtParser) parseUse() (Statement, *Error) {
	u := &Use{Span: p.span(p.lo, p.hi)}
	p.i++ // USE
	what := "a database name"
	if p.peekAt(1).isName() && p.accept("CATALOG") {
		u.Catalog, what = true, "a catalog name"
	}
	var err *Error
	if u.Name, u.NamePos, err = p.name(what); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return u, nil
}

// parseDescribeJob parses DESCRIBE JOB 'id'.
func (p *stmtParser) parseDescribeJob() (Statement, *Error) {
	d := &DescribeJob{Span: p.span(p.lo, p.hi)}
	p.i += 2 // DESCRIBE JOB
	var err *Error
	if d.ID, err = p.stringLit("the job id"); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return d, nil
}
