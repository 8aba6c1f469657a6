package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Parse splits a script into statements at ';' (outside strings, quoted
// identifiers and comments; a statement set is one statement) and parses
// each. Empty statements and comments yield nothing.
//
// On failure the error is an *Error at a line:column of text, and the
// statements before the failing one are returned with it. Parse is safe for
// concurrent use.
func Parse(text string) ([]Statement, error) {
	sc := newScript(text)
	var out []Statement
	for _, c := range split(sc.toks) {
		p := &stmtParser{sc: sc, lo: c.lo, hi: c.hi, i: c.lo, end: sc.toks[c.hi-1].end, meta: newMeta()}
		p.meta.sc = sc
		if c.unfinished && !sc.unterminated {
			e := p.errAt(sc.toks[c.lo].off, "statement set is not closed")
			e.Hint = "end it with END;"
			return out, e
		}
		if sc.unterminated && c.hi == len(sc.toks) {
			break // the unterminated token belongs to this statement
		}
		if err := p.emptyName(); err != nil {
			return out, err
		}
		st, err := p.parseStatementSafely()
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	if sc.unterminated {
		e := Errorf(sc.pos(sc.errOff), "unterminated %s", sc.errWhat)
		switch sc.errWhat {
		case "string literal":
			e.Hint = "close it with ', and write '' for a quote inside it"
		case "comment":
			e.Hint = "close it with */"
		default:
			e.Hint = "close the quoted name"
		}
		return out, e
	}
	return out, nil
}

// emptyName refuses a quoted name with nothing between its quotes (two
// backticks, or two double quotes), as Flink does: nothing is named by it.
func (p *stmtParser) emptyName() *Error {
	for _, t := range p.sc.toks[p.lo:p.hi] {
		if t.kind == tokQuoted && t.val == "" {
			e := p.errAt(t.off, "zero-length quoted name %s", p.sc.text[t.off:t.end])
			e.Hint = "a name has at least one character"
			return e
		}
	}
	return nil
}

// stmtMeta is what the parser learns about a statement beyond its AST:
// the Flink meaning of constructs that had to be rewritten for the TiDB
// parser. The *At maps are keyed by script offsets while rewriting; after
// parsing, the AST walk (posFixer) files their entries under the nodes.
type stmtMeta struct {
	castAt map[int]TypeName // offset of CAST -> type written
	casts  map[*ast.FuncCastExpr]TypeName
	// pgCastAt are the types of x::type casts by the offset of x, the
	// innermost first (x::a::b is CAST(CAST(x AS a) AS b)).
	pgCastAt map[int][]TypeName

	emptyInAt map[int]bool         // offset of the ')' of x IN ()
	nulls     map[*ast.ByItem]bool // NULLS FIRST (true) or LAST (false)

	tryCastAt map[int]bool // offset of TRY_CAST
	tryCasts  map[*ast.FuncCastExpr]bool

	intervalAt map[int]Interval // offset of INTERVAL, or of its value
	intervals  map[ast.ExprNode]Interval
	windowAt   map[string]*WindowTVF // placeholder name -> call
	windows    map[*ast.TableName]*WindowTVF
	tableAt    map[string]*tableNote // placeholder name -> table reference
	tables     map[*ast.TableName]*tableNote
	distinctAt map[int]bool // offset of the right operand of IS DISTINCT FROM
	// symmetricAt: offsets of the lower bound of BETWEEN SYMMETRIC.
	symmetricAt map[int]bool
	// skipAt: offsets of keywords a rewrite of their call took care of.
	skipAt map[int]bool
	// similarAt: offsets of the pattern of SIMILAR TO, written as LIKE.
	similarAt map[int]bool
	similars  map[*ast.PatternLikeOrIlikeExpr]bool
	// jsonAt: offsets of JSON of s IS JSON, written as LIKE (json.go).
	jsonAt map[int]bool
	placed map[string]bool // placeholder names found as tables in the AST
	emitAt *Pos            // of EMIT ON WINDOW CLOSE (emit.go)
	// stateTTLAt are the STATE_TTL hints of the SELECTs, by the offset of
	// the first select field (hints.go).
	stateTTLAt map[int][]Option
	// aliasAt are the column lists after an alias, by the alias's
	// placeholder name (alias_columns.go); aliases by table reference.
	aliasAt map[string]*aliasNote
	aliases map[*ast.TableSource]*aliasNote

	// sc is the script the statement was parsed from: its line index turns
	// an offset into a Pos without rescanning the statement (ExprPos).
	sc *script
}

func newMeta() *stmtMeta {
	return &stmtMeta{
		castAt: map[int]TypeName{}, casts: map[*ast.FuncCastExpr]TypeName{}, pgCastAt: map[int][]TypeName{},
		emptyInAt: map[int]bool{}, nulls: map[*ast.ByItem]bool{},
		tryCastAt: map[int]bool{}, tryCasts: map[*ast.FuncCastExpr]bool{},
		intervalAt: map[int]Interval{}, intervals: map[ast.ExprNode]Interval{},
		windowAt: map[string]*WindowTVF{}, windows: map[*ast.TableName]*WindowTVF{},
		tableAt: map[string]*tableNote{}, tables: map[*ast.TableName]*tableNote{}, distinctAt: map[int]bool{}, placed: map[string]bool{},
		symmetricAt: map[int]bool{}, skipAt: map[int]bool{},
		similarAt: map[int]bool{}, similars: map[*ast.PatternLikeOrIlikeExpr]bool{}, jsonAt: map[int]bool{},
		stateTTLAt: map[int][]Option{},
		aliasAt:    map[string]*aliasNote{}, aliases: map[*ast.TableSource]*aliasNote{},
	}
}

func (s Span) spanMeta() *stmtMeta { return s.meta }

// metaOf returns the parser's notes on stmt (nil for a statement not made by
// Parse).
func metaOf(stmt Statement) *stmtMeta {
	if m, ok := stmt.(interface{ spanMeta() *stmtMeta }); ok {
		return m.spanMeta()
	}
	return nil
}

// stmtParser parses the tokens [lo, hi) of a script as one statement.
type stmtParser struct {
	sc     *script
	lo, hi int
	i      int // the next token
	end    int // script offset where the statement's text ends
	meta   *stmtMeta
}

// sub returns a parser for the tokens [lo, hi), sharing p's metadata.
func (p *stmtParser) sub(lo, hi int) *stmtParser {
	return &stmtParser{sc: p.sc, lo: lo, hi: hi, i: lo, end: p.sc.toks[hi-1].end, meta: p.meta}
}

// span is the Span of tokens [lo, hi).
func (p *stmtParser) span(lo, hi int) Span {
	off := p.sc.toks[lo].off
	return Span{Start: p.sc.pos(off), Src: p.sc.text[off:p.sc.toks[hi-1].end], meta: p.meta}
}

func (p *stmtParser) errAt(off int, format string, args ...any) *Error {
	return Errorf(p.sc.pos(off), format, args...)
}

// atEnd reports whether every token of the statement is consumed.
func (p *stmtParser) atEnd() bool { return p.i >= p.hi }

// peek returns the next token; at the end it returns a token that matches
// nothing, placed at the end of the statement.
func (p *stmtParser) peek() token { return p.peekAt(0) }

func (p *stmtParser) peekAt(k int) token {
	if p.i+k >= p.hi {
		return token{kind: -1, off: p.end, end: p.end}
	}
	return p.sc.toks[p.i+k]
}

// accept consumes the keywords words if they come next.
func (p *stmtParser) accept(words ...string) bool {
	for k, w := range words {
		if !p.peekAt(k).is(w) {
			return false
		}
	}
	p.i += len(words)
	return true
}

func (p *stmtParser) acceptPunct(s string) bool {
	if p.peek().isPunct(s) {
		p.i++
		return true
	}
	return false
}

// unexpected is a syntax error at the next token, with hint.
func (p *stmtParser) unexpected(hint string) *Error {
	t := p.peek()
	var e *Error
	if p.atEnd() {
		e = p.errAt(p.end, "syntax error: unexpected end of statement")
	} else {
		e = p.errAt(t.off, "syntax error near %q", p.near(t.off))
		if h, ok := p.missingSemicolon(p.i); ok {
			hint = h
		}
	}
	e.Hint = hint
	return e
}

func (p *stmtParser) expect(word, hint string) *Error {
	if !p.accept(word) {
		return p.unexpected(hint)
	}
	return nil
}

func (p *stmtParser) expectPunct(s, hint string) *Error {
	if !p.acceptPunct(s) {
		return p.unexpected(hint)
	}
	return nil
}

// name parses a possibly qualified name (a, `a`, a.b.c); the parts are
// joined by '.'.
func (p *stmtParser) name(what string) (string, Pos, *Error) {
	t := p.peek()
	if !t.isName() {
		return "", Pos{}, p.unexpected("expected " + what)
	}
	pos := p.sc.pos(t.off)
	p.i++
	parts := []string{t.val}
	for p.peek().isPunct(".") && p.peekAt(1).isName() {
		parts = append(parts, p.peekAt(1).val)
		p.i += 2
	}
	return strings.Join(parts, "."), pos, nil
}

// nameList parses '(' name, ... ')'.
func (p *stmtParser) nameList(what string) ([]string, *Error) {
	if err := p.expectPunct("(", "expected '(' and a list of "+what+"s"); err != nil {
		return nil, err
	}
	var names []string
	for {
		n, _, err := p.name(what)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
			return nil, err
		}
		return names, nil
	}
}

// closing returns the index of the token that closes the parenthesis at
// toks[open], or hi when it is not closed within the statement.
func (p *stmtParser) closing(open int) int {
	depth := 0
	for j := open; j < p.hi; j++ {
		switch {
		case p.sc.toks[j].isPunct("("):
			depth++
		case p.sc.toks[j].isPunct(")"):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return p.hi
}

// exprEnd returns the index of the first token at or after i, outside
// parentheses, that is ',' or an unmatched ')' (or hi).
func (p *stmtParser) exprEnd(i int) int {
	depth := 0
	for j := i; j < p.hi; j++ {
		t := p.sc.toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			if depth == 0 {
				return j
			}
			depth--
		case t.isPunct(",") && depth == 0:
			return j
		}
	}
	return p.hi
}

// parseStatementSafely is parseStatement with any panic (a bug here or in
// the TiDB parser) turned into an *Error at the statement, so that one bad
// statement cannot take the shell down.
func (p *stmtParser) parseStatementSafely() (st Statement, err *Error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, p.errAt(p.sc.toks[p.lo].off, "%s: %v", internalError, r)
		}
	}()
	for i := p.lo; i < p.hi; i++ {
		if t := p.sc.toks[i]; t.kind == tokNumber && countDigits(t.val) > maxNumberDigits {
			return nil, p.errAt(t.off, "number literal has %d digits; at most %d are supported", countDigits(t.val), maxNumberDigits)
		}
	}
	return p.parseStatement()
}

