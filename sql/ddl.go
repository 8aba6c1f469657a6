package sql

import "strings"

// parseCreate parses CREATE [OR REPLACE] [TEMPORARY] TABLE ... and
// CREATE [OR REPLACE] [TEMPORARY] VIEW ....
func (p *stmtParser) parseCreate() (Statement, *Error) {
	p.i++ // CREATE
	if p.peek().is("OR") && p.peekAt(1).is("REPLACE") {
		return p.parseCreateOrReplace()
	}
	temporary := p.accept("TEMPORARY") || p.accept("TEMP")
	if temporary && p.peek().is("SYSTEM") && p.peekAt(1).is("FUNCTION") {
		e := p.errAt(p.peek().off, "CREATE TEMPORARY SYSTEM FUNCTION is not supported")
		e.Hint = "a user function may not shadow a built-in one: CREATE TEMPORARY FUNCTION"
		return nil, e
	}
	switch {
	case p.accept("FUNCTION"):
		return p.parseCreateFunction(temporary)
	case p.accept("TABLE"):
		return p.parseCreateTable(temporary)
	case p.accept("VIEW"):
		return p.parseCreateView(temporary)
	case p.accept("MATERIALIZED", "VIEW"):
		// RisingWave's materialized view is a view here: its query runs
		// when the view is read (documented in doc.go).
		return p.parseCreateView(temporary)
	}
	if p.peek().is("INDEX") || (p.peek().is("UNIQUE") && p.peekAt(1).is("INDEX")) {
		return p.parseCreateIndex()
	}
	if t := p.peek(); t.kind == tokIdent && !p.atEnd() {
		what := strings.ToUpper(t.val)
		if what == "UNIQUE" || what == "MATERIALIZED" || what == "OR" {
			what += " " + strings.ToUpper(p.peekAt(1).val)
		}
		switch what {
		case "CATALOG", "DATABASE", "SCHEMA",
			"SOURCE", "SINK":
			return nil, p.errAt(t.off, "CREATE %s is not supported", what)
		case "TRIGGER":
			return nil, triggers(p.errAt(t.off, "CREATE TRIGGER is not supported"))
		}
	}
	return nil, p.unexpected("expected TABLE, VIEW or FUNCTION after CREATE")
}

// triggers adds to e why triggers are refused: a trigger accepted and not
// run would be a silent wrong answer.
func triggers(e *Error) *Error {
	e.Hint = "there are no triggers: a query over a table's changes (INSERT INTO ... SELECT) is the streaming form"
	return e
}

