package sql

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	// The parser needs a driver for literal values.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// sqlMode is the MySQL SQL mode the TiDB parser runs in, chosen to match
// Flink SQL: || concatenates strings, "x" is an identifier, a backslash
// in a string literal is an ordinary character, and white space may stand
// between a function's name and its '(' (COUNT (*), as SQLite's suites
// write it). IGNORE_SPACE makes the names of the built-ins the TiDB parser
// knows as keywords (COUNT, SUM, MAX, CAST, ...; builtinFuncNames) function
// names wherever a '(' follows, so a CTE with such a name and a column
// list (WITH max (a) AS ...) is quoted by the rewrites.
const sqlMode = mysql.ModePipesAsConcat | mysql.ModeANSIQuotes | mysql.ModeNoBackslashEscapes | mysql.ModeIgnoreSpace

var parserPool = sync.Pool{New: func() any {
	p := parser.New()
	p.SetSQLMode(sqlMode)
	return p
}}

// edit replaces the script bytes [off, end) by repl in the text given to
// the TiDB parser. off == end inserts.
type edit struct {
	off, end int
	repl     string
}

// offsetMap maps byte offsets of a rewritten text back to the script.
// Outside edits the mapping is a shift; an offset inside an edit's
// replacement maps into the replaced bytes (or onto their start).
type offsetMap struct {
	segs []mapSeg // sorted by roff
}

type mapSeg struct {
	roff, rlen int // range in the rewritten text
	soff, slen int // range in the script
	edit       bool
}

func (m *offsetMap) script(r int) int {
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].roff > r }) - 1
	if i < 0 {
		i = 0
	}
	s := m.segs[i]
	d := r - s.roff
	if d >= s.rlen {
		return s.soff + s.slen + d - s.rlen
	}
	if s.rlen == s.slen {
		return s.soff + d
	}
	if d >= s.slen {
		d = s.slen - 1
	}
	if d < 0 {
		d = 0
	}
	return s.soff + d
}

// scriptEnd maps the exclusive end r of a range of the rewritten text: a
// range ending inside an edit's replacement ends where the replaced bytes
// end.
func (m *offsetMap) scriptEnd(r int) int {
	if r <= 0 {
		return m.script(r)
	}
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].roff > r-1 }) - 1
	if i < 0 {
		i = 0
	}
	s := m.segs[i]
	if d := r - s.roff; d <= s.rlen && s.edit {
		return s.soff + s.slen
	}
	return m.script(r)
}

// rewrite builds the text handed to the TiDB parser for the script range
// [from, to): prefix, then the script text with edits applied (edits must
// lie inside the range, sorted and not overlapping). Comments in the range
// are blanked (newlines kept) so that the TiDB parser's comment rules, which
// differ from Flink's, never apply.
func (sc *script) rewrite(from, to int, prefix string, edits []edit) (string, *offsetMap) {
	for _, c := range sc.comments {
		if c.end <= from || c.off >= to {
			continue
		}
		b := []byte(sc.text[c.off:c.end])
		for i := range b {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		edits = append(edits, edit{c.off, c.end, string(b)})
	}
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		// An insertion (off == end) goes before an edit at its offset.
		return a.off < b.off || (a.off == b.off && a.off == a.end && b.end > b.off)
	})
	var b strings.Builder
	m := &offsetMap{}
	b.WriteString(prefix)
	m.segs = append(m.segs, mapSeg{roff: 0, rlen: len(prefix), soff: from, slen: 0})
	at := from
	for _, e := range edits {
		if e.off < at { // overlapping: keep the first
			continue
		}
		if e.off > at {
			m.segs = append(m.segs, mapSeg{roff: b.Len(), rlen: e.off - at, soff: at, slen: e.off - at})
			b.WriteString(sc.text[at:e.off])
		}
		m.segs = append(m.segs, mapSeg{roff: b.Len(), rlen: len(e.repl), soff: e.off, slen: e.end - e.off, edit: true})
		b.WriteString(e.repl)
		at = e.end
	}
	m.segs = append(m.segs, mapSeg{roff: b.Len(), rlen: to - at, soff: at, slen: to - at})
	b.WriteString(sc.text[at:to])
	return b.String(), m
}

