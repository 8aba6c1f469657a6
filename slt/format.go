package slt

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Value is one result cell as the engine returns it.
//
// Text is the engine's own text for the value (ignored when Null). The
// runner derives everything else from it: for a column declared 'I' or 'R'
// it parses Text as a number (so an engine may hand over "2.5", "2" or
// "1e3"), for other columns it uses Text as is. The engine's column kinds,
// returned by Query beside the rows, are used only for columns the query
// does not declare.
type Value struct {
	Text string
	Null bool
}

// Null is the NULL value.
var Null = Value{Null: true}

// Text returns a text value.
func Text(s string) Value { return Value{Text: s} }

// Int returns an integer value.
func Int(i int64) Value { return Value{Text: strconv.FormatInt(i, 10)} }

// Float returns a floating value, in Go's shortest representation.
func Float(f float64) Value { return Value{Text: strconv.FormatFloat(f, 'g', -1, 64)} }

// FormatValue formats v for a column of type typ ('I', 'R', 'T' or other)
// as SQLite's C runner does: NULL as "NULL"; for 'I' an integer (floating
// values truncated toward zero, true/false as 1/0); for 'R' "%.3f"; for
// anything else the text with "" as "(empty)" and control characters as
// '@'. Text that is no number in an 'I' or 'R' column is read as SQLite's
// sqlite3_column_int64 and sqlite3_column_double read a string: its
// leading number, 0 when there is none ('abc' is 0, '12abc' is 12, the
// empty string 0; in 'R' 0.000).
func FormatValue(v Value, typ byte) string {
	if v.Null {
		return "NULL"
	}
	s := strings.TrimSpace(v.Text)
	switch typ {
	case 'I':
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if f, ok := parseFloat(s); ok && f >= math.MinInt64 && f < math.MaxInt64 {
			return strconv.FormatInt(int64(f), 10)
		}
		if b, ok := parseBool(s); ok {
			return b
		}
		return strconv.FormatInt(leadingInt(s), 10)
	case 'R':
		if f, ok := parseFloat(s); ok {
			return fmt.Sprintf("%.3f", f)
		}
		if b, ok := parseBool(s); ok {
			return b + ".000"
		}
		return fmt.Sprintf("%.3f", leadingFloat(s))
	}
	return formatText(v.Text)
}

// leadingInt is the integer s starts with (after white space and a sign),
// 0 if none, saturated at the int64 range: SQLite's reading of text as an
// integer (sqlite3Atoi64).
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			n = math.MaxUint64
			break
		}
		n = n*10 + d
	}
	switch {
	case neg && n >= 1<<63:
		return math.MinInt64
	case neg:
		return -int64(n)
	case n > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(n)
}

// leadingFloat is the number s starts with, 0 if none: SQLite's reading of
// text as a REAL (sqlite3AtoF).
func leadingFloat(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	for end := len(s); end > 0; end-- {
		if f, ok := parseFloat(s[:end]); ok && !strings.ContainsAny(s[:end], "xXpP_") {
			return f
		}
	}
	return 0
}

// rsReal formats a value of an 'R' column of a file in the sqllogictest-rs
// dialect as PostgreSQL (and RisingWave) print a double: a float in the
// engine's (Java's) text, with a ".0" fraction or an exponent (6.0,
// 1.0E7), becomes the shortest text that reads back as the same number,
// without a fraction when it has none (6, 10000000), in exponent form
// outside 1e-4 .. 1e15 (1e+20, 1e-05). Other text stays as it is:
// integers, decimals (12.30), 1.5, NaN and Infinity.
func rsReal(v Value) string {
	if v.Null {
		return "NULL"
	}
	t := strings.TrimSpace(v.Text)
	if !strings.HasSuffix(t, ".0") && !strings.ContainsAny(t, "eE") {
		return rawValue(v)
	}
	f, ok := parseFloat(t)
	if !ok {
		return rawValue(v)
	}
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a < 1e-4 || a >= 1e15 {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// rawValue formats v in the engine's own text, mapping only NULL and the
// empty string, as sqllogictest-rs's drivers do.
func rawValue(v Value) string {
	if v.Null {
		return "NULL"
	}
	if v.Text == "" {
		return "(empty)"
	}
	return v.Text
}

func formatText(s string) string {
	if s == "" {
		return "(empty)"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '@'
		}
		return r
	}, s)
}

func parseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func parseBool(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "true":
		return "1", true
	case "false":
		return "0", true
	}
	return "", false
}

// HashValues returns the MD5, in hex, of every value followed by "\n", the
// hash the C runner prints as "N values hashing to H".
func HashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

var hashLine = regexp.MustCompile(`^\s*(\d+)\s+values?\s+hashing\s+to\s+([0-9a-fA-F]{32})\s*$`)

// parseHashLine recognises "N values hashing to H".
func parseHashLine(lines []string) (n int, hash string, ok bool) {
	if len(lines) != 1 {
		return 0, "", false
	}
	m := hashLine.FindStringSubmatch(lines[0])
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return n, strings.ToLower(m[2]), true
}

// columnTypes returns the type used to format each of n columns: the
// declared type, else the engine's kind, else 'T'.
func columnTypes(declared, engine string, n int) []byte {
	t := make([]byte, n)
	for i := range t {
		switch {
		case i < len(declared):
			t[i] = declared[i]
		case i < len(engine):
			t[i] = engine[i]
		default:
			t[i] = 'T'
		}
	}
	return t
}

