package sql

import "strings"

// AlterKind says what an ALTER TABLE statement changes.
type AlterKind int

const (
	// AlterSet is SET ('k' = 'v', ...): options added or changed.
	AlterSet AlterKind = iota
	// AlterReset is RESET ('k', ...): options removed.
	AlterReset
	// AlterAdd is ADD item or ADD (item, ...): new columns, a watermark,
	// a primary key.
	AlterAdd
	// AlterModify is MODIFY item or MODIFY (item, ...): columns, the
	// watermark or the primary key redefined.
	AlterModify
	// AlterDrop is DROP c, DROP (c, ...), DROP PRIMARY KEY or DROP
	// WATERMARK.
	AlterDrop
	// AlterRenameColumn is RENAME old TO new.
	AlterRenameColumn
	// AlterRenameTable is RENAME TO new.
	AlterRenameTable
)

// Ident is a name as written and where.
type Ident struct {
	Name string
	Pos  Pos
}

// SchemaItem is one item of ALTER TABLE ... ADD or MODIFY: exactly one of
// Column, Watermark and PrimaryKey is set.
type SchemaItem struct {
	// Pos is where the item starts.
	Pos    Pos
	Column *ColumnDef
	// First and After place a column: FIRST, or AFTER the column After
	// (at AfterPos). Neither: ADD appends it, MODIFY leaves it where it is.
	First    bool
	After    string
	AfterPos Pos
	// Watermark is WATERMARK FOR col AS expr.
	Watermark *Watermark
	// PrimaryKey is [CONSTRAINT n] PRIMARY KEY (cols) [NOT ENFORCED].
	PrimaryKey []string
}

// AlterTable is Flink's ALTER TABLE [IF EXISTS] t followed by one of
//
//	SET ('k' = 'v', ...)
//	RESET ('k', ...)
//	ADD item | ADD (item, ...)
//	MODIFY item | MODIFY (item, ...)
//	DROP c | DROP (c, ...) | DROP PRIMARY KEY | DROP WATERMARK
//	RENAME old TO new
//	RENAME TO new_table
//
// where an item is a column definition as in CREATE TABLE followed by
// an optional FIRST or AFTER c, WATERMARK FOR c AS expr, or [CONSTRAINT
// n] PRIMARY KEY (c, ...) [NOT ENFORCED]. Which fields are set depends on
// Kind.
type AlterTable struct {
	Span
	Name     string
	NamePos  Pos
	IfExists bool
	Kind     AlterKind
	// Options are SET's; Keys are RESET's keys.
	Options []Option
	Keys    []Ident
	// Items are ADD's and MODIFY's.
	Items []SchemaItem
	// Columns are the columns DROP drops; DropPrimaryKey and
	// DropWatermark are set for DROP PRIMARY KEY and DROP WATERMARK.
	Columns        []Ident
	DropPrimaryKey bool
	DropWatermark  bool
	// From and To are RENAME's (From is empty for RENAME TO).
	From, To Ident
}

