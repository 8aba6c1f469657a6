package sql

import "strings"

// CreateFunction is Flink's CREATE FUNCTION with WebAssembly for its
// language:
//
//	CREATE [TEMPORARY] FUNCTION [IF NOT EXISTS] name AS 'path/module.wasm' LANGUAGE WASM [WITH ('k' = 'v', ...)]
//
// Path is the module's file; the module declares the signature. Another
// LANGUAGE (Flink's default, JAVA, included), USING JAR and TEMPORARY
// SYSTEM are errors where they are written.
type CreateFunction struct {
	Span
	Name        string
	NamePos     Pos
	IfNotExists bool
	Temporary   bool
	Path        string
	PathPos     Pos
	Options     []Option
}

// DescribeFunction is DESCRIBE FUNCTION name (DESC FUNCTION name).
type DescribeFunction struct {
	Span
	Name    string
	NamePos Pos
}

// parseCreateFunction parses, after CREATE [TEMPORARY] FUNCTION, the rest of
// CreateFunction's grammar.
func (p *stmtParser) parseCreateFunction(temporary bool) (Statement, *Error) {
	cf := &CreateFunction{Span: p.span(p.lo, p.hi), Temporary: temporary}
	cf.IfNotExists = p.accept("IF", "NOT", "EXISTS")
	var err *Error
	if cf.Name, cf.NamePos, err = p.name("a function name"); err != nil {
		return nil, err
	}
	if strings.Contains(cf.Name, ".") {
		return nil, p.errAt(cf.NamePos.Offset, "a function name is not qualified (there is one catalog and one database): write %s", cf.Name[strings.LastIndexByte(cf.Name, '.')+1:])
	}
	if err := p.expect("AS", "expected AS and the module's path in quotes: AS 'path/module.wasm' LANGUAGE WASM"); err != nil {
		return nil, err
	}
	cf.PathPos = p.sc.pos(p.peek().off)
	if p.peek().kind != tokString {
		e := p.unexpected("a function here is a WebAssembly module: AS 'path/module.wasm' LANGUAGE WASM")
		if p.peek().isName() {
			e = p.errAt(p.peek().off, "a function here is a WebAssembly module, not a class: AS 'path/module.wasm' LANGUAGE WASM")
		}
		return nil, e
	}
	if cf.Path, err = p.stringLit("the module's path"); err != nil {
		return nil, err
	}
	if cf.Path == "" {
		return nil, p.errAt(cf.PathPos.Offset, "the module's path is empty")
	}
	t := p.peek()
	if !p.accept("LANGUAGE") {
		if t.is("USING") {
			return nil, p.errAt(t.off, "USING JAR is not supported: a function is a WebAssembly module (LANGUAGE WASM)")
		}
		e := p.errAt(t.off, "CREATE FUNCTION needs LANGUAGE WASM (Flink's default, JAVA, is not supported)")
		if !p.atEnd() {
			e = p.unexpected("expected LANGUAGE WASM")
		}
		e.Hint = "write AS '" + strings.ReplaceAll(cf.Path, "'", "''") + "' LANGUAGE WASM"
		return nil, e
	}
	lang := p.peek()
	if !lang.is("WASM") {
		if lang.kind == tokIdent {
			e := p.errAt(lang.off, "LANGUAGE %s is not supported", strings.ToUpper(lang.val))
			e.Hint = "functions are WebAssembly modules: LANGUAGE WASM"
			return nil, e
		}
		return nil, p.unexpected("expected WASM after LANGUAGE")
	}
	p.i++
	if t := p.peek(); t.is("USING") {
		return nil, p.errAt(t.off, "USING JAR is not supported: a function is a WebAssembly module (LANGUAGE WASM)")
	}
	if p.accept("WITH") {
		if cf.Options, err = p.options(); err != nil {
			return nil, err
		}
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected WITH (...) or the end of the statement")
	}
	return cf, nil
}

// parseDescribeFunction parses DESCRIBE|DESC FUNCTION name.
func (p *stmtParser) parseDescribeFunction() (Statement, *Error) {
	d := &DescribeFunction{Span: p.span(p.lo, p.hi)}
	p.i += 2 // DESCRIBE FUNCTION
	p.accept("EXTENDED")
	var err *Error
	if d.Name, d.NamePos, err = p.name("a function name"); err != nil {
		return nil, err
	}
	if !p.atEnd() {
		return nil, p.unexpected("expected the end of the statement")
	}
	return d, nil
}
