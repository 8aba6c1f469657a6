package sql

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// WindowTVF is a windowing table-valued function in FROM (Flink):
//
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
//	TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
//	TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))
//	TABLE(SESSION(TABLE t [PARTITION BY k | PARTITION BY (k, ...)], DESCRIPTOR(ts), gap))
//
// RisingWave's FROM TUMBLE(t, ts, size) and FROM HOP(t, ts, slide, size)
// give the same WindowTVF (window_rw.go).
//
// Arguments may also be named: TUMBLE(DATA => TABLE t, TIMECOL =>
// DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE [, OFFSET => ...]); the names
// are DATA, TIMECOL, SIZE, SLIDE, STEP, GAP and OFFSET.
//
// The MySQL grammar has no table functions, so the TiDB AST holds, where
// the call was, an *ast.TableName whose name is a placeholder
// (__window_tvf_N); WindowOf returns the call for it. An alias after the
// call (TABLE(TUMBLE(...)) AS w) is the TableSource's AsName as usual.
type WindowTVF struct {
	// Kind is TUMBLE, HOP, CUMULATE or SESSION.
	Kind     string
	Table    string
	TablePos Pos
	// TimeCol is the column in DESCRIPTOR(...).
	TimeCol    string
	TimeColPos Pos
	// Size is the window size (TUMBLE, HOP, CUMULATE).
	Size Interval
	// Slide is HOP's slide and CUMULATE's step.
	Slide Interval
	// Gap is SESSION's gap.
	Gap Interval
	// Offset is the optional window offset; Offset.Unit is "" when absent.
	Offset Interval
	// PartitionBy is SESSION's PARTITION BY columns.
	PartitionBy []string
	Pos         Pos
}

const windowPlaceholder = "__window_tvf_"

// WindowOf returns the window table function that placeholder table name
// tn of stmt stands for.
func WindowOf(stmt Statement, tn *ast.TableName) (*WindowTVF, bool) {
	m := metaOf(stmt)
	if m == nil || tn == nil {
		return nil, false
	}
	w, ok := m.windows[tn]
	return w, ok
}

// windowCall recognises TABLE(KIND(...)) at toks[i] and returns the index of
// its closing ')' (or -1).
func (p *stmtParser) windowCall(i, hi int) int {
	toks := p.sc.toks
	if !(toks[i].is("TABLE") && i+3 < hi && toks[i+1].isPunct("(") && toks[i+3].isPunct("(")) {
		return -1
	}
	switch strings.ToUpper(toks[i+2].val) {
	case "TUMBLE", "HOP", "CUMULATE", "SESSION":
	default:
		return -1
	}
	if toks[i+2].kind != tokIdent {
		return -1
	}
	return p.closing(i + 1)
}

// rewriteWindow parses the window call TABLE(KIND(...)) spanning toks[i..c]
// and replaces it by a placeholder table name.
func (p *stmtParser) rewriteWindow(i, c int) (edit, *Error) {
	toks := p.sc.toks
	if c >= p.hi {
		return edit{}, p.errAt(toks[i+1].off, "unclosed '(' after TABLE")
	}
	inner := p.closing(i + 3)
	if inner != c-1 {
		sub := p.sub(inner+1, c+1)
		return edit{}, sub.unexpected("expected ')' after the window function")
	}
	w := &WindowTVF{Kind: strings.ToUpper(toks[i+2].val), Pos: p.sc.pos(toks[i].off)}
	sub := p.sub(i+4, inner+1) // the arguments and the closing ')'
	if err := sub.windowArgs(w); err != nil {
		return edit{}, err
	}
	name := windowPlaceholder + strconv.Itoa(len(p.meta.windowAt))
	p.meta.windowAt[name] = w
	return edit{toks[i].off, toks[c].end, name}, nil
}

// windowArgs parses the arguments of a window function up to its ')'.
func (p *stmtParser) windowArgs(w *WindowTVF) *Error {
	positional := map[string][]string{
		"TUMBLE":   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
		"HOP":      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
		"CUMULATE": {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
		"SESSION":  {"DATA", "TIMECOL", "GAP"},
	}[w.Kind]
	seen := map[string]bool{}
	for k := 0; ; k++ {
		if p.peek().isPunct(")") && k == 0 {
			break
		}
		argTok := p.peek()
		var name string
		if p.peek().kind == tokIdent && p.peekAt(1).isPunct("=>") {
			name = strings.ToUpper(p.peek().val)
			p.i += 2
		} else {
			if k >= len(positional) {
				return p.unexpected("too many arguments for " + w.Kind)
			}
			name = positional[k]
		}
		if seen[name] {
			return p.errAt(argTok.off, "argument %s of %s is given twice", name, w.Kind)
		}
		seen[name] = true
		var err *Error
		switch name {
		case "DATA":
			if err := p.expect("TABLE", "expected TABLE and the input table's name"); err != nil {
				return err
			}
			if w.Table, w.TablePos, err = p.name("the input table's name"); err != nil {
				return err
			}
			if p.accept("PARTITION", "BY") {
				if w.Kind != "SESSION" {
					return p.errAt(argTok.off, "PARTITION BY is only allowed in SESSION windows")
				}
				if p.peek().isPunct("(") {
					if w.PartitionBy, err = p.nameList("column name"); err != nil {
						return err
					}
				} else {
					col, _, err := p.name("a column name")
					if err != nil {
						return err
					}
					w.PartitionBy = []string{col}
				}
			}
		case "TIMECOL":
			if err := p.expect("DESCRIPTOR", "expected DESCRIPTOR(time column)"); err != nil {
				return err
			}
			if err := p.expectPunct("(", "expected '(' after DESCRIPTOR"); err != nil {
				return err
			}
			if w.TimeCol, w.TimeColPos, err = p.name("the time column"); err != nil {
				return err
			}
			if err := p.expectPunct(")", "expected ')' after the time column"); err != nil {
				return err
			}
		case "SIZE", "SLIDE", "STEP", "GAP", "OFFSET":
			if !containsStr(positional, name) {
				return p.errAt(argTok.off, "%s has no argument %s", w.Kind, name)
			}
			iv, err := p.interval()
			if err != nil {
				return err
			}
			if _, derr := iv.Duration(); derr != nil {
				return p.errAt(iv.Pos.Offset, "%s", derr.Error())
			}
			switch name {
			case "SIZE":
				w.Size = iv
			case "SLIDE", "STEP":
				w.Slide = iv
			case "GAP":
				w.Gap = iv
			case "OFFSET":
				w.Offset = iv
			}
		default:
			return p.errAt(argTok.off, "%s has no argument %s", w.Kind, name)
		}
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
			return err
		}
		break
	}
	for _, need := range positional {
		if need != "OFFSET" && !seen[need] {
			e := p.errAt(p.sc.toks[p.hi-1].off, "%s needs the argument %s", w.Kind, need)
			e.Hint = map[string]string{
				"TUMBLE":   "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
				"HOP":      "HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
				"CUMULATE": "CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' HOUR)",
				"SESSION":  "SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE)",
			}[w.Kind]
			return e
		}
	}
	return nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