// parseCreateTable parses, after CREATE TABLE:
//
//	[IF NOT EXISTS] name ( element, ... ) [COMMENT 'text'] [APPEND ONLY] [WITH ('k' = 'v', ...)]
//	element: column | WATERMARK FOR col AS expr | [CONSTRAINT n] PRIMARY KEY (cols) [NOT ENFORCED]
//	column:  name type [NOT NULL | NULL | PRIMARY KEY [NOT ENFORCED] | COMMENT 'text' | METADATA [FROM 'key'] [VIRTUAL]]...
//	       | name AS expr [COMMENT 'text']
func (p *stmtParser) parseCreateTable(temporary bool) (Statement, *Error) {
	ct := &CreateTable{Span: p.span(p.lo, p.hi), Temporary: temporary}
	ct.IfNotExists = p.accept("IF", "NOT", "EXISTS")
	var err *Error
	if ct.Name, ct.NamePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if p.peek().is("AS") || p.peek().is("LIKE") {
		return nil, p.errAt(p.peek().off, "CREATE TABLE ... %s is not supported", strings.ToUpper(p.peek().val))
	}
	if err := p.expectPunct("(", "expected '(' and the columns of the table"); err != nil {
		return nil, err
	}
	pkPos := -1
	for {
		t := p.peek()
		switch {
		case t.isPunct(")"):
			return nil, p.unexpected("expected a column definition")
		case t.is("WATERMARK") && p.peekAt(1).is("FOR"):
			if ct.Watermark != nil {
				return nil, p.errAt(t.off, "a table can have only one WATERMARK")
			}
			if ct.Watermark, err = p.watermark(); err != nil {
				return nil, err
			}
		case (t.is("PRIMARY") && p.peekAt(1).is("KEY")) || (t.is("CONSTRAINT") && p.peekAt(2).is("PRIMARY")):
			if pkPos >= 0 {
				return nil, p.errAt(t.off, "a table can have only one PRIMARY KEY")
			}
			pkPos = t.off
			if p.accept("CONSTRAINT") {
				if _, _, err := p.name("a constraint name"); err != nil {
					return nil, err
				}
			}
			p.i += 2 // PRIMARY KEY
			if ct.PrimaryKey, err = p.nameList("column name"); err != nil {
				return nil, err
			}
			p.accept("NOT", "ENFORCED")
		case (t.is("UNIQUE") || t.is("INDEX") || t.is("KEY") || t.is("FOREIGN") || t.is("CHECK")) && !p.columnNamed():
			return nil, p.errAt(t.off, "%s constraints are not supported", strings.ToUpper(t.val))
		default:
			col, pk, err := p.column()
			if err != nil {
				return nil, err
			}
			if pk {
				if pkPos >= 0 {
					return nil, p.errAt(col.Pos.Offset, "a table can have only one PRIMARY KEY")
				}
				pkPos = col.Pos.Offset
				ct.PrimaryKey = []string{col.Name}
			}
			for _, c := range ct.Columns {
				if strings.EqualFold(c.Name, col.Name) {
					return nil, p.errAt(col.Pos.Offset, "column %s is defined twice", col.Name)
				}
			}
			ct.Columns = append(ct.Columns, col)
		}
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')' after the column definition"); err != nil {
			return nil, err
		}
		break
	}
	for !p.atEnd() {
		switch {
		case p.accept("COMMENT"):
			s, err := p.stringLit("a comment")
			if err != nil {
				return nil, err
			}
			ct.Comment = s
		case p.peek().is("WITH"):
			if ct.Options != nil {
				return nil, p.unexpected("only one WITH clause is allowed")
			}
			p.i++
			if ct.Options, err = p.options(); err != nil {
				return nil, err
			}
		case p.accept("APPEND", "ONLY"):
			// RisingWave's append-only table (documented in doc.go).
			ct.AppendOnly = true
		case p.peek().is("PARTITIONED") && p.peekAt(1).is("BY"):
			if ct.PartitionKeys != nil {
				return nil, p.unexpected("only one PARTITIONED BY clause is allowed")
			}
			ct.PartitionPos = p.sc.pos(p.peek().off)
			p.i += 2
			if ct.PartitionKeys, err = p.nameList("column name"); err != nil {
				return nil, err
			}
		default:
			return nil, p.unexpected("expected WITH ('key' = 'value', ...), APPEND ONLY or the end of the statement")
		}
	}
	return ct, nil
}

// watermark parses WATERMARK FOR col AS expr; the expression ends at a ','
// or ')' outside parentheses.
func (p *stmtParser) watermark() (*Watermark, *Error) {
	wm := &Watermark{Pos: p.sc.pos(p.peek().off)}
	p.i += 2 // WATERMARK FOR
	var err *Error
	if wm.Column, _, err = p.name("the event-time column"); err != nil {
		return nil, err
	}
	if err := p.expect("AS", "expected AS and the watermark expression, e.g. WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"); err != nil {
		return nil, err
	}
	lo, hi := p.i, p.exprEnd(p.i)
	if wm.Expr, err = p.parseExpr(lo, hi); err != nil {
		return nil, err
	}
	wm.ExprText = p.sc.text[p.sc.toks[lo].off:p.sc.toks[hi-1].end]
	p.i = hi
	return wm, nil
}

