package sql

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// script is a whole text given to Parse, lexed once.
type script struct {
	text  string
	lines []int // byte offset of the start of each line
	// ascii[l] says line l is ASCII only, so columns are byte counts.
	ascii []bool
	lexResult
}

func newScript(text string) *script {
	sc := &script{text: text, lines: []int{0}, lexResult: lex(text)}
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
		}
		if text[i] == '\n' {
			sc.lines = append(sc.lines, i+1)
			sc.ascii = append(sc.ascii, ascii)
			ascii = true
		}
	}
	sc.ascii = append(sc.ascii, ascii)
	return sc
}

// bom is the byte order mark some editors begin a UTF-8 file with.
const bom = "\ufeff"

// pos converts a byte offset of the script into a Pos.
func (sc *script) pos(off int) Pos {
	if off > len(sc.text) {
		off = len(sc.text)
	}
	if off < 0 {
		off = 0
	}
	l := sort.Search(len(sc.lines), func(i int) bool { return sc.lines[i] > off }) - 1
	start := sc.lines[l]
	col := off - start + 1
	if !sc.ascii[l] {
		col = utf8.RuneCountInString(sc.text[start:off]) + 1
		if l == 0 && off >= len(bom) && strings.HasPrefix(sc.text, bom) {
			col-- // an editor does not show the byte order mark
		}
	}
	return Pos{Line: l + 1, Col: col, Offset: off}
}

// chunk is the token range of one statement of a script: toks[lo:hi] of the
// script's tokens, without the terminating ';'.
type chunk struct {
	lo, hi int
	// set says the chunk is a statement set; for the EXECUTE STATEMENT SET
	// BEGIN form the inner statements lie between the BEGIN (at index begin)
	// and the END (at index hi-1); for the BEGIN STATEMENT SET; form between
	// the ';' at begin and the END.
	set   bool
	begin int
	// unfinished says the statement set has no END yet.
	unfinished bool
}

// split cuts the tokens of a script into statements at ';'. A statement set
// (EXECUTE STATEMENT SET BEGIN ... END, or BEGIN STATEMENT SET; ... END)
// is one chunk: its inner ';' do not end it. Empty statements are dropped.
func split(toks []token) []chunk {
	var out []chunk
	i := 0
	for i < len(toks) {
		if toks[i].isPunct(";") {
			i++
			continue
		}
		if b, ok := setBegin(toks, i); ok {
			c := chunk{lo: i, set: true, begin: b}
			end, found := findSetEnd(toks, b+1)
			c.hi, c.unfinished = end, !found
			out = append(out, c)
			i = end
			continue
		}
		j := i
		for j < len(toks) && !toks[j].isPunct(";") {
			j++
		}
		out = append(out, chunk{lo: i, hi: j})
		i = j
	}
	return out
}

// setBegin recognises the start of a statement set at toks[i], possibly
// after EXPLAIN [PLAN FOR]. It returns the index of the BEGIN token of
// EXECUTE STATEMENT SET BEGIN, or of the ';' after BEGIN STATEMENT SET.
func setBegin(toks []token, i int) (int, bool) {
	has := func(j int, words ...string) bool {
		if j+len(words) > len(toks) {
			return false
		}
		for k, w := range words {
			if w == ";" {
				if !toks[j+k].isPunct(";") {
					return false
				}
			} else if !toks[j+k].is(w) {
				return false
			}
		}
		return true
	}
	if has(i, "EXPLAIN", "PLAN", "FOR") {
		i += 3
	} else if has(i, "EXPLAIN") {
		i++
	}
	switch {
	case has(i, "EXECUTE", "STATEMENT", "SET", "BEGIN"):
		return i + 3, true
	case has(i, "BEGIN", "STATEMENT", "SET", ";"):
		return i + 3, true
	}
	return 0, false
}

// findSetEnd finds the END that closes a statement set whose body starts at
// toks[i]; END keywords of CASE expressions are skipped. It returns the
// index after that END, or len(toks) and false when there is none.
func findSetEnd(toks []token, i int) (int, bool) {
	cases := 0
	for ; i < len(toks); i++ {
		switch {
		case toks[i].is("CASE"):
			cases++
		case toks[i].is("END"):
			if cases == 0 {
				return i + 1, true
			}
			cases--
		case toks[i].isPunct(";"):
			cases = 0
		}
	}
	return len(toks), false
}

// Complete reports whether text ends with a complete statement: its last
// token is a ';' outside strings, quoted identifiers and comments, and not
// inside an unfinished statement set. The interactive shell reads lines
// until Complete holds.
func Complete(text string) bool {
	r := lex(text)
	if r.unterminated || len(r.toks) == 0 || !r.toks[len(r.toks)-1].isPunct(";") {
		return false
	}
	chunks := split(r.toks)
	return len(chunks) == 0 || !chunks[len(chunks)-1].unfinished
}
