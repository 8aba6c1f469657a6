package sql

import (
	"sort"
	"strings"
)

// The syntax of Flink's JSON functions, rewritten into plain calls whose
// clauses are literal strings (the calls of package functions):
//
//	s IS [NOT] JSON [kind]    s [NOT] LIKE 'KIND', turned into the call
//	                          "IS JSON"(s, 'KIND') after parsing (jsonAt)
//	JSON_EXISTS(s, p x ON ERROR)        JSON_EXISTS(s, p, 'X')
//	JSON_VALUE(s, p [RETURNING t] [b ON EMPTY] [b ON ERROR])
//	                          JSON_VALUE(s, p, 'T|B|B', empty default, error default)
//	JSON_QUERY(s, p [w WRAPPER] [b ON EMPTY] [b ON ERROR])
//	                          JSON_QUERY(s, p, 'W|B|B')
//	JSON_OBJECT([KEY] k VALUE v, ... [x ON NULL])
//	                          JSON_OBJECT('X|raw', k, v, ...)
//	JSON_ARRAY(v, ... [x ON NULL])      JSON_ARRAY('X|raw', v, ...)
//
// raw has a 1 for each value that is itself a JSON_OBJECT or JSON_ARRAY
// call, which is inserted as JSON rather than as a string.

// isJSON rewrites toks[i] (IS) .. of s IS [NOT] JSON [kind]; it returns
// the index of the last token, or -1 when this is no IS JSON.
func (p *stmtParser) isJSON(i, hi int, edits *[]edit) int {
	toks := p.sc.toks
	j := i + 1
	not := false
	if j < hi && toks[j].is("NOT") {
		not, j = true, j+1
	}
	if j >= hi || !toks[j].is("JSON") {
		return -1
	}
	kind, last := "VALUE", j
	if j+1 < hi {
		for _, k := range []string{"VALUE", "SCALAR", "ARRAY", "OBJECT"} {
			if toks[j+1].is(k) {
				kind, last = k, j+1
			}
		}
	}
	op := "LIKE"
	if not {
		op = "NOT LIKE"
	}
	*edits = append(*edits, edit{toks[i].off, toks[j-1].end, op})
	*edits = append(*edits, edit{toks[j].off, toks[last].end, "'" + kind + "'"})
	p.meta.jsonAt[toks[j].off] = true
	return last
}

// topCommas returns the indexes of the commas directly inside the call
// whose '(' is toks[open] and ')' toks[close].
func (p *stmtParser) topCommas(open, close int) []int {
	var out []int
	depth := 0
	for j := open + 1; j < close; j++ {
		switch t := p.sc.toks[j]; {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && t.isPunct(","):
			out = append(out, j)
		}
	}
	return out
}

// skipExpr returns the index of the first token from j on, at the depth
// of toks[j], for which stop holds (or end).
func (p *stmtParser) skipExpr(j, end int, stop func(int) bool) int {
	depth := 0
	for ; j < end; j++ {
		t := p.sc.toks[j]
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && stop(j):
			return j
		}
	}
	return end
}

