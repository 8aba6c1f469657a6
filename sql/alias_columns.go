package sql

import "github.com/pingcap/tidb/pkg/parser/ast"

// A table reference of FROM may name its columns after its alias, as in
// SQL and Flink: FROM (VALUES (1, 'a')) AS t(id, name), FROM clicks AS
// c(u, ts). MySQL has no such list, so the rewrites blank it and give the
// alias a placeholder name; after parsing, the alias gets its name back
// and the list is filed under its *ast.TableSource (AliasColumns).

// aliasNote is a column list written after an alias.
type aliasNote struct {
	alias string
	cols  []Ident
	pos   Pos // of the list's '('
}

const aliasPlaceholder = "__alias_"

// AliasColumns returns the column names that table reference ts of stmt
// gives its columns after its alias, and the position of the list; ok is
// false when it names none.
func AliasColumns(stmt Statement, ts *ast.TableSource) (cols []Ident, pos Pos, ok bool) {
	m := metaOf(stmt)
	if m == nil || ts == nil {
		return nil, Pos{}, false
	}
	n, ok := m.aliases[ts]
	if !ok {
		return nil, Pos{}, false
	}
	return n.cols, n.pos, true
}

// aliasColumns recognises AS alias (c1, c2, ...) at toks[i] (the AS)
// after a table reference of FROM: a name or a parenthesized query that
// FROM, JOIN or a comma of FROM's list (before a parenthesis) opens. It
// returns the edits that hide the list and the index of its ')', or -1.
func (p *stmtParser) aliasColumns(lo, i, hi int) ([]edit, int) {
	toks := p.sc.toks
	if i+3 >= hi || i == lo || !toks[i+1].isName() || !toks[i+2].isPunct("(") {
		return nil, -1
	}
	before := toks[i-1]
	switch {
	case before.isPunct(")"):
		open := p.opening(lo, i-1)
		if open <= lo {
			return nil, -1
		}
		if o := toks[open-1]; !o.is("FROM") && !o.is("JOIN") && !o.isPunct(",") && !o.is("LATERAL") {
			return nil, -1
		}
	case before.isName():
		k := p.nameStart(lo, i-1)
		if k <= lo || !(toks[k-1].is("FROM") || toks[k-1].is("JOIN")) {
			return nil, -1
		}
	default:
		return nil, -1
	}
	n := &aliasNote{alias: toks[i+1].val, pos: p.sc.pos(toks[i+2].off)}
	j := i + 3
	for ; j < hi; j += 2 {
		if !toks[j].isName() {
			return nil, -1
		}
		n.cols = append(n.cols, Ident{Name: toks[j].val, Pos: p.sc.pos(toks[j].off)})
		if j+1 >= hi {
			return nil, -1
		}
		if toks[j+1].isPunct(")") {
			break
		}
		if !toks[j+1].isPunct(",") {
			return nil, -1
		}
	}
	if j >= hi {
		return nil, -1
	}
	close := j + 1
	name := aliasPlaceholder + itoa(len(p.meta.aliasAt))
	p.meta.aliasAt[name] = n
	return []edit{
		{toks[i+1].off, toks[i+1].end, name},
		{toks[i+2].off, toks[close].end, pad("", toks[close].end-toks[i+2].off)},
	}, close
}
