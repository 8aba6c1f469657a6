package sql

import (
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
	"SELECT", "INSERT", "CREATE", "DROP", "SET", "RESET", "SHOW", "STOP",
	"DESCRIBE", "DESC", "EXPLAIN", "EXECUTE", "BEGIN", "VALUES", "WITH",
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