func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// jsonQueryCall rewrites the clauses of JSON_EXISTS, JSON_VALUE and
// JSON_QUERY (name at toks[i]).
func (p *stmtParser) jsonQueryCall(up string, i int, edits *[]edit) *Error {
	toks := p.sc.toks
	open := i + 1
	c := p.closing(open)
	if c < 0 || c >= p.hi {
		return nil // the TiDB parser reports the missing ')'
	}
	commas := p.topCommas(open, c)
	if len(commas) == 0 {
		return p.errAt(toks[i].off, "%s takes a JSON value and a path", up)
	}
	if len(commas) > 1 {
		return p.errAt(toks[commas[1]].off, "%s takes a JSON value and a path, then its clauses without commas", up)
	}
	pathStart := commas[0] + 1
	if pathStart >= c {
		return p.errAt(toks[c].off, "%s: expected a path", up)
	}
	clauseKw := map[string]bool{"RETURNING": true, "ON": true, "DEFAULT": true, "NULL": true, "ERROR": true,
		"TRUE": true, "FALSE": true, "UNKNOWN": true, "WITH": true, "WITHOUT": true, "EMPTY": true}
	k := p.skipExpr(pathStart+1, c, func(j int) bool {
		return toks[j].kind == tokIdent && clauseKw[strings.ToUpper(toks[j].val)]
	})
	if k >= c {
		return nil // no clauses
	}
	j := k
	expect := func(kws ...string) *Error {
		for _, kw := range kws {
			if j >= c || !toks[j].is(kw) {
				at := toks[min(j, c)].off
				return p.errAt(at, "%s: expected %s", up, kw)
			}
			j++
		}
		return nil
	}
	// onClause reads "<behavior> ON EMPTY|ERROR" when one starts at j.
	onClause := func(allowed []string, which string) (string, bool, *Error) {
		start := j
		for _, b := range allowed {
			words := strings.Fields(b)
			ok := j+len(words) < c
			for w := range words {
				if ok && !toks[j+w].is(words[w]) {
					ok = false
				}
			}
			if ok && toks[j+len(words)].is("ON") && j+len(words)+1 < c && toks[j+len(words)+1].is(which) {
				j += len(words) + 2
				return b, true, nil
			}
		}
		j = start
		return "", false, nil
	}
	switch up {
	case "JSON_EXISTS":
		b, ok, _ := onClause([]string{"TRUE", "FALSE", "UNKNOWN", "ERROR"}, "ERROR")
		if !ok {
			return p.errAt(toks[j].off, "JSON_EXISTS: expected {TRUE | FALSE | UNKNOWN | ERROR} ON ERROR")
		}
		if j < c {
			return p.errAt(toks[j].off, "JSON_EXISTS: unexpected %s after ON ERROR", toks[j].val)
		}
		*edits = append(*edits, edit{toks[k].off, toks[c-1].end, ", " + quoteSQL(b)})
	case "JSON_QUERY":
		wrapper := "WITHOUT"
		switch {
		case toks[j].is("WITHOUT"):
			j++
			if j < c && toks[j].is("ARRAY") {
				j++
			}
			if err := expect("WRAPPER"); err != nil {
				return err
			}
		case toks[j].is("WITH"):
			j++
			wrapper = "UNCONDITIONAL"
			if j < c && (toks[j].is("CONDITIONAL") || toks[j].is("UNCONDITIONAL")) {
				wrapper = strings.ToUpper(toks[j].val)
				j++
			}
			if j < c && toks[j].is("ARRAY") {
				j++
			}
			if err := expect("WRAPPER"); err != nil {
				return err
			}
		}
		bs := []string{"NULL", "ERROR", "EMPTY ARRAY", "EMPTY OBJECT"}
		onEmpty, onError := "NULL", "NULL"
		if b, ok, _ := onClause(bs, "EMPTY"); ok {
			onEmpty = b
		}
		if b, ok, _ := onClause(bs, "ERROR"); ok {
			onError = b
		}
		if j < c {
			return p.errAt(toks[j].off, "JSON_QUERY: unexpected %s (expected [WITH | WITHOUT ... WRAPPER] [{NULL | ERROR | EMPTY ARRAY | EMPTY OBJECT} ON EMPTY] [... ON ERROR])", toks[j].val)
		}
		*edits = append(*edits, edit{toks[k].off, toks[c-1].end, ", " + quoteSQL(wrapper+"|"+onEmpty+"|"+onError)})
	case "JSON_VALUE":
		ret := ""
		if toks[j].is("RETURNING") {
			j++
			t0 := j
			j = p.skipExpr(j, c, func(x int) bool {
				return toks[x].is("NULL") || toks[x].is("ERROR") || toks[x].is("DEFAULT")
			})
			if j == t0 {
				return p.errAt(toks[min(j, c)].off, "JSON_VALUE: expected a type after RETURNING")
			}
			ret = p.sc.text[toks[t0].off:toks[j-1].end]
		}
		// Behaviors: NULL, ERROR, or DEFAULT expr, the expression kept in place.
		type slot struct {
			b          string
			from, to   int // the default's tokens [from, to)
			start, end int // the clause's tokens
		}
		var slots [2]slot
		for si, which := range []string{"EMPTY", "ERROR"} {
			slots[si] = slot{b: "NULL", from: -1}
			if j >= c {
				continue
			}
			start := j
			switch {
			case toks[j].is("NULL") || toks[j].is("ERROR"):
				b := strings.ToUpper(toks[j].val)
				if j+2 < c && toks[j+1].is("ON") && toks[j+2].is(which) {
					slots[si] = slot{b: b, from: -1, start: start, end: j + 3}
					j += 3
				}
			case toks[j].is("DEFAULT"):
				from := j + 1
				to := p.skipExpr(from, c, func(x int) bool {
					return toks[x].is("ON") && x+1 < c && (toks[x+1].is("EMPTY") || toks[x+1].is("ERROR"))
				})
				if to >= c || to == from {
					return p.errAt(toks[j].off, "JSON_VALUE: expected DEFAULT expr ON EMPTY or ON ERROR")
				}
				if !toks[to+1].is(which) {
					continue
				}
				slots[si] = slot{b: "DEFAULT", from: from, to: to, start: start, end: to + 2}
				j = to + 2
			}
		}
		if j < c {
			return p.errAt(toks[j].off, "JSON_VALUE: unexpected %s (expected [RETURNING type] [{NULL | ERROR | DEFAULT expr} ON EMPTY] [... ON ERROR])", toks[j].val)
		}
		// The clauses become ", 'spec', <empty default>, <error default>",
		// each default's expression where it was written.
		spec := ", " + quoteSQL(ret+"|"+slots[0].b+"|"+slots[1].b)
		pending := spec
		at := k // the first token not yet covered by an edit
		for _, s := range slots {
			if s.from < 0 {
				pending += ", NULL"
				continue
			}
			*edits = append(*edits, edit{toks[at].off, toks[s.from].off, pending + ", "})
			pending = ""
			at = s.to
		}
		if at < c {
			*edits = append(*edits, edit{toks[at].off, toks[c-1].end, pending})
		} else if pending != "" {
			*edits = append(*edits, edit{toks[c].off, toks[c].off, pending})
		}
	}
	return nil
}

