package sql

import (
	"strconv"
	"strings"
)

// RisingWave's window table functions, written directly in FROM:
//
//	FROM TUMBLE(t, ts, size [, offset])
//	FROM HOP(t, ts, slide, size [, offset])
//
// are the same functions as Flink's TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
// size)): WindowOf returns the same WindowTVF for them.

// rwWindowCall recognises KIND(...) at toks[i] right after FROM or JOIN and
// returns the index of its closing ')' (or -1).
func (p *stmtParser) rwWindowCall(lo, i, hi int) int {
	toks := p.sc.toks
	if i <= lo || i+1 >= hi || toks[i].kind != tokIdent || !toks[i+1].isPunct("(") {
		return -1
	}
	switch strings.ToUpper(toks[i].val) {
	case "TUMBLE", "HOP":
	default:
		return -1
	}
	if !toks[i-1].is("FROM") && !toks[i-1].is("JOIN") {
		return -1
	}
	return p.closing(i + 1)
}

// rewriteRWWindow parses the window call KIND(...) spanning toks[i..c] and
// replaces it by a placeholder table name.
func (p *stmtParser) rewriteRWWindow(i, c int) (edit, *Error) {
	toks := p.sc.toks
	if c >= p.hi {
		return edit{}, p.errAt(toks[i+1].off, "unclosed '(' after %s", strings.ToUpper(toks[i].val))
	}
	w := &WindowTVF{Kind: strings.ToUpper(toks[i].val), Pos: p.sc.pos(toks[i].off)}
	sub := p.sub(i+2, c+1) // the arguments and the closing ')'
	var err *Error
	if w.Table, w.TablePos, err = sub.name("the input table's name"); err != nil {
		return edit{}, err
	}
	if err := sub.expectPunct(",", "expected ',' and the time column"); err != nil {
		return edit{}, err
	}
	if w.TimeCol, w.TimeColPos, err = sub.name("the time column"); err != nil {
		return edit{}, err
	}
	ivs := []*Interval{&w.Size, &w.Offset}
	if w.Kind == "HOP" {
		ivs = []*Interval{&w.Slide, &w.Size, &w.Offset}
	}
	for k, dst := range ivs {
		if k == len(ivs)-1 && sub.peek().isPunct(")") {
			break // no offset
		}
		if err := sub.expectPunct(",", "expected ',' and an interval"); err != nil {
			return edit{}, err
		}
		iv, err := sub.interval()
		if err != nil {
			return edit{}, err
		}
		if _, derr := iv.Duration(); derr != nil {
			return edit{}, sub.errAt(iv.Pos.Offset, "%s", derr.Error())
		}
		*dst = iv
	}
	if err := sub.expectPunct(")", "expected ')' after the window function's arguments"); err != nil {
		return edit{}, err
	}
	name := windowPlaceholder + strconv.Itoa(len(p.meta.windowAt))
	p.meta.windowAt[name] = w
	return edit{toks[i].off, toks[c].end, name}, nil
}
