package sql

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// This file holds the rewrites that make Flink SQL text acceptable to the
// TiDB (MySQL) parser. Each rewrite is an edit of the script text; the
// offset map built with the edits moves every position the TiDB parser
// reports back onto the text the user wrote. Most edits keep the length
// (padding with spaces), so text outside them does not move at all.

// rewrites returns the edits for the tokens [lo, hi), and records in
// p.meta what they hide from the TiDB parser:
//
//   - CAST(x AS <Flink type>): the type becomes MySQL's nearest (CastTarget);
//     TRY_CAST becomes CAST (IsTryCast);
//   - VALUES (1, 2), (3, 4) becomes VALUES ROW(1, 2), ROW(3, 4);
//   - INTERVAL '5' SECONDS becomes singular, PostgreSQL's INTERVAL
//     '5 minutes' becomes INTERVAL '5' MINUTE, MINUTE TO SECOND becomes
//     MINUTE_SECOND, and an interval where MySQL allows none (a function
//     argument) becomes the call INTERVAL('5', 'SECOND') (IntervalOf);
//   - TABLE(TUMBLE(...)) and the other window functions become a
//     placeholder table name (WindowOf), and so does RisingWave's
//     FROM TUMBLE(t, ts, size) / FROM HOP(t, ts, slide, size);
//   - FULL [OUTER] JOIN becomes STRAIGHT_JOIN, turned into a join of type
//     FullJoin after parsing;
//   - a IS NOT DISTINCT FROM b becomes a <=> b, and a IS DISTINCT FROM b
//     becomes a <=> b, turned into NOT (a <=> b) after parsing;
//   - t FOR SYSTEM_TIME AS OF e (temporal join) is blanked and t renamed to
//     a placeholder; after parsing the table gets its name back and AsOf.TsExpr
//     holds e; the options of a t /*+ OPTIONS(...) */ hint go the same way
//     (TableOptions);
//   - a == b (Arroyo's equality) becomes a = b;
//   - a column list after an alias of FROM (AS t(c1, c2)) is blanked and
//     the alias renamed to a placeholder; after parsing the alias gets its
//     name back and the list is filed under its table reference
//     (AliasColumns);
//   - FLOOR(t TO unit) becomes FLOOR(t, 'UNIT') (CEIL too), OVERLAY(s
//     PLACING r FROM a FOR n) becomes OVERLAY(s, r, a, n), and x BETWEEN
//     SYMMETRIC a AND b loses SYMMETRIC, turned into (x BETWEEN a AND b) OR
//     (x BETWEEN b AND a) after parsing (symmetricAt), (a, b) OVERLAPS
//     (c, d) becomes the call OVERLAPS(a, b, c, d), and SIMILAR TO becomes
//     LIKE (IsSimilar);
//   - s IS [NOT] JSON [kind] becomes s [NOT] LIKE 'KIND', turned into
//     the call "IS JSON"(s, 'KIND') after parsing (jsonAt), and the
//     clauses of the JSON functions become literal arguments (json.go);
//   - GROUPING SETS (...), ROLLUP (...) and CUBE (...) become calls of
//     functions of ours (grouping_sets.go);
//   - names MySQL reserves but Flink does not (key, index, ...) get
//     backquotes;
//   - x::type becomes CAST(x AS type), x IN () becomes x IN (NULL) with
//     the list emptied after parsing, ORDER BY x NULLS FIRST becomes
//     ORDER BY __nulls_first(x) (NullsFirst), and a CTE named like a
//     built-in (WITH max (a) AS ...) gets backquotes (rewrite_pg.go).
func (p *stmtParser) rewrites(lo, hi int) ([]edit, *Error) {
	var edits, opens []edit
	toks := p.sc.toks
	notes := map[int]*tableNote{} // by the index of a table name's first token
	castEnds := map[int]int{}     // x::type: the type's last token -> x's first
	sortEdits := false
	for i := lo; i < hi; i++ {
		t := toks[i]
		if t.isName() && (i+1 >= hi || !toks[i+1].isPunct(".")) && len(p.sc.comments) > 0 {
			if c, ok := p.hintAfter(i, hi); ok {
				opts, ok, err := p.tableHint(c)
				if err != nil {
					return nil, err
				}
				if ok {
					n := p.note(p.nameStart(lo, i), i, notes, &edits)
					n.options = append(n.options, opts...)
				}
			}
		}
		if t.is("SELECT") && len(p.sc.comments) > 0 {
			if c, ok := p.hintAfter(i, hi); ok {
				if err := p.queryHint(c, i, hi); err != nil {
					return nil, err
				}
			}
		}
		if t.isPunct("==") {
			// a == b (Arroyo's and DataFusion's equality) is a = b.
			edits = append(edits, edit{t.off, t.end, "= "})
			continue
		}
		if t.isPunct("::") {
			last, err := p.pgCast(lo, i, hi, castEnds, &edits)
			if err != nil {
				return nil, err
			}
			i = last
			continue
		}
		if t.isPunct("#") {
			// The TiDB parser would take it for a MySQL comment and skip
			// the rest of the line.
			return nil, p.errAt(t.off, "unexpected character '#'")
		}
		if t.kind != tokIdent {
			continue
		}
		if p.meta.skipAt[t.off] {
			continue // rewritten with the call around it
		}
		up := strings.ToUpper(t.val)
		next := token{kind: -1}
		if i+1 < hi {
			next = toks[i+1]
		}
		switch {
		case up == "AS" && i+2 < hi && toks[i+2].isPunct("("):
			// FROM (VALUES ...) AS t(c1, c2) (alias_columns.go).
			if es, c := p.aliasColumns(lo, i, hi); c >= 0 {
				edits = append(edits, es...)
				i = c
			}
		case (up == "TUMBLE" || up == "HOP") && next.isPunct("("):
			// RisingWave's FROM TUMBLE(t, ts, size) (window_rw.go).
			if c := p.rwWindowCall(lo, i, hi); c >= 0 {
				e, err := p.rewriteRWWindow(i, c)
				if err != nil {
					return nil, err
				}
				edits = append(edits, e)
				i = c
			}
		case up == "TABLE":
			if c := p.windowCall(i, hi); c >= 0 {
				e, err := p.rewriteWindow(i, c)
				if err != nil {
					return nil, err
				}
				edits = append(edits, e)
				i = c
			}
		case (up == "CAST" || up == "TRY_CAST") && next.isPunct("("):
			e, err := p.rewriteCast(i)
			if err != nil {
				return nil, err
			}
			if up == "TRY_CAST" {
				edits = append(edits, edit{t.off, t.end, "CAST"})
				p.meta.tryCastAt[t.off] = true
			}
			if e != nil {
				edits = append(edits, *e)
			}
		case up == "VALUES" && next.isPunct("("):
			j := i + 1
			for j < hi && toks[j].isPunct("(") {
				edits = append(edits, edit{toks[j].off, toks[j].off, " ROW"})
				c := p.closing(j)
				if c+2 < hi && toks[c+1].isPunct(",") && toks[c+2].isPunct("(") {
					j = c + 2
					continue
				}
				break
			}
		case up == "INTERVAL":
			sub := p.sub(i, hi)
			iv, err := sub.interval()
			if err != nil {
				if v := i + 1; v < hi && toks[v].kind == tokString && hasLetter(toks[v].val) {
					return nil, err // a Postgres interval string we cannot read
				}
				continue // not Flink's form; the TiDB parser will judge
			}
			last := sub.i - 1
			p.meta.intervalAt[t.off] = iv
			v := i + 1
			if toks[v].isPunct("-") {
				v++
			}
			p.meta.intervalAt[toks[v].off] = iv
			if p.intervalNeedsCall(i, last, lo, hi) {
				edits = append(edits, edit{t.off, toks[last].end,
					"INTERVAL('" + strings.ReplaceAll(iv.Value, "'", "''") + "', '" + iv.Unit + "')"})
				i = last
				continue
			}
			unit := strings.ReplaceAll(iv.Unit, " TO ", "_")
			if last == v {
				// INTERVAL '20 seconds': the unit comes out of the string.
				edits = append(edits, edit{toks[v].off, toks[v].end,
					"'" + strings.ReplaceAll(iv.Value, "'", "''") + "' " + unit})
				i = last
				continue
			}
			from, to := toks[v+1].off, toks[last].end
			if !strings.EqualFold(p.sc.text[from:to], unit) {
				edits = append(edits, edit{from, to, pad(unit, to-from)})
			}
			i = last
		case up == "FULL" && (next.is("JOIN") || (next.is("OUTER") && i+2 < hi && toks[i+2].is("JOIN"))):
			j := i + 1
			if next.is("OUTER") {
				j++
			}
			edits = append(edits, edit{t.off, toks[j].end, pad("STRAIGHT_JOIN", toks[j].end-t.off)})
			i = j
		case up == "IS" && (next.is("JSON") || (next.is("NOT") && i+2 < hi && toks[i+2].is("JSON"))):
			// s IS [NOT] JSON [kind] (json.go).
			if last := p.isJSON(i, hi, &edits); last >= 0 {
				i = last
			}
		case (up == "JSON_EXISTS" || up == "JSON_VALUE" || up == "JSON_QUERY" || up == "JSON_OBJECT" || up == "JSON_ARRAY" || up == "JSON_OBJECTAGG" || up == "JSON_ARRAYAGG") && next.isPunct("("):
			// The clauses of the JSON functions (json.go).
			var js []edit
			var err *Error
			switch up {
			case "JSON_OBJECT", "JSON_ARRAY":
				err = p.jsonConstructor(up, i, &js)
			case "JSON_OBJECTAGG", "JSON_ARRAYAGG":
				err = p.jsonAggCall(up, i, &js)
			default:
				err = p.jsonQueryCall(up, i, &js)
			}
			if err != nil {
				return nil, err
			}
			p.skipEdited(i+1, js)
			edits = append(edits, js...)
			sortEdits = true
		case up == "IS" && (next.is("DISTINCT") || (next.is("NOT") && i+2 < hi && toks[i+2].is("DISTINCT"))):
			j := i + 2
			if next.is("NOT") {
				j++
			}
			if j >= hi || !toks[j].is("FROM") {
				continue
			}
			edits = append(edits, edit{t.off, toks[j].end, pad("<=>", toks[j].end-t.off)})
			if !next.is("NOT") && j+1 < hi {
				p.meta.distinctAt[toks[j+1].off] = true
			}
			i = j
		case up == "FOR" && i > lo && toks[i-1].isName() && i+3 < hi && next.is("SYSTEM_TIME") && toks[i+2].is("AS") && toks[i+3].is("OF"):
			if err := p.rewriteAsOf(lo, i, hi, notes, &edits); err != nil {
				return nil, err
			}
			i = p.asOfEnd(i+4, hi) - 1
		case up == "FILTER" && next.isPunct("(") && i+2 < hi && toks[i+2].is("WHERE"):
			// agg(args) FILTER (WHERE cond) becomes FilterFunc(agg(args), cond):
			// a call opened before the aggregate's name, ", " for
			// "FILTER (WHERE", and the clause's ')' closing it. cond stays
			// where it was written.
			name := p.filteredCall(lo, i)
			if name < 0 {
				e := p.errAt(t.off, "FILTER (WHERE ...) must follow an aggregate call")
				e.Hint = "write agg(x) FILTER (WHERE cond), as COUNT(*) FILTER (WHERE v > 0)"
				return nil, e
			}
			edits = append(edits, edit{toks[name].off, toks[name].off, FilterFunc + "("})
			edits = append(edits, edit{t.off, toks[i+2].end, pad(",", toks[i+2].end-t.off)})
			i += 2
		case (up == "FIRST_VALUE" || up == "LAST_VALUE") && next.isPunct("(") && !p.overFollows(i+1):
			// The aggregate (no OVER): MySQL knows only the window function.
			fn := FirstValueFunc
			if up == "LAST_VALUE" {
				fn = LastValueFunc
			}
			edits = append(edits, edit{t.off, t.end, fn})
		case up == "NULLS" && (next.is("FIRST") || next.is("LAST")):
			if err := p.nullsOrder(lo, i, &opens, &edits); err != nil {
				return nil, err
			}
			i++
		case up == "ORDER" && next.is("BY"):
			if err := p.orderInCall(lo, i); err != nil {
				return nil, err
			}
		case up == "WITHIN" && next.is("GROUP") && i > lo && toks[i-1].isPunct(")"):
			e := p.errAt(t.off, "WITHIN GROUP (ORDER BY ...) is not supported")
			e.Hint = "LISTAGG takes the rows in the order they arrive, as in Flink"
			return nil, e
		case up == "IN" && next.isPunct("(") && i+2 < hi && toks[i+2].isPunct(")"):
			p.emptyIn(i, &edits)
			i += 2
		case builtinFuncNames[up] && next.isPunct("(") && p.cteName(lo, i, hi):
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		case (up == "LATERAL" && next.is("TABLE")) || (up == "UNNEST" && next.isPunct("(")) || up == "MATCH_RECOGNIZE":
			w := up
			if up == "LATERAL" {
				w = "LATERAL TABLE"
			}
			return nil, p.errAt(t.off, "%s is not supported", w)
		case up == "STRAIGHT_JOIN":
			return nil, p.errAt(t.off, "STRAIGHT_JOIN is not supported")
		case up == "ROW" && next.isPunct("(") && !(i > lo && (toks[i-1].is("VALUES") || toks[i-1].isPunct(","))) && p.singleArg(i+1, hi):
			e := p.errAt(t.off, "ROW(x) with one value is not supported")
			e.Hint = "the row constructor takes two or more values; a ROW of one field cannot be built in SQL yet"
			return nil, e
		case (up == "ROWS" && !p.rowsKeyword(i, lo, hi)) || (up == "WINDOW" && !p.windowKeyword(i, hi)):
			// Names in Arroyo's queries (count(*) AS rows, ... AS window).
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		case quotedReserved[up] && !next.isPunct("(") && next.kind != tokString:
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		case (up == "FLOOR" || up == "CEIL" || up == "CEILING") && next.isPunct("("):
			// FLOOR(t TO unit) becomes FLOOR(t, 'UNIT') (CEIL too).
			c := p.closing(i + 1)
			if to := p.atDepthOne(i+1, c, "TO"); len(to) == 1 && to[0]+2 == c && toks[to[0]+1].kind == tokIdent {
				j := to[0]
				edits = append(edits, edit{toks[j].off, toks[j+1].end, ", '" + strings.ToUpper(toks[j+1].val) + "'"})
				p.meta.skipAt[toks[j].off], p.meta.skipAt[toks[j+1].off] = true, true
			}
		case up == "OVERLAY" && next.isPunct("("):
			// OVERLAY(s PLACING r FROM a [FOR n]) becomes OVERLAY(s, r, a[, n]).
			c := p.closing(i + 1)
			for _, j := range p.atDepthOne(i+1, c, "PLACING", "FROM", "FOR") {
				edits = append(edits, edit{toks[j].off, toks[j].end, pad(",", toks[j].end-toks[j].off)})
				p.meta.skipAt[toks[j].off] = true
			}
		case up == "SIMILAR" && next.is("TO") && i+2 < hi:
			// x [NOT] SIMILAR TO p [ESCAPE e] is a LIKE for which IsSimilar
			// holds.
			edits = append(edits, edit{t.off, next.end, pad("LIKE", next.end-t.off)})
			p.meta.similarAt[toks[i+2].off] = true
			i++
		case up == "BETWEEN" && (next.is("SYMMETRIC") || next.is("ASYMMETRIC")):
			// x BETWEEN SYMMETRIC a AND b becomes (x BETWEEN a AND b) OR
			// (x BETWEEN b AND a) after parsing (symmetricAt); ASYMMETRIC
			// is the plain BETWEEN.
			edits = append(edits, edit{next.off, next.end, pad("", next.end-next.off)})
			if next.is("SYMMETRIC") && i+2 < hi {
				p.meta.symmetricAt[toks[i+2].off] = true
			}
			i++
		case up == "OVERLAPS" && i > lo && toks[i-1].isPunct(")") && next.isPunct("("):
			// (s0, x0) OVERLAPS (s1, x1) becomes the call OVERLAPS(s0, x0, s1, x1).
			open := p.opening(lo, i-1)
			if open < 0 {
				continue
			}
			edits = append(edits, edit{toks[open].off, toks[open].off, "`OVERLAPS`"})
			edits = append(edits, edit{toks[i-1].off, next.end, pad(",", next.end-toks[i-1].off)})
			i++
		case up == "GROUPING" && next.is("SETS"):
			// GROUP BY GROUPING SETS (...) (grouping_sets.go); the
			// elements inside are rewritten by the cases below.
			if es, c := p.groupingSets(i, hi); c >= 0 {
				edits = append(edits, es...)
				i++
			}
		case (up == "ROLLUP" || up == "CUBE") && next.isPunct("("):
			fn := RollupFunc
			if up == "CUBE" {
				fn = CubeFunc
			}
			edits = append(edits, edit{t.off, t.end, fn})
		case (up == "REGEXP" || up == "SPLIT") && next.isPunct("("):
			// Flink's functions REGEXP(s, pattern) and SPLIT(s, sep); an
			// infix operator and a keyword to MySQL.
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		case up == "SESSION" && next.isPunct("("):
			// Flink's group window SESSION(ts, gap); a keyword to MySQL.
			edits = append(edits, edit{t.off, t.end, "`" + t.val + "`"})
		}
	}
	// The calls opened for NULLS FIRST/LAST enclose whatever else starts
	// at their offset (the CAST( of x::type).
	out := append(opens, edits...)
	if sortEdits {
		// The edits of a JSON function's clauses come before those of
		// the calls inside it.
		sort.SliceStable(out, func(a, b int) bool { return out[a].off < out[b].off })
	}
	return out, nil
}

