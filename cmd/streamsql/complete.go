package main

import (
	"sort"
	"strings"
	"unicode"
)

// keywords are the words the shell completes besides table and view names.
var keywords = []string{
	"ALL", "AND", "AS", "ASC", "AVG", "BEGIN", "BETWEEN", "BIGINT", "BOOLEAN", "BY",
	"BYTES", "CASE", "CAST", "CATALOG", "CATALOGS", "COALESCE", "COLUMNS", "COUNT", "CREATE", "CUMULATE", "CURRENT",
	"DATABASE", "DATABASES", "DATE",
	"DECIMAL", "DESC", "DESCRIBE", "DESCRIPTOR", "DISTINCT", "DOUBLE", "DROP", "ELSE",
	"END", "ENFORCED", "EXECUTE", "EXISTS", "EXPLAIN", "FALSE", "FLOAT", "FROM",
	"FULL", "FUNCTION", "FUNCTIONS", "GROUP", "HAVING", "HOP", "IF", "IN", "INNER", "INSERT", "INT", "INTERVAL",
	"INTO", "IS", "JOB", "JOBS", "JOIN", "KEY", "LANGUAGE", "LEFT", "LIKE", "LIMIT", "MAX", "MIN",
	"MINUTE", "NOT", "NULL", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION",
	"PRIMARY", "RESET", "RIGHT", "SAVEPOINT", "SECOND", "SELECT", "SESSION", "SET",
	"SHOW", "SMALLINT", "STATEMENT", "STOP", "STRING", "SUM", "TABLE", "TABLES",
	"TEMPORARY", "THEN", "TIME", "TIMESTAMP", "TINYINT", "TRUE", "TUMBLE", "UNION",
	"USE", "USER", "VALUES", "VARCHAR", "VIEW", "VIEWS", "WASM", "WATERMARK", "WHEN", "WHERE", "WINDOW_END",
	"WINDOW_START", "WITH",
}

// completer completes the word before the cursor with SQL keywords and the
// names the catalog holds (readline.AutoCompleter).
type completer struct {
	// names returns the table and view names; it is called at each
	// completion so new tables are offered at once.
	names func() []string
}

// Do returns the endings of the candidates for the word that ends at pos,
// and the length of that word, as readline expects.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	if pos > len(line) {
		pos = len(line)
	}
	start := pos
	for start > 0 && isWordRune(line[start-1]) {
		start--
	}
	word := string(line[start:pos])
	if word == "" {
		return nil, 0
	}
	var out [][]rune
	for _, cand := range c.candidates(word) {
		out = append(out, []rune(cand[len(word):]))
	}
	return out, len([]rune(word))
}

// candidates lists the completions of word, sorted: names as the catalog
// spells them, keywords in the case of word (lower case if word is).
func (c completer) candidates(word string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if len(s) > len(word) && strings.EqualFold(s[:len(word)], word) && !seen[s] {
			seen[s] = true
			out = append(out, word+s[len(word):])
		}
	}
	if c.names != nil {
		for _, n := range c.names() {
			add(n)
		}
	}
	lower := strings.ToLower(word) == word
	for _, k := range keywords {
		if lower {
			k = strings.ToLower(k)
		}
		add(k)
	}
	sort.Strings(out)
	return out
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