// jsonConstructor rewrites JSON_OBJECT and JSON_ARRAY (name at toks[i]).
func (p *stmtParser) jsonConstructor(up string, i int, edits *[]edit) *Error {
	toks := p.sc.toks
	open := i + 1
	c := p.closing(open)
	if c < 0 || c >= p.hi {
		return nil
	}
	onNull := "NULL"
	if up == "JSON_ARRAY" {
		onNull = "ABSENT"
	}
	end := c // the arguments end here; an ON NULL clause after them
	if c-3 > open && (toks[c-3].is("NULL") || toks[c-3].is("ABSENT")) && toks[c-2].is("ON") && toks[c-1].is("NULL") {
		onNull = strings.ToUpper(toks[c-3].val)
		end = c - 3
		if end-1 > open && toks[end-1].isPunct(",") {
			return p.errAt(toks[end-1].off, "%s: no comma before ON NULL", up)
		}
		*edits = append(*edits, edit{toks[c-3].off, toks[c-1].end, ""})
	}
	var raw strings.Builder
	args := [][2]int{}
	if end > open+1 {
		from := open + 1
		for _, cm := range append(p.topCommas(open, end), end) {
			if cm >= end && cm != end {
				break
			}
			args = append(args, [2]int{from, cm})
			from = cm + 1
		}
	}
	isCall := func(from, to int) bool {
		return to-from >= 3 && (toks[from].is("JSON_OBJECT") || toks[from].is("JSON_ARRAY")) &&
			toks[from+1].isPunct("(") && p.closing(from+1) == to-1
	}
	var kvEdits []edit
	for _, a := range args {
		if a[0] >= a[1] {
			return p.errAt(toks[a[1]].off, "%s: expected a value", up)
		}
		if up == "JSON_ARRAY" {
			if isCall(a[0], a[1]) {
				raw.WriteByte('1')
			} else {
				raw.WriteByte('0')
			}
			continue
		}
		from := a[0]
		if toks[from].is("KEY") && from+1 < a[1] && !toks[from+1].is("VALUE") && !toks[from+1].isPunct(".") {
			kvEdits = append(kvEdits, edit{toks[from].off, toks[from].end, pad("", toks[from].end-toks[from].off)})
			from++
		}
		v := p.skipExpr(from, a[1], func(x int) bool { return toks[x].is("VALUE") })
		if v >= a[1] || v == from || v+1 >= a[1] {
			return p.errAt(toks[a[0]].off, "JSON_OBJECT takes [KEY] key VALUE value pairs")
		}
		kvEdits = append(kvEdits, edit{toks[v].off, toks[v].end, pad(",", toks[v].end-toks[v].off)})
		if isCall(v+1, a[1]) {
			raw.WriteByte('1')
		} else {
			raw.WriteByte('0')
		}
	}
	mode := quoteSQL(onNull + "|" + raw.String())
	if len(args) > 0 {
		mode += ", "
	}
	*edits = append(*edits, edit{toks[open].end, toks[open].end, mode})
	*edits = append(*edits, kvEdits...)
	return nil
}