func numColumns(declared string, rows [][]Value) int {
	if len(rows) > 0 {
		return len(rows[0])
	}
	return len(declared)
}

// formatRows formats each value of rows with f.
func formatRows(rows [][]Value, f func(v Value, col int) string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = f(v, j)
		}
	}
	return out
}

// sortRows orders rows as the C runner's rowsort does: column by column,
// by byte comparison of the formatted values.
func sortRows(rows [][]string) {
	slices.SortStableFunc(rows, slices.Compare[[]string])
}

// sortedValues flattens rows after applying mode (valuesort sorts the flat
// list, rowsort sorts the rows).
func sortedValues(rows [][]string, mode SortMode) []string {
	rs := slices.Clone(rows)
	if mode == RowSort {
		sortRows(rs)
	}
	var vals []string
	for _, r := range rs {
		vals = append(vals, r...)
	}
	if mode == ValueSort {
		slices.Sort(vals)
	}
	return vals
}

// normLine collapses runs of whitespace, as sqllogictest-rs compares rows.
func normLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// rowLines renders rows one per line, columns separated by a space.
func rowLines(rows [][]string, mode SortMode) []string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = normLine(strings.Join(r, " "))
	}
	return sortLines(lines, mode)
}

// sortLines applies mode to lines in the row-per-line layout: rowsort sorts
// the lines, valuesort sorts every whitespace-separated token.
func sortLines(lines []string, mode SortMode) []string {
	switch mode {
	case RowSort:
		lines = slices.Clone(lines)
		slices.Sort(lines)
	case ValueSort:
		var toks []string
		for _, l := range lines {
			toks = append(toks, strings.Fields(l)...)
		}
		slices.Sort(toks)
		lines = toks
	}
	return lines
}

// comparison is the outcome of checking a query result.
type comparison struct {
	ok   bool
	got  string // the result, rendered for a failure message
	hash string // hash of the C-formatted, sorted values (for labels)
	note string // extra explanation for a failure
}

// compareResult checks rows against the expected lines of a query, in the
// dialect of the file the query is in.
func compareResult(q *Record, mode SortMode, engineTypes string, rows [][]Value, d Dialect) comparison {
	n := numColumns(q.Types, rows)
	types := columnTypes(q.Types, engineTypes, n)
	cRows := formatRows(rows, func(v Value, col int) string {
		t := byte('T')
		if col < len(types) {
			t = types[col]
		}
		return FormatValue(v, t)
	})
	cVals := sortedValues(cRows, mode)
	res := comparison{hash: HashValues(cVals)}
	if q.Types != "" && len(rows) > 0 && len(q.Types) != n {
		res.note = fmt.Sprintf("query declares %d columns (%s), result has %d", len(q.Types), q.Types, n)
	}

	if wantN, wantHash, ok := parseHashLine(q.Expected); ok {
		res.ok = wantN == len(cVals) && wantHash == res.hash
		res.got = fmt.Sprintf("%d values hashing to %s", len(cVals), res.hash)
		if !res.ok {
			res.got += "\n" + strings.Join(limitLines(cVals, 200), "\n")
		}
		return res
	}

	// Candidate renderings of the result, compared in turn with the
	// expected lines.
	rawRows := formatRows(rows, func(v Value, col int) string {
		if d == DialectRS && col < len(q.Types) && q.Types[col] == 'R' {
			return rsReal(v)
		}
		return rawValue(v)
	})
	type candidate struct {
		got, want []string
	}
	var cands []candidate

	// SQLite's layout: one value per line. The expected values are grouped
	// into rows of n values and sorted as the result is.
	wantVals := make([]string, len(q.Expected))
	for i, l := range q.Expected {
		wantVals[i] = strings.TrimSpace(l)
	}
	if n > 0 && len(wantVals)%n == 0 {
		var wantRows [][]string
		for i := 0; i < len(wantVals); i += n {
			wantRows = append(wantRows, wantVals[i:i+n])
		}
		cands = append(cands, candidate{cVals, sortedValues(wantRows, mode)})
	} else {
		cands = append(cands, candidate{cVals, wantVals})
	}

	// sqllogictest-rs's layout: one row per line.
	wantLines := make([]string, len(q.Expected))
	for i, l := range q.Expected {
		wantLines[i] = normLine(l)
	}
	wantLines = sortLines(wantLines, mode)
	cands = append(cands,
		candidate{rowLines(cRows, mode), wantLines},
		candidate{rowLines(rawRows, mode), wantLines})

	best, bestScore := 0, -1
	for i, c := range cands {
		if slices.Equal(c.got, c.want) {
			res.ok = true
			return res
		}
		if s := overlap(c.got, c.want); s > bestScore {
			best, bestScore = i, s
		}
	}
	res.got = strings.Join(limitLines(cands[best].got, 1000), "\n")
	return res
}

// overlap counts the lines two lists have in common (as multisets); used
// to pick the rendering closest to what the test expects for a failure
// message.
func overlap(a, b []string) int {
	m := make(map[string]int, len(a))
	for _, s := range a {
		m[s]++
	}
	n := 0
	for _, s := range b {
		if m[s] > 0 {
			m[s]--
			n++
		}
	}
	return n
}

func limitLines(lines []string, max int) []string {
	if len(lines) <= max {
		return lines
	}
	out := slices.Clone(lines[:max])
	return append(out, fmt.Sprintf("... (%d more)", len(lines)-max))
}