// column parses one column definition; pk says it carries PRIMARY KEY.
func (p *stmtParser) column() (ColumnDef, bool, *Error) {
	var col ColumnDef
	var err *Error
	if col.Name, col.Pos, err = p.name("a column name"); err != nil {
		return col, false, err
	}
	if p.accept("AS") {
		lo, hi := p.i, p.exprEnd(p.i)
		// COMMENT 'text' may follow the expression.
		exprHi := hi
		if hi-lo >= 2 && p.sc.toks[hi-2].is("COMMENT") && p.sc.toks[hi-1].kind == tokString {
			exprHi = hi - 2
			col.Comment = p.sc.toks[hi-1].val
		}
		if col.Expr, err = p.parseExpr(lo, exprHi); err != nil {
			return col, false, err
		}
		col.ExprText = p.sc.text[p.sc.toks[lo].off:p.sc.toks[exprHi-1].end]
		p.i = hi
		return col, false, nil
	}
	if t := p.peek(); t.isPunct(",") || t.isPunct(")") || p.atEnd() {
		return col, false, p.unexpected("expected the type of column " + col.Name)
	}
	if col.Type, err = p.typeName(); err != nil {
		return col, false, err
	}
	pk := false
	for {
		switch {
		case p.accept("NOT", "NULL"):
			col.NotNull = true
		case p.accept("NULL"):
		case p.accept("PRIMARY", "KEY"):
			pk = true
			p.accept("NOT", "ENFORCED")
		case p.accept("COMMENT"):
			if col.Comment, err = p.stringLit("a comment"); err != nil {
				return col, false, err
			}
		case p.accept("METADATA"):
			col.Metadata = col.Name
			if p.accept("FROM") {
				if col.Metadata, err = p.stringLit("the metadata key"); err != nil {
					return col, false, err
				}
			}
			col.Virtual = p.accept("VIRTUAL")
		case p.accept("UNIQUE"):
			col.Unique = true
		case p.peek().is("DEFAULT") || p.peek().is("AUTO_INCREMENT") || p.peek().is("REFERENCES") || p.peek().is("CHECK"):
			return col, false, p.errAt(p.peek().off, "column option %s is not supported", strings.ToUpper(p.peek().val))
		default:
			return col, pk, nil
		}
	}
}

// stringLit parses a 'string literal'.
func (p *stmtParser) stringLit(what string) (string, *Error) {
	t := p.peek()
	if t.kind != tokString {
		return "", p.unexpected("expected " + what + " in single quotes")
	}
	p.i++
	return t.val, nil
}

// options parses ('key' = 'value', ...). Keys may also be written unquoted
// (connector = 'kafka', properties.bootstrap.servers = '...'); values must
// be string literals, as in Flink.
func (p *stmtParser) options() ([]Option, *Error) {
	if err := p.expectPunct("(", "expected '(' after WITH"); err != nil {
		return nil, err
	}
	opts := []Option{}
	if p.acceptPunct(")") {
		return opts, nil
	}
	for {
		t := p.peek()
		o := Option{Pos: p.sc.pos(t.off)}
		switch {
		case t.kind == tokString:
			o.Key = t.val
			p.i++
		case t.kind == tokIdent || t.kind == tokQuoted:
			// An unquoted key runs up to '=': a.b-c.d.
			lo := p.i
			for !p.atEnd() && !p.peek().isPunct("=") && !p.peek().isPunct(",") && !p.peek().isPunct(")") {
				p.i++
			}
			o.Key = p.sc.text[p.sc.toks[lo].off:p.sc.toks[p.i-1].end]
			if t.kind == tokQuoted && p.i == lo+1 {
				o.Key = t.val
			}
		default:
			return nil, p.unexpected("expected an option key such as 'connector'")
		}
		if err := p.expectPunct("=", "expected '=' after the option key"); err != nil {
			return nil, err
		}
		v := p.peek()
		if v.kind != tokString {
			if p.atEnd() || v.isPunct(",") || v.isPunct(")") {
				return nil, p.unexpected("expected the value of option '" + o.Key + "'")
			}
			e := p.errAt(v.off, "WITH option value must be a quoted string")
			e.Hint = "write '" + strings.ReplaceAll(v.val, "'", "''") + "'"
			return nil, e
		}
		o.Value = v.val
		p.i++
		for _, prev := range opts {
			if prev.Key == o.Key {
				return nil, p.errAt(o.Pos.Offset, "option '%s' is given twice", o.Key)
			}
		}
		opts = append(opts, o)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')' after the option"); err != nil {
			return nil, err
		}
		return opts, nil
	}
}

// parseCreateView parses, after CREATE [TEMPORARY] VIEW:
//
//	[IF NOT EXISTS] name [(col, ...)] AS query
func (p *stmtParser) parseCreateView(temporary bool) (Statement, *Error) {
	cv := &CreateView{Span: p.span(p.lo, p.hi), Temporary: temporary}
	cv.IfNotExists = p.accept("IF", "NOT", "EXISTS")
	var err *Error
	if cv.Name, cv.NamePos, err = p.name("a view name"); err != nil {
		return nil, err
	}
	if p.peek().isPunct("(") {
		if cv.Columns, err = p.nameList("column name"); err != nil {
			return nil, err
		}
	}
	if err := p.expect("AS", "expected AS and the view's query"); err != nil {
		return nil, err
	}
	if cv.Query, err = p.parseQuery(p.i); err != nil {
		return nil, err
	}
	cv.QueryText = p.sc.text[p.sc.toks[p.i].off:p.end]
	return cv, nil
}

