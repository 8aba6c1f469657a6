package sql

import "strings"

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

// mysqlReserved are words the underlying MySQL grammar reserves but Flink
// lets users write unquoted in some places; using one as a name fails.
var mysqlReserved = map[string]bool{
	"KEY": true, "ROWS": true, "RANK": true, "KEYS": true, "INDEX": true,
	"RANGE": true, "READ": true, "CHANGE": true, "CONDITION": true,
	"DIV": true, "MOD": true, "LOW_PRIORITY": true, "RELEASE": true,
	"REPLACE": true, "REQUIRE": true, "SCHEMA": true, "STATUS": true,
	"USAGE": true, "DATABASE": true, "DATABASES": true, "FULLTEXT": true,
	"SPATIAL": true, "ROW_NUMBER": true, "DENSE_RANK": true, "GROUPS": true,
	"WINDOW": true, "LEAD": true, "LAG": true, "CUME_DIST": true,
	"NTILE": true, "OPTION": true, "FUNCTION": true, "SQL": true,
	"OUT": true, "LOCK": true, "FORCE": true, "USE": true, "MATCH": true,
	"MAXVALUE": true, "CURRENT_USER": true, "SHOW": true, "SET": true,
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