// opening returns the index of the '(' that toks[close] closes, or -1.
func (p *stmtParser) opening(lo, close int) int {
	depth := 0
	for j := close; j >= lo; j-- {
		switch {
		case p.sc.toks[j].isPunct(")"):
			depth++
		case p.sc.toks[j].isPunct("("):
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// atDepthOne returns the indexes of the keywords kws found directly inside
// the parentheses toks[open] .. toks[close], not nested deeper.
func (p *stmtParser) atDepthOne(open, close int, kws ...string) []int {
	var out []int
	depth := 0
	for j := open + 1; j < close; j++ {
		t := p.sc.toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.kind == tokIdent:
			for _, kw := range kws {
				if t.is(kw) {
					out = append(out, j)
				}
			}
		}
	}
	return out
}

// FilterFunc is the function the TiDB parser sees for FILTER (WHERE cond)
// on an aggregate: FilterFunc(agg(args), cond); FirstValueFunc and
// LastValueFunc those it sees for the aggregates FIRST_VALUE(x) and
// LAST_VALUE(x) (without OVER). ExprPos of the FilterFunc call is the
// aggregate's name.
const (
	FilterFunc     = "__agg_filter"
	FirstValueFunc = "__first_value"
	LastValueFunc  = "__last_value"
)

// filteredCall returns the index of the name of the call that ends just
// before toks[i] (FILTER), or -1 when no call does.
func (p *stmtParser) filteredCall(lo, i int) int {
	toks := p.sc.toks
	if i-1 < lo || !toks[i-1].isPunct(")") {
		return -1
	}
	depth := 0
	for j := i - 1; j >= lo; j-- {
		switch {
		case toks[j].isPunct(")"):
			depth++
		case toks[j].isPunct("("):
			depth--
			if depth == 0 {
				if j-1 >= lo && toks[j-1].isName() {
					return j - 1
				}
				return -1
			}
		}
	}
	return -1
}

// overFollows reports whether the call whose '(' is toks[open] is followed
// by OVER (a window function).
func (p *stmtParser) overFollows(open int) bool {
	c := p.closing(open)
	return c >= 0 && c+1 < p.hi && p.sc.toks[c+1].is("OVER")
}

// quotedReserved are words MySQL reserves but Flink lets users write as
// names; in queries they are always names, so they are quoted for the TiDB
// parser.
var quotedReserved = map[string]bool{
	"KEY": true, "KEYS": true, "INDEX": true, "READ": true, "CHANGE": true,
	"OPTION": true, "USAGE": true, "SCHEMA": true, "DATABASE": true,
	"REQUIRE": true, "LOCK": true, "FORCE": true, "USE": true, "MAXVALUE": true,
}

// rowsKeyword reports whether ROWS at toks[i] is the keyword: it starts a
// window frame (ROWS BETWEEN, ROWS UNBOUNDED PRECEDING, ROWS 5 PRECEDING,
// ROWS CURRENT ROW) or counts rows (FETCH FIRST 5 ROWS). Elsewhere it is a
// name.
func (p *stmtParser) rowsKeyword(i, lo, hi int) bool {
	toks := p.sc.toks
	if i+1 < hi {
		n := toks[i+1]
		if n.is("BETWEEN") || n.is("UNBOUNDED") || n.is("CURRENT") || n.kind == tokNumber {
			return true
		}
	}
	return i > lo && toks[i-1].kind == tokNumber
}

// windowKeyword reports whether WINDOW at toks[i] starts a named window
// clause (WINDOW w AS (...)); elsewhere it is a name.
func (p *stmtParser) windowKeyword(i, hi int) bool {
	toks := p.sc.toks
	return i+2 < hi && toks[i+1].isName() && toks[i+2].is("AS")
}

// pad returns s padded with spaces to n bytes (s itself if it is longer).
// singleArg reports whether the parenthesis at open holds one value (no
// comma at its top level).
func (p *stmtParser) singleArg(open, hi int) bool {
	toks := p.sc.toks
	depth := 0
	for j := open; j < hi; j++ {
		switch {
		case toks[j].isPunct("("):
			depth++
		case toks[j].isPunct(")"):
			if depth--; depth == 0 {
				return j > open+1
			}
		case depth == 1 && toks[j].isPunct(","):
			return false
		}
	}
	return false
}

func pad(s string, n int) string {
	if len(s) < n {
		s += strings.Repeat(" ", n-len(s))
	}
	return s
}

// intervalNeedsCall reports whether the interval literal toks[i..last]
// stands where the MySQL grammar has no place for one. MySQL takes
// intervals in date arithmetic (ts - INTERVAL ..., INTERVAL ... + ts), in
// DATE_ADD/DATE_SUB and in window frames (RANGE INTERVAL ... PRECEDING).
func (p *stmtParser) intervalNeedsCall(i, last, lo, hi int) bool {
	toks := p.sc.toks
	if i > lo && (toks[i-1].isPunct("+") || toks[i-1].isPunct("-")) {
		return false
	}
	if last+1 < hi {
		n := toks[last+1]
		if n.isPunct("+") || n.is("PRECEDING") || n.is("FOLLOWING") {
			return false
		}
	}
	if i > lo && toks[i-1].isPunct(",") {
		depth := 0
		for j := i - 1; j >= lo; j-- {
			switch {
			case toks[j].isPunct(")"):
				depth++
			case toks[j].isPunct("("):
				if depth == 0 {
					if j > lo {
						switch strings.ToUpper(toks[j-1].val) {
						case "DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE":
							return false
						}
					}
					return true
				}
				depth--
			}
		}
	}
	return true
}

// rewriteCast handles CAST(expr AS type) at toks[i]: MySQL's CAST accepts
// only a few target types (SIGNED, CHAR, DATETIME, ...), so the Flink type
// is recorded for CastTarget and replaced by the closest MySQL one.
func (p *stmtParser) rewriteCast(i int) (*edit, *Error) {
	toks := p.sc.toks
	c := p.closing(i + 1)
	if c >= p.hi {
		return nil, nil // let the TiDB parser report it
	}
	as := -1
	depth := 0
	for j := i + 2; j < c; j++ {
		switch {
		case toks[j].isPunct("("):
			depth++
		case toks[j].isPunct(")"):
			depth--
		case depth == 0 && toks[j].is("AS"):
			as = j
		}
	}
	if as < 0 || as+1 >= c {
		return nil, nil
	}
	sub := p.sub(as+1, c)
	tn, err := sub.typeName()
	if err != nil {
		return nil, err
	}
	if !sub.atEnd() {
		return nil, sub.unexpected("expected ')' after the type")
	}
	p.meta.castAt[toks[i].off] = tn
	mysql, ok := mysqlCastType(tn)
	if !ok {
		e := p.errAt(toks[as+1].off, "cannot CAST to type %s", tn.Name)
		e.Hint = "use BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), CHAR(n), VARCHAR(n), STRING, BYTES, DATE, TIME or TIMESTAMP(p)"
		return nil, e
	}
	from, to := toks[as+1].off, toks[c-1].end
	if strings.EqualFold(p.sc.text[from:to], mysql) {
		return nil, nil
	}
	return &edit{from, to, pad(mysql, to-from)}, nil
}

// mysqlCastType is the MySQL CAST type standing in for t.
func mysqlCastType(t TypeName) (string, bool) {
	switch t.Name {
	case "BOOLEAN", "BOOL", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT":
		return "SIGNED", true
	case "BIGINT UNSIGNED", "INT UNSIGNED", "UNSIGNED":
		return "UNSIGNED", true
	case "FLOAT":
		return "FLOAT", true
	case "DOUBLE", "DOUBLE PRECISION", "REAL":
		return "DOUBLE", true
	case "DECIMAL", "DEC", "NUMERIC":
		s := "DECIMAL"
		switch len(t.Args) {
		case 1:
			s += "(" + itoa(t.Args[0]) + ")"
		case 2:
			s += "(" + itoa(t.Args[0]) + "," + itoa(t.Args[1]) + ")"
		}
		return s, true
	case "CHAR", "CHARACTER", "VARCHAR", "CHARACTER VARYING", "STRING", "TEXT":
		return "CHAR", true
	case "BYTES", "BINARY", "VARBINARY", "BLOB":
		return "BINARY", true
	case "DATE":
		return "DATE", true
	case "TIME", "TIME WITHOUT TIME ZONE":
		return "TIME", true
	case "TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP_LTZ",
		"TIMESTAMP WITH LOCAL TIME ZONE", "DATETIME":
		if len(t.Args) == 1 && t.Args[0] <= 6 {
			return "DATETIME(" + itoa(t.Args[0]) + ")", true
		}
		return "DATETIME", true
	}
	return "", false
}

// parseQuery parses the tokens from i to the end of the statement as a
// query (SELECT, set operations, VALUES, WITH).
func (p *stmtParser) parseQuery(i int) (ast.ResultSetNode, *Error) {
	if i >= p.hi {
		p.i = i
		return nil, p.unexpected("expected a query")
	}
	edits, err := p.rewrites(i, p.hi)
	if err != nil {
		return nil, err
	}
	emit, err := p.emitClause(i)
	if err != nil {
		return nil, err
	}
	if emit != nil {
		edits = append(edits, *emit)
	}
	text, m := p.sc.rewrite(p.sc.toks[i].off, p.end, "", edits)
	st, err := p.tidbParse(text, m)
	if err != nil {
		return nil, err
	}
	switch q := st.(type) {
	case *ast.SelectStmt:
		return q, nil
	case *ast.SetOprStmt:
		return q, nil
	}
	return nil, p.errAt(p.sc.toks[i].off, "expected a query (SELECT, VALUES or WITH)")
}

// parseExpr parses the tokens [lo, hi) as one expression.
func (p *stmtParser) parseExpr(lo, hi int) (ast.ExprNode, *Error) {
	if lo >= hi {
		p.i = lo
		return nil, p.unexpected("expected an expression")
	}
	edits, err := p.rewrites(lo, hi)
	if err != nil {
		return nil, err
	}
	from := p.sc.toks[lo].off
	text, m := p.sc.rewrite(from, p.sc.toks[hi-1].end, "SELECT ", edits)
	st, err := p.tidbParse(text, m)
	if err != nil {
		return nil, err
	}
	sel, ok := st.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 ||
		sel.Fields.Fields[0].Expr == nil || sel.Fields.Fields[0].AsName.O != "" {
		return nil, p.errAt(from, "expected one expression")
	}
	return sel.Fields.Fields[0].Expr, nil
}

// tableNote is what the rewrites hid about a table reference: the time
// attribute of t FOR SYSTEM_TIME AS OF expr and the options of a
// t /*+ OPTIONS('k'='v') */ hint. The table's name is replaced by a
// placeholder in the text given to the TiDB parser; the AST walk gives it
// back and files the note under the *ast.TableName.
type tableNote struct {
	schema, name string
	asOf         ast.ExprNode
	options      []Option
}

const tablePlaceholder = "__table_"

// note returns the note of the table whose (possibly qualified) name spans
// toks[k..j], creating it and the placeholder edit on first use.
func (p *stmtParser) note(k, j int, notes map[int]*tableNote, edits *[]edit) *tableNote {
	if n, ok := notes[k]; ok {
		return n
	}
	toks := p.sc.toks
	var parts []string
	for x := k; x <= j; x += 2 {
		parts = append(parts, toks[x].val)
	}
	n := &tableNote{name: parts[len(parts)-1]}
	if len(parts) > 1 {
		n.schema = strings.Join(parts[:len(parts)-1], ".")
	}
	name := tablePlaceholder + itoa(len(p.meta.tableAt))
	p.meta.tableAt[name] = n
	notes[k] = n
	*edits = append(*edits, edit{toks[k].off, toks[j].end, name})
	return n
}

// nameStart returns the index of the first token of the qualified name
// ending at toks[j].
func (p *stmtParser) nameStart(lo, j int) int {
	toks := p.sc.toks
	k := j
	for k-2 >= lo && toks[k-1].isPunct(".") && toks[k-2].isName() {
		k -= 2
	}
	return k
}

// rewriteAsOf handles name FOR SYSTEM_TIME AS OF expr, where toks[i] is
// FOR: the expression is parsed on its own and the clause blanked.
func (p *stmtParser) rewriteAsOf(lo, i, hi int, notes map[int]*tableNote, edits *[]edit) *Error {
	toks := p.sc.toks
	end := p.asOfEnd(i+4, hi)
	if end == i+4 {
		sub := p.sub(i+4, hi)
		return sub.unexpected("expected the time attribute, e.g. FOR SYSTEM_TIME AS OF o.proc_time")
	}
	expr, err := p.parseExpr(i+4, end)
	if err != nil {
		return err
	}
	n := p.note(p.nameStart(lo, i-1), i-1, notes, edits)
	n.asOf = expr
	*edits = append(*edits, edit{toks[i].off, toks[end-1].end, pad("", toks[end-1].end-toks[i].off)})
	return nil
}

// hintAfter returns the /*+ ... */ comment right after toks[j], if any.
func (p *stmtParser) hintAfter(j, hi int) (span, bool) {
	next := len(p.sc.text)
	if j+1 < len(p.sc.toks) {
		next = p.sc.toks[j+1].off
	}
	from := p.sc.toks[j].end
	i := sort.Search(len(p.sc.comments), func(i int) bool { return p.sc.comments[i].off >= from })
	if i < len(p.sc.comments) {
		c := p.sc.comments[i]
		if c.end <= next && strings.HasPrefix(p.sc.text[c.off:], "/*+") {
			return c, true
		}
	}
	return span{}, false
}

// tableHint parses the OPTIONS('k'='v', ...) of a table hint comment; other
// hints are ignored, as Flink ignores hints it does not know.
func (p *stmtParser) tableHint(c span) ([]Option, bool, *Error) {
	body := p.sc.text[c.off+3 : c.end-2]
	base := c.off + 3
	toks := lex(body).toks
	if len(toks) == 0 || !toks[0].is("OPTIONS") {
		return nil, false, nil
	}
	bad := func(k int, what string) *Error {
		off := c.end - 2
		if k < len(toks) {
			off = base + toks[k].off
		}
		e := p.errAt(off, "syntax error in OPTIONS hint")
		e.Hint = "expected " + what + ", as in /*+ OPTIONS('scan.startup.mode'='earliest-offset') */"
		return e
	}
	if len(toks) < 2 || !toks[1].isPunct("(") {
		return nil, false, bad(1, "'('")
	}
	var opts []Option
	k := 2
	for k < len(toks) && !toks[k].isPunct(")") {
		if toks[k].kind != tokString {
			return nil, false, bad(k, "a quoted option key")
		}
		if k+2 >= len(toks) || !toks[k+1].isPunct("=") || toks[k+2].kind != tokString {
			return nil, false, bad(k+1, "= and a quoted value")
		}
		opts = append(opts, Option{Key: toks[k].val, Value: toks[k+2].val, Pos: p.sc.pos(base + toks[k].off)})
		k += 3
		if k < len(toks) && toks[k].isPunct(",") {
			k++
		}
	}
	if k >= len(toks) {
		return nil, false, bad(k, "')'")
	}
	return opts, true, nil
}

// asOfEnd returns the end (exclusive token index) of the expression after
// FOR SYSTEM_TIME AS OF starting at toks[i]: operands and operators
// alternate, so an identifier where an operator would come (an alias) or a
// keyword such as ON ends it.
func (p *stmtParser) asOfEnd(i, hi int) int {
	toks := p.sc.toks
	depth := 0
	operand := true // an operand is expected next
	for j := i; j < hi; j++ {
		t := toks[j]
		if depth > 0 {
			if t.isPunct("(") {
				depth++
			} else if t.isPunct(")") {
				depth--
			}
			continue
		}
		switch {
		case t.isPunct("("):
			depth++
			operand = false
		case t.isPunct(")") || t.isPunct(",") || t.isPunct(";"):
			return j
		case t.kind == tokPunct:
			operand = true
		case operand && !(t.kind == tokIdent && asOfStop[strings.ToUpper(t.val)]):
			operand = false
		default:
			return j
		}
	}
	return hi
}

// asOfStop are the keywords that cannot start the AS OF expression.
var asOfStop = map[string]bool{
	"AS": true, "ON": true, "USING": true, "WHERE": true, "JOIN": true,
	"LEFT": true, "RIGHT": true, "INNER": true, "FULL": true, "CROSS": true,
	"GROUP": true, "ORDER": true, "LIMIT": true, "UNION": true, "HAVING": true,
}
