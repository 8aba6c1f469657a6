package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
)

// clauseKeywords are the keywords whose misspelling is worth a hint.
var clauseKeywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "ORDER": true,
	"HAVING": true, "LIMIT": true, "UNION": true, "JOIN": true, "INSERT": true,
	"INTO": true, "VALUES": true, "CREATE": true, "TABLE": true, "VIEW": true,
	"DISTINCT": true, "BETWEEN": true, "WATERMARK": true, "PRIMARY": true,
	"ENFORCED": true, "WITH": true, "INTERVAL": true, "OFFSET": true,
	"INNER": true, "OUTER": true, "LEFT": true, "RIGHT": true,
}

// notTypos are words close to a clause keyword that are common on their own.
var notTypos = map[string]bool{
	"INT": true, "VALUE": true, "ORDERS": true, "TABLES": true, "VIEWS": true,
	"GROUPS": true, "LIMITS": true, "JOINS": true, "ROM": true, "LEFTS": true,
	"INNER": true, "OUTER": true, "INTER": true, "WIDTH": true, "WITHIN": true,
	"VIEWER": true, "SELECTS": true, "INSERTS": true, "WHEN": true, "WHERE": true,
	"UNIT": true, "UNION": true, "OFFSETS": true, "CREATED": true,
}

// statementKeywords start the statements Parse knows.
var statementKeywords = []string{
	"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER", "SET", "RESET", "SHOW", "STOP",
	"DESCRIBE", "DESC", "EXPLAIN", "EXECUTE", "BEGIN", "VALUES", "WITH",
}

// missingSemicolon reports whether the statement failed to parse at token
// ti because it runs into the next one: ti is a word a statement starts
// with (not WITH or VALUES, which also go on a statement) and the token
// before it can end a statement (a name, a literal, a closing parenthesis);
// if so it returns the hint to give.
func (p *stmtParser) missingSemicolon(ti int) (string, bool) {
	if ti <= p.lo || ti >= p.hi {
		return "", false
	}
	t, prev := p.sc.toks[ti], p.sc.toks[ti-1]
	w := strings.ToUpper(t.val)
	if t.kind != tokIdent || w == "WITH" || w == "VALUES" || !slices.Contains(statementKeywords, w) {
		return "", false
	}
	switch prev.kind {
	case tokString, tokNumber, tokQuoted:
	case tokPunct:
		if prev.val != ")" {
			return "", false
		}
	case tokIdent:
		if reservedWords[strings.ToUpper(prev.val)] {
			return "", false
		}
	default:
		return "", false
	}
	return fmt.Sprintf("is a ';' missing before %s? Each statement ends with ';'", w), true
}

// reservedWords are the words the MySQL grammar of the TiDB parser
// reserves; written unquoted where a name is expected they fail.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range parser.Keywords {
		if k.Reserved {
			m[k.Word] = true
		}
	}
	return m
}()

// namePosition reports whether the token before t (prev) is one after
// which a name usually comes.
func namePosition(prev token) bool {
	return prev.isPunct(",") || prev.isPunct(".") || prev.isPunct("(") ||
		prev.is("FROM") || prev.is("JOIN") || prev.is("SELECT") || prev.is("INTO") || prev.is("BY")
}

// misspeltKeyword reports whether t is an unquoted identifier that is a
// likely misspelling of a clause keyword (one edit away, or two letters
// swapped), and which keyword.
func misspeltKeyword(t token) (string, bool) {
	if t.kind != tokIdent || len(t.val) < 3 {
		return "", false
	}
	w := strings.ToUpper(t.val)
	if clauseKeywords[w] || notTypos[w] {
		return "", false
	}
	for kw := range clauseKeywords {
		if closeWord(w, kw) {
			return kw, true
		}
	}
	return "", false
}

// nearestStatementKeyword returns the statement keyword that w (upper case)
// misspells, if any.
func nearestStatementKeyword(w string) (string, bool) {
	if len(w) < 3 {
		return "", false
	}
	for _, kw := range statementKeywords {
		if closeWord(w, kw) {
			return kw, true
		}
	}
	return "", false
}