// parseAlter parses ALTER TABLE ...; ALTER of anything else is refused.
func (p *stmtParser) parseAlter() (Statement, *Error) {
	p.i++ // ALTER
	if !p.accept("TABLE") {
		t := p.peek()
		if t.is("VIEW") || t.is("FUNCTION") || t.is("DATABASE") || t.is("CATALOG") || t.is("MATERIALIZED") || t.is("SCHEMA") {
			e := p.errAt(t.off, "ALTER %s is not supported", strings.ToUpper(t.val))
			if t.is("VIEW") || t.is("MATERIALIZED") {
				e.Hint = "CREATE OR REPLACE VIEW replaces a view"
			}
			return nil, e
		}
		return nil, p.unexpected("expected TABLE after ALTER")
	}
	a := &AlterTable{Span: p.span(p.lo, p.hi)}
	a.IfExists = p.accept("IF", "EXISTS")
	var err *Error
	if a.Name, a.NamePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case p.accept("SET"):
		a.Kind = AlterSet
		if !p.peek().isPunct("(") {
			return nil, p.unexpected("expected ('key' = 'value', ...) after SET")
		}
		if a.Options, err = p.options(); err != nil {
			return nil, err
		}
		if len(a.Options) == 0 {
			return nil, p.errAt(t.off, "ALTER TABLE SET needs at least one option")
		}
	case p.accept("RESET"):
		a.Kind = AlterReset
		if a.Keys, err = p.resetKeys(); err != nil {
			return nil, err
		}
		if len(a.Keys) == 0 {
			return nil, p.errAt(t.off, "ALTER TABLE RESET needs at least one option key")
		}
	case p.accept("ADD"), p.accept("MODIFY"):
		a.Kind = AlterAdd
		if t.is("MODIFY") {
			a.Kind = AlterModify
		}
		// ADD COLUMN c TYPE (MySQL's, Spark's): COLUMN is a keyword when a
		// name and its type follow it.
		if p.peek().is("COLUMN") && p.peekAt(1).isName() && p.peekAt(2).isName() {
			p.i++
		}
		if a.Items, err = p.schemaItems(); err != nil {
			return nil, err
		}
	case p.accept("DROP"):
		a.Kind = AlterDrop
		switch {
		case p.accept("PRIMARY", "KEY"):
			a.DropPrimaryKey = true
		case p.accept("WATERMARK"):
			a.DropWatermark = true
		case p.peek().is("CONSTRAINT") && p.peekAt(1).isName():
			e := p.errAt(p.peek().off, "DROP CONSTRAINT is not supported: constraints have no names here")
			e.Hint = "DROP PRIMARY KEY drops the primary key"
			return nil, e
		case p.peek().is("COLUMN") && p.peekAt(1).isName() && p.i+2 == p.hi:
			p.i++ // DROP COLUMN c (MySQL's, Spark's)
			a.Columns = []Ident{{Name: p.peek().val, Pos: p.sc.pos(p.peek().off)}}
			p.i++
		case p.peek().isPunct("("):
			if a.Columns, err = p.identList("column name"); err != nil {
				return nil, err
			}
		default:
			n, pos, err := p.name("a column name, (columns), PRIMARY KEY or WATERMARK")
			if err != nil {
				return nil, err
			}
			a.Columns = []Ident{{Name: n, Pos: pos}}
		}
	case p.accept("RENAME"):
		if p.accept("TO") {
			a.Kind = AlterRenameTable
			if a.To.Name, a.To.Pos, err = p.name("the new table name"); err != nil {
				return nil, err
			}
			break
		}
		a.Kind = AlterRenameColumn
		if a.From.Name, a.From.Pos, err = p.name("the column to rename, or TO and the new table name"); err != nil {
			return nil, err
		}
		if err := p.expect("TO", "expected TO and the new column name"); err != nil {
			return nil, err
		}
		if a.To.Name, a.To.Pos, err = p.name("the new column name"); err != nil {
			return nil, err
		}
	default:
		return nil, p.unexpected("expected SET, RESET, ADD, MODIFY, DROP or RENAME after the table name")
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return a, nil
}

// identList parses '(' name, ... ')' keeping where each name is.
func (p *stmtParser) identList(what string) ([]Ident, *Error) {
	if err := p.expectPunct("(", "expected '(' and a list of "+what+"s"); err != nil {
		return nil, err
	}
	var out []Ident
	for {
		n, pos, err := p.name(what)
		if err != nil {
			return nil, err
		}
		out = append(out, Ident{Name: n, Pos: pos})
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// resetKeys parses ('key', ...) of ALTER TABLE RESET: quoted keys, or
// keys written bare (a.b-c).
func (p *stmtParser) resetKeys() ([]Ident, *Error) {
	if err := p.expectPunct("(", "expected ('key', ...) after RESET"); err != nil {
		return nil, err
	}
	var keys []Ident
	if p.acceptPunct(")") {
		return keys, nil
	}
	for {
		t := p.peek()
		k := Ident{Pos: p.sc.pos(t.off)}
		switch {
		case t.kind == tokString:
			k.Name = t.val
			p.i++
		case t.kind == tokIdent || t.kind == tokQuoted:
			lo := p.i
			for !p.atEnd() && !p.peek().isPunct(",") && !p.peek().isPunct(")") {
				p.i++
			}
			k.Name = p.sc.text[p.sc.toks[lo].off:p.sc.toks[p.i-1].end]
			if t.kind == tokQuoted && p.i == lo+1 {
				k.Name = t.val
			}
		default:
			return nil, p.unexpected("expected an option key such as 'scan.startup.mode'")
		}
		if p.peek().isPunct("=") {
			return nil, p.unexpected("RESET takes keys only: ALTER TABLE t RESET ('key', ...)")
		}
		for _, prev := range keys {
			if prev.Name == k.Name {
				return nil, p.errAt(k.Pos.Offset, "option '%s' is given twice", k.Name)
			}
		}
		keys = append(keys, k)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')' after the option key"); err != nil {
			return nil, err
		}
		return keys, nil
	}
}

// schemaItems parses the items of ADD or MODIFY: one item, or a list in
// parentheses.
func (p *stmtParser) schemaItems() ([]SchemaItem, *Error) {
	if !p.peek().isPunct("(") {
		it, err := p.schemaItem(p.hi)
		if err != nil {
			return nil, err
		}
		return it, nil
	}
	open := p.i
	closeAt := p.closing(open)
	if closeAt >= p.hi {
		p.i = p.hi
		return nil, p.unexpected("expected ')' closing the list")
	}
	p.i++ // (
	var items []SchemaItem
	for {
		if p.peek().isPunct(")") {
			return nil, p.unexpected("expected a column, WATERMARK or PRIMARY KEY")
		}
		end := p.exprEnd(p.i)
		it, err := p.schemaItem(end)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
		if p.i != end {
			return nil, p.unexpected("expected ',' or ')'")
		}
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
			return nil, err
		}
		return items, nil
	}
}

