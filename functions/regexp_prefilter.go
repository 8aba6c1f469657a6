package functions

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// regexpMatcher is a compiled pattern with a prefilter. When every match
// of the pattern contains a literal (the longest one of its top-level
// sequence, case-sensitive), an input without it has no match, found
// with a substring search rather than the regexp engine; and when the
// part of the pattern before the literal matches at most pre bytes, no
// match starts more than pre bytes before the literal's first
// occurrence, so the search starts there (RE2 tries every start
// position, which on a long input costs more than the match). A search
// from inside the input runs tail, the pattern whose ^ (begin of text)
// can no longer match; patterns with look-behind assertions that tail
// cannot express (\b, \B, multi-line ^) are searched from the start.
type regexpMatcher struct {
	re   *regexp.Regexp
	lit  string         // "": no prefilter
	pre  int            // -1: the search starts at the start
	tail *regexp.Regexp // nil when pre is -1
}

// newRegexpMatcher analyses re, compiled from src.
func newRegexpMatcher(src string, re *regexp.Regexp) *regexpMatcher {
	m := &regexpMatcher{re: re, pre: -1}
	full, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return m
	}
	ast := full.Simplify()
	for ast.Op == syntax.OpCapture {
		ast = ast.Sub[0]
	}
	subs := []*syntax.Regexp{ast}
	if ast.Op == syntax.OpConcat {
		subs = ast.Sub
	}
	at := -1
	for k, s := range subs {
		if l := literalOf(s); len(l) > len(m.lit) {
			m.lit, at = l, k
		}
	}
	if at < 0 {
		return m
	}
	pre := 0
	for _, s := range subs[:at] {
		w := maxWidth(s)
		if w < 0 {
			return m
		}
		pre += w
	}
	if lookBehind(ast) {
		return m
	}
	tail := re
	if hasOp(full, syntax.OpBeginText) {
		tail, err = regexp.Compile(noBeginText(full).String())
		if err != nil || tail.NumSubexp() != re.NumSubexp() {
			return m
		}
	}
	m.pre, m.tail = pre, tail
	return m
}

// literalOf is the text a case-sensitive literal node (or a capture of
// one) matches, "" for other nodes.
func literalOf(re *syntax.Regexp) string {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase != 0 {
		return ""
	}
	return string(re.Rune)
}

// maxWidth is the most bytes re can match; -1: no bound.
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral, syntax.OpCharClass:
		if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 {
			return len(string(re.Rune))
		}
		if re.Op == syntax.OpCharClass {
			return utf8.UTFMax
		}
		return utf8.UTFMax * len(re.Rune) // case variants differ in width
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		w := 0
		for _, s := range re.Sub {
			sw := maxWidth(s)
			if sw < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				w += sw
			} else {
				w = max(w, sw)
			}
		}
		return w
	case syntax.OpRepeat:
		sw := maxWidth(re.Sub[0])
		if re.Max < 0 || sw < 0 {
			return -1
		}
		return re.Max * sw
	}
	return -1 // star, plus
}

// lookBehind tells whether re has an assertion on the text before a
// position that a search from inside the input would get wrong.
func lookBehind(re *syntax.Regexp) bool {
	return hasOp(re, syntax.OpBeginLine) || hasOp(re, syntax.OpWordBoundary) || hasOp(re, syntax.OpNoWordBoundary)
}

func hasOp(re *syntax.Regexp, op syntax.Op) bool {
	if re.Op == op {
		return true
	}
	for _, s := range re.Sub {
		if hasOp(s, op) {
			return true
		}
	}
	return false
}

// noBeginText is a copy of re in which ^ (begin of text) matches nothing.
func noBeginText(re *syntax.Regexp) *syntax.Regexp {
	c := *re
	if c.Op == syntax.OpBeginText {
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		c.Sub[i] = noBeginText(s)
	}
	return &c
}

// from is where the search of s starts, and the pattern that searches
// from there; ok false: s has no match.
func (m *regexpMatcher) from(s string) (q int, re *regexp.Regexp, ok bool) {
	if m.lit == "" {
		return 0, m.re, true
	}
	p := strings.Index(s, m.lit)
	if p < 0 {
		return 0, nil, false
	}
	if m.pre < 0 || p <= m.pre {
		return 0, m.re, true
	}
	q = p - m.pre
	for q > 0 && !utf8.RuneStart(s[q]) {
		q--
	}
	if q == 0 {
		return 0, m.re, true
	}
	return q, m.tail, true
}

// MatchString tells whether s has a match.
func (m *regexpMatcher) MatchString(s string) bool {
	q, re, ok := m.from(s)
	return ok && re.MatchString(s[q:])
}

// submatch returns group g of the first match of s; ok false: no match,
// or the group did not take part in it.
func (m *regexpMatcher) submatch(s string, g int) (string, bool) {
	q, re, ok := m.from(s)
	if !ok {
		return "", false
	}
	t := s[q:]
	x := re.FindStringSubmatchIndex(t)
	if x == nil || x[2*g] < 0 {
		return "", false
	}
	return t[x[2*g]:x[2*g+1]], true
}

// appendReplaced appends s with every match replaced by repl.
func (m *regexpMatcher) appendReplaced(dst []byte, s, repl string) []byte {
	if m.lit != "" && !strings.Contains(s, m.lit) {
		return append(dst, s...)
	}
	return append(dst, m.re.ReplaceAllLiteralString(s, repl)...)
}