// tidbParse parses text (built by rewrite) with the TiDB parser, expecting
// exactly one statement. Errors are *Error at script positions. Positions
// in the resulting AST are moved to script offsets by fixPositions.
func (p *stmtParser) tidbParse(text string, m *offsetMap) (stmt ast.StmtNode, err *Error) {
	defer func() {
		if r := recover(); r != nil {
			stmt = nil
			err = p.errAt(m.script(0), "%s: %v", internalError, r)
		}
	}()
	tp := parserPool.Get().(*parser.Parser)
	stmts, _, perr := tp.ParseSQL(text)
	parserPool.Put(tp)
	if perr != nil {
		return nil, p.translate(text, m, perr)
	}
	if len(stmts) != 1 {
		return nil, p.errAt(m.script(0), "expected one statement")
	}
	p.fixPositions(stmts[0], m)
	if err := p.checkPlaced(text, m); err != nil {
		return nil, err
	}
	// Every BETWEEN SYMMETRIC was found in the AST, or it would be a plain
	// BETWEEN: a wrong answer.
	if len(text) > 0 {
		lo, hi := m.script(0), m.script(len(text)-1)
		for off := range p.meta.symmetricAt {
			if lo <= off && off <= hi {
				return nil, p.errAt(off, "BETWEEN SYMMETRIC is not supported here; write (x BETWEEN a AND b) OR (x BETWEEN b AND a)")
			}
		}
		for off := range p.meta.jsonAt {
			if lo <= off && off <= hi {
				return nil, p.errAt(off, "IS JSON is not supported here")
			}
		}
		for off := range p.meta.similarAt {
			if lo <= off && off <= hi {
				return nil, p.errAt(off, "SIMILAR TO is not supported here; write REGEXP(x, '^(...)$')")
			}
		}
	}
	return stmts[0], nil
}

// checkPlaced makes sure every placeholder table name put into text (for a
// window function, a table hint or a temporal join) came back as a table of
// the AST: one that landed elsewhere (a window function in the select list,
// say) would otherwise surface later as an unknown column.
func (p *stmtParser) checkPlaced(text string, m *offsetMap) *Error {
	for _, ph := range []string{windowPlaceholder, tablePlaceholder, aliasPlaceholder} {
		for at := 0; ; {
			i := strings.Index(text[at:], ph)
			if i < 0 {
				break
			}
			at += i
			end := at + len(ph)
			for end < len(text) && isDigit(text[end]) {
				end++
			}
			name := text[at:end]
			_, window := p.meta.windowAt[name]
			_, table := p.meta.tableAt[name]
			_, alias := p.meta.aliasAt[name]
			if (window || table || alias) && !p.meta.placed[name] {
				switch ph {
				case windowPlaceholder:
					return p.errAt(m.script(at), "a window function TABLE(...) must stand in FROM")
				case aliasPlaceholder:
					return p.errAt(m.script(at), "a column list after an alias must follow a table or a subquery in FROM")
				}
				return p.errAt(m.script(at), "OPTIONS hints and FOR SYSTEM_TIME AS OF must follow a table name in FROM")
			}
			at = end
		}
	}
	return nil
}

var illegalDoubleRE = regexp.MustCompile(`^Illegal double '([^']+)' value found during parsing$`)

var totalLenRE = regexp.MustCompile(`\(total length (\d+)\)\s*$`)

// translate turns a TiDB parser error into an *Error at the script position
// of the token it complains about.
func (p *stmtParser) translate(text string, m *offsetMap, perr error) *Error {
	msg := perr.Error()
	idx := strings.Index(msg, ` near "`)
	if idx < 0 {
		// Not a syntax error (a precision out of range, say): keep TiDB's
		// words, at the start of the statement.
		msg = strings.TrimSpace(msg)
		if i := strings.Index(msg, "]"); strings.HasPrefix(msg, "[") && i > 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
		if mm := illegalDoubleRE.FindStringSubmatch(msg); mm != nil {
			// A literal beyond DOUBLE (1e400): at the literal.
			if at := strings.Index(text, mm[1]); at >= 0 {
				return p.errAt(m.script(at), "the number %s is out of the range of DOUBLE (at most about 1.8e308)", mm[1])
			}
		}
		return p.errAt(m.script(0), "%s", msg)
	}
	off := -1
	if mm := totalLenRE.FindStringSubmatch(msg); mm != nil {
		if n, err := strconv.Atoi(mm[1]); err == nil && n <= len(text) {
			off = len(text) - n
		}
	}
	if off < 0 {
		rest := msg[idx+len(` near "`):]
		for o := 0; o <= len(text); o++ {
			if n := len(text) - o; len(rest) > n && rest[n] == '"' && rest[:n] == text[o:] {
				off = o
				break
			}
		}
	}
	if off < 0 {
		off = len(text)
	}
	return p.syntaxError(m.script(off))
}

// FullJoin is the join type of FULL [OUTER] JOIN, which the TiDB AST has
// no constant for: an *ast.Join of a FULL join has Tp == FullJoin.
const FullJoin = ast.RightJoin + 1