// parseDrop parses DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name.
func (p *stmtParser) parseDrop() (Statement, *Error) {
	d := &Drop{Span: p.span(p.lo, p.hi)}
	p.i++ // DROP
	d.Temporary = p.accept("TEMPORARY") || p.accept("TEMP")
	switch {
	case p.accept("FUNCTION"):
		d.Kind = DropFunction
	case d.Temporary && p.peek().is("SYSTEM") && p.peekAt(1).is("FUNCTION"):
		return nil, p.errAt(p.peek().off, "DROP TEMPORARY SYSTEM FUNCTION is not supported: built-in functions are not dropped")
	case p.accept("TABLE"):
		d.Kind = DropTable
	case p.accept("VIEW"), p.accept("MATERIALIZED", "VIEW"):
		d.Kind = DropView
	case p.peek().is("INDEX"):
		return p.parseDropIndex()
	case p.peek().is("TRIGGER"):
		return nil, triggers(p.errAt(p.sc.toks[p.i].off, "DROP TRIGGER is not supported"))
	default:
		return nil, p.unexpected("expected TABLE, VIEW, FUNCTION or INDEX after DROP")
	}
	d.IfExists = p.accept("IF", "EXISTS")
	var err *Error
	if d.Name, d.NamePos, err = p.name("a name"); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return d, nil
}

// parseCreateIndex parses, after CREATE:
//
//	[UNIQUE] INDEX [IF NOT EXISTS] name ON table ( column [ASC|DESC], ... )
func (p *stmtParser) parseCreateIndex() (Statement, *Error) {
	ix := &Index{Span: p.span(p.lo, p.hi), Kind: CreateIndex, Unique: p.accept("UNIQUE")}
	p.i++ // INDEX
	ix.IfNotExists = p.accept("IF", "NOT", "EXISTS")
	var err *Error
	if ix.Name, ix.NamePos, err = p.name("an index name"); err != nil {
		return nil, err
	}
	if err := p.expect("ON", "expected ON and the table"); err != nil {
		return nil, err
	}
	if ix.Table, ix.TablePos, err = p.name("a table name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "expected '(' and the indexed columns"); err != nil {
		return nil, err
	}
	for {
		if _, _, err := p.name("a column name"); err != nil {
			return nil, err
		}
		_ = p.accept("ASC") || p.accept("DESC")
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
			return nil, err
		}
		break
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return ix, nil
}

// parseDropIndex parses, after DROP: INDEX [IF EXISTS] name.
func (p *stmtParser) parseDropIndex() (Statement, *Error) {
	ix := &Index{Span: p.span(p.lo, p.hi), Kind: DropIndex}
	p.i++ // INDEX
	ix.IfExists = p.accept("IF", "EXISTS")
	var err *Error
	if ix.Name, ix.NamePos, err = p.name("an index name"); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return ix, nil
}

// parseReindex parses REINDEX [name] (a table or an index).
func (p *stmtParser) parseReindex() (Statement, *Error) {
	ix := &Index{Span: p.span(p.lo, p.hi), Kind: Reindex}
	p.i++ // REINDEX
	if !p.atEnd() {
		var err *Error
		if ix.Name, ix.NamePos, err = p.name("a table or index name"); err != nil {
			return nil, err
		}
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return ix, nil
}

// columnNamed reports whether the column definitions' next word, one that
// can start a constraint (KEY, INDEX, UNIQUE, ...), is rather the name of
// a column: Flink reserves none of them (a column `key` of q13). It is a
// column when a type follows, and a type is a word not followed by '(' or
// followed by '(' and a number (VARCHAR(10)), where a constraint has its
// column list (KEY k (a)) or a KEY/INDEX (UNIQUE KEY ...).
func (p *stmtParser) columnNamed() bool {
	n := p.peekAt(1)
	if n.kind != tokIdent || n.is("KEY") || n.is("INDEX") {
		return false
	}
	return !p.peekAt(2).isPunct("(") || p.peekAt(3).kind == tokNumber
}