// maxNumberDigits is the longest number literal accepted (MySQL's DECIMAL
// limit; the TiDB parser fails on longer ones).
const maxNumberDigits = 65

func countDigits(s string) int {
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n++
		}
		if c == 'e' || c == 'E' {
			break
		}
	}
	return n
}

// internalError starts the message of an error that is a bug, not the
// user's mistake.
const internalError = "internal error while parsing this statement"

// unsupportedStatements start statements of other dialects that are
// reported as such rather than as unknown.
var unsupportedStatements = map[string]bool{
	"TRUNCATE": true, "MERGE": true,
	"USE": true, "GRANT": true, "REVOKE": true, "ANALYZE": true,
	"LOAD": true, "CALL": true, "COMMIT": true, "ROLLBACK": true,
}

// parseStatement parses the whole token range as one statement.
func (p *stmtParser) parseStatement() (Statement, *Error) {
	t := p.peek()
	if _, ok := setBegin(p.sc.toks[:p.hi], p.i); ok && !t.is("EXPLAIN") {
		return p.parseStatementSet()
	}
	switch {
	case t.is("CREATE"):
		return p.parseCreate()
	case t.is("DROP"):
		return p.parseDrop()
	case t.is("ALTER"):
		return p.parseAlter()
	case t.is("REINDEX"):
		return p.parseReindex()
	case t.is("INSERT") || t.is("REPLACE"):
		return p.parseInsert()
	case t.is("UPDATE"):
		return p.parseUpdate()
	case t.is("DELETE"):
		return p.parseDelete()
	case t.is("SELECT") || t.is("WITH") || t.is("VALUES") || t.isPunct("("):
		q, err := p.parseQuery(p.i)
		if err != nil {
			return nil, err
		}
		return &Select{Span: p.span(p.lo, p.hi), Query: q}, nil
	case t.is("SET"):
		return p.parseSet()
	case t.is("RESET"):
		return p.parseReset()
	case t.is("SHOW"):
		return p.parseShow()
	case t.is("STOP"):
		return p.parseStopJob()
	case t.is("USE"):
		return p.parseUse()
	case t.is("DESCRIBE") || t.is("DESC"):
		return p.parseDescribe()
	case t.is("EXPLAIN"):
		return p.parseExplain()
	}
	if t.kind == tokIdent && unsupportedStatements[strings.ToUpper(t.val)] {
		e := p.errAt(t.off, "%s statements are not supported", strings.ToUpper(t.val))
		e.Hint = "tables are changed by INSERT INTO, UPDATE and DELETE"
		if !t.is("TRUNCATE") && !t.is("MERGE") {
			e.Hint = ""
		}
		return nil, e
	}
	e := p.errAt(t.off, "unknown statement %q", p.near(t.off))
	if t.kind == tokIdent {
		if kw, ok := nearestStatementKeyword(strings.ToUpper(t.val)); ok {
			e.Hint = "did you mean " + kw + "?"
		}
	}
	if e.Hint == "" {
		e.Hint = "expected SELECT, INSERT, UPDATE, DELETE, CREATE TABLE, CREATE VIEW, DROP, SET, RESET, SHOW, USE, STOP JOB, DESCRIBE, EXPLAIN or EXECUTE STATEMENT SET"
	}
	return nil, e
}