// IsJSONFunc is the function s IS JSON kind is a call of: "IS JSON"(s, 'KIND').
const IsJSONFunc = "IS JSON"

// skipEdited marks the keywords inside the edits of a call (from its '('
// at toks[open] on) as taken care of, so that no other rewrite edits them.
func (p *stmtParser) skipEdited(open int, es []edit) {
	toks := p.sc.toks
	for _, e := range es {
		j := open + sort.Search(len(toks)-open, func(k int) bool { return toks[open+k].off >= e.off })
		for ; j < len(toks) && toks[j].off < e.end; j++ {
			p.meta.skipAt[toks[j].off] = true
		}
	}
}

// JSONArrayAggFunc and JSONObjectAggFunc are the aggregates the TiDB parser
// sees for JSON_ARRAYAGG(v [x ON NULL]) and JSON_OBJECTAGG([KEY] k VALUE v
// [x ON NULL]): JSONArrayAggFunc('X|raw', v) and JSONObjectAggFunc('X|raw',
// k, v), their first argument as JSON_ARRAY's and JSON_OBJECT's.
const (
	JSONArrayAggFunc  = "__json_arrayagg"
	JSONObjectAggFunc = "__json_objectagg"
)

// jsonAggCall rewrites JSON_ARRAYAGG and JSON_OBJECTAGG (name at toks[i]).
func (p *stmtParser) jsonAggCall(up string, i int, edits *[]edit) *Error {
	toks := p.sc.toks
	open := i + 1
	c := p.closing(open)
	if c < 0 || c >= p.hi {
		return nil
	}
	fn, inner := JSONArrayAggFunc, "JSON_ARRAY"
	if up == "JSON_OBJECTAGG" {
		fn, inner = JSONObjectAggFunc, "JSON_OBJECT"
	}
	if p.overFollows(open) {
		return p.errAt(toks[i].off, "%s is not supported in an OVER window (as in Flink)", up)
	}
	if cs := p.topCommas(open, c); len(cs) > 0 {
		return p.errAt(toks[cs[0]].off, "%s takes one %s", up, map[bool]string{true: "value", false: "KEY k VALUE v pair"}[up == "JSON_ARRAYAGG"])
	}
	if open+1 < c && (toks[open+1].is("DISTINCT") || toks[open+1].is("ALL")) {
		return p.errAt(toks[open+1].off, "%s(%s ...) is not supported", up, strings.ToUpper(toks[open+1].val))
	}
	// The arguments read as those of JSON_ARRAY or JSON_OBJECT.
	var es []edit
	if err := p.jsonConstructor(inner, i, &es); err != nil {
		if strings.HasPrefix(err.Msg, inner) {
			err.Msg = up + strings.TrimPrefix(err.Msg, inner)
		}
		return err
	}
	if open+1 == c {
		return p.errAt(toks[c].off, "%s: expected a value", up)
	}
	*edits = append(*edits, edit{toks[i].off, toks[i].end, fn})
	*edits = append(*edits, es...)
	return nil
}