// closeWord reports whether a and b differ by one insertion, deletion,
// substitution or swap of adjacent letters (and are not equal).
func closeWord(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) == len(b) {
		diff := -1
		n := 0
		for i := 0; i < len(a); i++ {
			if a[i] != b[i] {
				if n == 0 {
					diff = i
				}
				n++
			}
		}
		if n == 1 {
			return true
		}
		return n == 2 && diff+1 < len(a) && a[diff] == b[diff+1] && a[diff+1] == b[diff]
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) != 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return a[i:] == b[i+1:]
}

// queryHint reads the query hints of the comment c after the SELECT at
// toks[i]: /*+ STATE_TTL('orders' = '1d', 'o' = '12h') */, Flink's syntax.
// Several hints may be listed, separated by commas; hints other than
// STATE_TTL are ignored, as table hints other than OPTIONS are. Within one
// STATE_TTL a key given twice takes its last value; across STATE_TTL hints
// the first one to name a key wins (Flink's rules). The entries are filed
// under the offset of the SELECT's first field (after DISTINCT or ALL),
// where StateTTLHints finds them.
func (p *stmtParser) queryHint(c span, i, hi int) *Error {
	base := c.off + 3
	toks := lex(p.sc.text[base : c.end-2]).toks
	var got []Option
	k := 0
	for k < len(toks) {
		name := toks[k]
		if name.kind != tokIdent {
			return nil // not a hint list we read: a comment
		}
		k++
		if k >= len(toks) || !toks[k].isPunct("(") {
			if name.is("STATE_TTL") {
				return p.stateTTLSyntax(base, toks, k, c)
			}
			if k < len(toks) && toks[k].isPunct(",") {
				k++
			}
			continue
		}
		end := k + 1
		for depth := 1; end < len(toks); end++ {
			if toks[end].isPunct("(") {
				depth++
			} else if toks[end].isPunct(")") {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if name.is("STATE_TTL") {
			opts, err := p.stateTTLArgs(base, toks, k+1, end, c)
			if err != nil {
				return err
			}
			for _, o := range opts {
				if !hasKey(got, o.Key) {
					got = append(got, o)
				}
			}
		}
		k = end + 1
		if k < len(toks) && toks[k].isPunct(",") {
			k++
		}
	}
	if len(got) == 0 {
		return nil
	}
	j := i + 1
	for j < hi && (p.sc.toks[j].is("DISTINCT") || p.sc.toks[j].is("ALL") || p.sc.toks[j].is("DISTINCTROW")) {
		j++
	}
	if j >= hi {
		return nil
	}
	p.meta.stateTTLAt[p.sc.toks[j].off] = got
	return nil
}

// stateTTLArgs reads the 'key' = 'value' pairs of toks[lo:hi] (a key may
// also be a name).
func (p *stmtParser) stateTTLArgs(base int, toks []token, lo, hi int, c span) ([]Option, *Error) {
	if hi >= len(toks) {
		return nil, p.stateTTLSyntax(base, toks, hi, c)
	}
	var opts []Option
	k := lo
	for k < hi {
		key := toks[k]
		if key.kind != tokString && !key.isName() {
			return nil, p.stateTTLSyntax(base, toks, k, c)
		}
		if k+2 >= hi || !toks[k+1].isPunct("=") || toks[k+2].kind != tokString {
			return nil, p.stateTTLSyntax(base, toks, k+1, c)
		}
		o := Option{Key: key.val, Value: toks[k+2].val, Pos: p.sc.pos(base + key.off)}
		replaced := false
		for x := range opts {
			if strings.EqualFold(opts[x].Key, o.Key) {
				opts[x], replaced = o, true // the last value of a key wins
			}
		}
		if !replaced {
			opts = append(opts, o)
		}
		k += 3
		if k < hi {
			if !toks[k].isPunct(",") {
				return nil, p.stateTTLSyntax(base, toks, k, c)
			}
			k++
		}
	}
	if len(opts) == 0 {
		return nil, p.stateTTLSyntax(base, toks, lo, c)
	}
	return opts, nil
}

func (p *stmtParser) stateTTLSyntax(base int, toks []token, k int, c span) *Error {
	off := c.end - 2
	if k < len(toks) {
		off = base + toks[k].off
	}
	e := p.errAt(off, "syntax error in STATE_TTL hint")
	e.Hint = "name each input and its TTL, as in /*+ STATE_TTL('orders' = '1d', 'o' = '12h') */"
	return e
}

func hasKey(opts []Option, key string) bool {
	for _, o := range opts {
		if strings.EqualFold(o.Key, key) {
			return true
		}
	}
	return false
}