// fixPositions rewrites the origin text positions of every expression of
// the AST from offsets of the rewritten text to byte offsets of the script,
// restores the original text of select fields, and files what the rewrites
// hid (CAST targets, intervals, window functions, FULL joins) under the
// nodes.
func (p *stmtParser) fixPositions(n ast.Node, m *offsetMap) {
	n.Accept(&posFixer{p: p, m: m, seen: map[ast.Node]bool{}})
}

type posFixer struct {
	p    *stmtParser
	m    *offsetMap
	seen map[ast.Node]bool
	// outer holds the script offsets of the expressions being visited. An
	// expression whose position the TiDB parser left unset (0: no
	// expression starts at the first byte of the text it parses, which is a
	// keyword or the "SELECT " prefix) takes its parent's: the 1 of
	// COUNT(*), the unit of DATE_SUB.
	outer []int
}

func (v *posFixer) Enter(n ast.Node) (ast.Node, bool) {
	if v.seen[n] {
		if _, ok := n.(ast.ExprNode); ok {
			v.outer = append(v.outer, -1)
		}
		return n, true
	}
	v.seen[n] = true
	meta := v.p.meta
	switch x := n.(type) {
	case *ast.SelectField:
		if txt := x.OriginalText(); txt != "" {
			so := v.m.script(x.Offset)
			se := v.m.scriptEnd(x.Offset + len(txt))
			if so < se && se <= len(v.p.sc.text) {
				x.SetText(nil, v.p.sc.text[so:se])
			}
			x.Offset = so
		}
	case *ast.TableName:
		if w, ok := meta.windowAt[x.Name.O]; ok {
			meta.windows[x] = w
			meta.placed[x.Name.O] = true
		}
	case *ast.Join:
		if x.StraightJoin {
			x.StraightJoin = false
			x.Tp = FullJoin
		}
	}
	if e, ok := n.(ast.ExprNode); ok {
		off := v.m.script(e.OriginTextPosition())
		if e.OriginTextPosition() == 0 && len(v.outer) > 0 && v.outer[len(v.outer)-1] >= 0 {
			off = v.outer[len(v.outer)-1]
		}
		e.SetOriginTextPosition(off)
		v.outer = append(v.outer, off)
		switch x := n.(type) {
		case *ast.FuncCastExpr:
			// The outer casts of x::a::b are entered first.
			if ts := meta.pgCastAt[off]; len(ts) > 0 {
				meta.casts[x] = ts[len(ts)-1]
				meta.pgCastAt[off] = ts[:len(ts)-1]
			} else if t, ok := meta.castAt[off]; ok {
				meta.casts[x] = t
			}
			if meta.tryCastAt[off] {
				meta.tryCasts[x] = true
			}
		case *ast.FuncCallExpr:
			if iv, ok := meta.intervalAt[off]; ok && x.FnName.L == "interval" {
				meta.intervals[x] = iv
			}
		case ast.ValueExpr:
			if iv, ok := meta.intervalAt[off]; ok {
				meta.intervals[x] = iv
			}
		}
	}
	return n, false
}

// Leave finishes what Enter cannot do before the children are visited:
// nodes added here were positioned by their own parse and must not be
// mapped again.
func (v *posFixer) Leave(n ast.Node) (ast.Node, bool) {
	meta := v.p.meta
	if _, ok := n.(ast.ExprNode); ok && len(v.outer) > 0 {
		v.outer = v.outer[:len(v.outer)-1]
	}
	switch x := n.(type) {
	case *ast.ByItem:
		v.unwrapNulls(x)
	case *ast.PatternInExpr:
		if len(x.List) == 1 && x.Sel == nil && meta.emptyInAt[x.List[0].OriginTextPosition()] {
			if _, ok := x.List[0].(ast.ValueExpr); ok {
				x.List = nil
			}
		}
	case *ast.TableSource:
		if a, ok := meta.aliasAt[x.AsName.O]; ok {
			meta.placed[x.AsName.O] = true
			x.AsName = ast.NewCIStr(a.alias)
			meta.aliases[x] = a
		}
	case *ast.TableName:
		if a, ok := meta.tableAt[x.Name.O]; ok {
			meta.placed[x.Name.O] = true
			x.Schema, x.Name = ast.NewCIStr(a.schema), ast.NewCIStr(a.name)
			if a.asOf != nil {
				x.AsOf = &ast.AsOfClause{TsExpr: a.asOf}
			}
			meta.tables[x] = a
		}
	case *ast.PatternLikeOrIlikeExpr:
		if x.Pattern != nil && meta.jsonAt[x.Pattern.OriginTextPosition()] {
			// s IS [NOT] JSON kind (json.go).
			delete(meta.jsonAt, x.Pattern.OriginTextPosition())
			call := &ast.FuncCallExpr{FnName: ast.NewCIStr(IsJSONFunc), Args: []ast.ExprNode{x.Expr, x.Pattern}}
			call.SetOriginTextPosition(x.OriginTextPosition())
			if !x.Not {
				return call, true
			}
			not := &ast.UnaryOperationExpr{Op: opcode.Not, V: call}
			not.SetOriginTextPosition(x.OriginTextPosition())
			return not, true
		}
		if x.Pattern != nil && meta.similarAt[x.Pattern.OriginTextPosition()] {
			meta.similars[x] = true
			delete(meta.similarAt, x.Pattern.OriginTextPosition())
		}
	case *ast.BetweenExpr:
		if x.Left != nil && meta.symmetricAt[x.Left.OriginTextPosition()] {
			// NOT BETWEEN SYMMETRIC: outside both ranges.
			op := opcode.LogicOr
			if x.Not {
				op = opcode.LogicAnd
			}
			swapped := &ast.BetweenExpr{Expr: x.Expr, Left: x.Right, Right: x.Left, Not: x.Not}
			swapped.SetOriginTextPosition(x.OriginTextPosition())
			or := &ast.BinaryOperationExpr{Op: op, L: x, R: swapped}
			or.SetOriginTextPosition(x.OriginTextPosition())
			paren := &ast.ParenthesesExpr{Expr: or}
			paren.SetOriginTextPosition(x.OriginTextPosition())
			delete(meta.symmetricAt, x.Left.OriginTextPosition())
			return paren, true
		}
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.NullEQ && x.R != nil && meta.distinctAt[x.R.OriginTextPosition()] {
			not := &ast.UnaryOperationExpr{Op: opcode.Not, V: &ast.ParenthesesExpr{Expr: x}}
			not.SetOriginTextPosition(x.OriginTextPosition())
			not.V.SetOriginTextPosition(x.OriginTextPosition())
			return not, true
		}
	}
	return n, true
}

// syntaxError reports a syntax error at script offset off, naming the text
// there and, when one is obvious, a hint.
func (p *stmtParser) syntaxError(off int) *Error {
	ti := p.tokenAt(off)
	// A misspelt keyword often parses as an alias: "SELECT a FORM t" fails
	// at t. Point at the misspelling instead.
	if ti > p.lo {
		if kw, ok := misspeltKeyword(p.sc.toks[ti-1]); ok {
			e := p.errAt(p.sc.toks[ti-1].off, "syntax error near %q", p.near(p.sc.toks[ti-1].off))
			e.Hint = "did you mean " + kw + "?"
			return e
		}
	}
	if ti >= p.hi {
		e := p.errAt(p.end, "syntax error: unexpected end of statement")
		e.Hint = "the statement is incomplete"
		return e
	}
	t := p.sc.toks[ti]
	e := p.errAt(t.off, "syntax error near %q", p.near(t.off))
	if hint, ok := p.missingSemicolon(ti); ok {
		e.Hint = hint
	} else if kw, ok := misspeltKeyword(t); ok {
		e.Hint = "did you mean " + kw + "?"
	} else if ti > p.lo && p.sc.toks[ti-1].isPunct(",") && t.kind == tokIdent && clauseKeywords[strings.ToUpper(t.val)] {
		e.Hint = "remove the ',' before " + strings.ToUpper(t.val)
	} else if t.kind == tokIdent && reservedWords[strings.ToUpper(t.val)] && ti > p.lo && namePosition(p.sc.toks[ti-1]) {
		e.Hint = fmt.Sprintf("%s is a reserved word; quote it as `%s` to use it as a name", strings.ToUpper(t.val), t.val)
	}
	return e
}

// tokenAt returns the index of the first token of the statement at or after
// script offset off (p.hi if there is none).
func (p *stmtParser) tokenAt(off int) int {
	i := sort.Search(p.hi-p.lo, func(i int) bool { return p.sc.toks[p.lo+i].end > off })
	return p.lo + i
}

// near is the text shown in a syntax error: from off to the end of the line
// or statement, at most about 40 bytes, cut at a token boundary.
func (p *stmtParser) near(off int) string {
	end := p.end
	if i := strings.IndexByte(p.sc.text[off:end], '\n'); i >= 0 {
		end = off + i
	}
	if end-off > 40 {
		cut := off
		for i := p.tokenAt(off); i < p.hi && p.sc.toks[i].end <= off+40; i++ {
			cut = p.sc.toks[i].end
		}
		if cut == off && p.tokenAt(off) < p.hi {
			cut = p.sc.toks[p.tokenAt(off)].end
		}
		if cut < end {
			end = cut
		}
	}
	return strings.TrimSpace(p.sc.text[off:end])
}