// schemaItem parses one item that ends before token end. A column that
// carries PRIMARY KEY gives two items: the column and the key.
func (p *stmtParser) schemaItem(end int) ([]SchemaItem, *Error) {
	t := p.peek()
	it := SchemaItem{Pos: p.sc.pos(t.off)}
	if p.i >= end {
		return nil, p.unexpected("expected a column, WATERMARK or PRIMARY KEY")
	}
	switch {
	case t.is("WATERMARK") && p.peekAt(1).is("FOR"):
		sp := p.sub(p.i, end)
		wm, err := sp.watermark()
		if err != nil {
			return nil, err
		}
		p.i = sp.i
		it.Watermark = wm
		return []SchemaItem{it}, nil
	case (t.is("PRIMARY") && p.peekAt(1).is("KEY")) || (t.is("CONSTRAINT") && p.peekAt(2).is("PRIMARY")):
		if p.accept("CONSTRAINT") {
			if _, _, err := p.name("a constraint name"); err != nil {
				return nil, err
			}
		}
		p.i += 2 // PRIMARY KEY
		var err *Error
		if it.PrimaryKey, err = p.nameList("column name"); err != nil {
			return nil, err
		}
		p.accept("NOT", "ENFORCED")
		return []SchemaItem{it}, nil
	case (t.is("UNIQUE") || t.is("INDEX") || t.is("KEY") || t.is("FOREIGN") || t.is("CHECK")) && !p.columnNamed():
		return nil, p.errAt(t.off, "%s constraints are not supported", strings.ToUpper(t.val))
	}
	// A column, then FIRST or AFTER c: the column's definition ends
	// before them (a computed column's expression would take them in).
	cut := end
	switch {
	case cut-1 > p.i && p.sc.toks[cut-1].is("FIRST"):
		cut--
	case cut-2 > p.i && p.sc.toks[cut-2].is("AFTER") && p.sc.toks[cut-1].isName():
		cut -= 2
	}
	sp := p.sub(p.i, cut)
	col, pk, err := sp.column()
	if err != nil {
		return nil, err
	}
	if !sp.atEnd() {
		return nil, sp.unexpected("expected NOT NULL, COMMENT, PRIMARY KEY, FIRST, AFTER or the end of the column")
	}
	p.i = cut
	it.Column = &col
	switch {
	case p.accept("FIRST"):
		it.First = true
	case p.accept("AFTER"):
		it.AfterPos = p.sc.pos(p.peek().off)
		it.After = p.peek().val
		p.i++
	}
	items := []SchemaItem{it}
	if pk {
		items = append(items, SchemaItem{Pos: col.Pos, PrimaryKey: []string{col.Name}})
	}
	return items, nil
}

// parseCreateOrReplace parses, after CREATE: OR REPLACE [TEMPORARY] TABLE
// ... or VIEW ... (without IF NOT EXISTS: replacing and keeping exclude
// each other).
func (p *stmtParser) parseCreateOrReplace() (Statement, *Error) {
	or := p.peek()
	p.i += 2 // OR REPLACE
	temporary := p.accept("TEMPORARY") || p.accept("TEMP")
	var st Statement
	var err *Error
	switch {
	case p.accept("TABLE"):
		st, err = p.parseCreateTable(temporary)
	case p.accept("VIEW"):
		st, err = p.parseCreateView(temporary)
	default:
		return nil, p.unexpected("expected TABLE or VIEW after CREATE OR REPLACE")
	}
	if err != nil {
		return nil, err
	}
	ifNotExists := false
	switch x := st.(type) {
	case *CreateTable:
		x.OrReplace, ifNotExists = true, x.IfNotExists
	case *CreateView:
		x.OrReplace, ifNotExists = true, x.IfNotExists
	}
	if ifNotExists {
		e := p.errAt(or.off, "CREATE OR REPLACE cannot take IF NOT EXISTS")
		e.Hint = "OR REPLACE replaces an existing one, IF NOT EXISTS keeps it: choose one"
		return nil, e
	}
	return st, nil
}
