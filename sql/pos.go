package sql

import (
	"strconv"
	"unicode/utf8"
)

// String formats p as "line:col".
func (p Pos) String() string {
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// posAfter returns the position of byte offset off of a text whose byte
// offset from is at position from. Columns count characters (a tab is one).
// off must not be before from.Offset.
func posAfter(from Pos, text string, off int) Pos {
	p := from
	if off > len(text) {
		off = len(text)
	}
	for i := from.Offset; i < off; {
		c := text[i]
		if c == '\n' {
			p.Line++
			p.Col = 1
			i++
			continue
		}
		if c < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
		}
		p.Col++
	}
	p.Offset = off
	return p
}

// scriptStart is the position of the first byte of a script.
var scriptStart = Pos{Line: 1, Col: 1}

// spanPos converts a byte offset of the script into a Pos, using the span
// of the statement that holds it (so the script itself is not needed).
// Offsets outside the statement are clamped to it.
//
// With the statement's parser notes (meta), the script's line index answers
// in logarithmic time; otherwise the statement's text is scanned up to off.
func spanPos(s Span, off int) Pos {
	rel := off - s.Start.Offset
	if rel < 0 {
		rel = 0
	}
	if rel > len(s.Src) {
		rel = len(s.Src)
	}
	if sc := s.meta.script(); sc != nil && s.Start.Offset+rel <= len(sc.text) {
		return sc.pos(s.Start.Offset + rel)
	}
	p := posAfter(Pos{Line: s.Start.Line, Col: s.Start.Col}, s.Src, rel)
	p.Offset = s.Start.Offset + rel
	return p
}

func (m *stmtMeta) script() *script {
	if m == nil {
		return nil
	}
	return m.sc
}
