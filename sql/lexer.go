package sql

import (
	"strings"
	"unicode/utf8"
)

// tokKind classifies a token of the lexer.
type tokKind int

const (
	tokIdent  tokKind = iota // unquoted identifier or keyword
	tokQuoted                // `quoted` or "quoted" identifier
	tokString                // 'string literal'
	tokNumber                // 42, 1.5, 1e3, .5
	tokPunct                 // ( ) , ; . = and operators such as <= || <>
)

// token is one lexical token. Offsets are bytes of the text given to lex.
type token struct {
	kind     tokKind
	off, end int
	// val is the identifier as written (unquoted form for tokQuoted), the
	// unescaped value of a string, or the raw text otherwise.
	val string
}

// is reports whether t is the unquoted keyword kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.val, kw)
}

// isPunct reports whether t is the punctuation p.
func (t token) isPunct(p string) bool {
	return t.kind == tokPunct && t.val == p
}

// isName reports whether t can name something: an identifier or a quoted
// identifier.
func (t token) isName() bool {
	return t.kind == tokIdent || t.kind == tokQuoted
}

// span is a byte range [off, end) of the lexed text.
type span struct{ off, end int }

// lexResult is the outcome of lexing a text.
type lexResult struct {
	toks     []token
	comments []span
	// unterminated, if set, is a string, quoted identifier or block comment
	// that runs to the end of the text; errOff is where it opens and errWhat
	// says what it is.
	unterminated bool
	errOff       int
	errWhat      string
}

// lex splits text into tokens, skipping white space, comments (-- to the
// end of the line, /* ... */) and a byte order mark at the start. It never fails: an unterminated string,
// quoted identifier or comment ends the token list and is reported in the
// result. Strings follow standard SQL (and Flink): two quotes in a row
// stand for one quote, and a backslash is an ordinary character.
func lex(text string) lexResult {
	var r lexResult
	i := 0
	n := len(text)
	if strings.HasPrefix(text, bom) {
		i = len(bom)
	}
	for i < n {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = n - i
			}
			r.comments = append(r.comments, span{i, i + j})
			i += j
		case c == '/' && i+1 < n && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				r.comments = append(r.comments, span{i, n})
				r.unterminated, r.errOff, r.errWhat = true, i, "comment"
				return r
			}
			r.comments = append(r.comments, span{i, i + 2 + j + 2})
			i += 2 + j + 2
		case c == '\'' || c == '`' || c == '"':
			val, end, ok := scanQuoted(text, i, c)
			if !ok {
				r.unterminated, r.errOff = true, i
				r.errWhat = map[byte]string{'\'': "string literal", '`': "quoted identifier", '"': "quoted identifier"}[c]
				return r
			}
			kind := tokQuoted
			if c == '\'' {
				kind = tokString
			}
			r.toks = append(r.toks, token{kind: kind, off: i, end: end, val: val})
			i = end
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(text[i+1])):
			j := scanNumber(text, i)
			r.toks = append(r.toks, token{kind: tokNumber, off: i, end: j, val: text[i:j]})
			i = j
		case isIdentStart(c):
			j := i
			for j < n && isIdentPart(text[j]) {
				j++
			}
			r.toks = append(r.toks, token{kind: tokIdent, off: i, end: j, val: text[i:j]})
			i = j
		default:
			j := i + 1
			if i+1 < n {
				switch text[i : i+2] {
				case "<=", ">=", "<>", "!=", "||", "==", "::", "=>", "->":
					j = i + 2
				}
			}
			r.toks = append(r.toks, token{kind: tokPunct, off: i, end: j, val: text[i:j]})
			i = j
		}
	}
	return r
}

// scanQuoted scans a quoted token opening at text[i] == q, where a doubled
// quote stands for itself. It returns the unquoted value and the end offset.
func scanQuoted(text string, i int, q byte) (string, int, bool) {
	var b strings.Builder
	j := i + 1
	for j < len(text) {
		if text[j] == q {
			if j+1 < len(text) && text[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(text[j])
		j++
	}
	return "", len(text), false
}

func scanNumber(text string, i int) int {
	j := i
	n := len(text)
	if j+1 < n && text[j] == '0' && (text[j+1] == 'x' || text[j+1] == 'X') {
		j += 2
		for j < n && isHex(text[j]) {
			j++
		}
		return j
	}
	for j < n && isDigit(text[j]) {
		j++
	}
	if j < n && text[j] == '.' {
		j++
		for j < n && isDigit(text[j]) {
			j++
		}
	}
	if j < n && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < n && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < n && isDigit(text[k]) {
			j = k
			for j < n && isDigit(text[j]) {
				j++
			}
		}
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// isIdentStart accepts ASCII letters, '_' and any non-ASCII byte (so that
// identifiers in other scripts lex as one token).
func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }
