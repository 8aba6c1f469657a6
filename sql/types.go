package sql

import (
	"strconv"
	"strings"
)

// typeName parses a type as written: a name, optional arguments in
// parentheses and Flink's multi-word suffixes. Name is upper case, words
// separated by one space, without the arguments:
//
//	INT                               -> INT
//	VARCHAR(10)                       -> VARCHAR [10]
//	DECIMAL(10, 2)                    -> DECIMAL [10 2]
//	DOUBLE PRECISION                  -> DOUBLE PRECISION
//	CHARACTER VARYING(5)              -> CHARACTER VARYING [5]
//	TIMESTAMP(3) WITH LOCAL TIME ZONE -> TIMESTAMP WITH LOCAL TIME ZONE [3]
//	TIMESTAMP WITHOUT TIME ZONE       -> TIMESTAMP WITHOUT TIME ZONE
//	BIGINT UNSIGNED                   -> BIGINT UNSIGNED
//
// Which names mean which type is the catalog's business; any identifier is
// accepted here.
func (p *stmtParser) typeName() (TypeName, *Error) {
	t := p.peek()
	if t.kind != tokIdent {
		return TypeName{}, p.unexpected("expected a type such as INT, BIGINT, DOUBLE, VARCHAR, TIMESTAMP(3)")
	}
	tn := TypeName{Name: strings.ToUpper(t.val), Pos: p.sc.pos(t.off)}
	p.i++
	if tn.Name == "ROW" && (p.peek().isPunct("<") || p.peek().isPunct("(")) {
		return p.rowType(tn)
	}
	if p.peek().isPunct("<") || (p.peek().isPunct("(") && (tn.Name == "ARRAY" || tn.Name == "MAP" || tn.Name == "MULTISET")) {
		return TypeName{}, p.errAt(t.off, "composite type %s is not supported", tn.Name)
	}
	switch {
	case tn.Name == "DOUBLE" && p.accept("PRECISION"):
		tn.Name = "DOUBLE PRECISION"
	case tn.Name == "CHARACTER" && p.accept("VARYING"):
		tn.Name = "CHARACTER VARYING"
	}
	if p.peek().isPunct("(") {
		p.i++
		for {
			n := p.peek()
			if n.kind != tokNumber {
				return TypeName{}, p.unexpected("expected a number")
			}
			v, err := strconv.Atoi(n.val)
			if err != nil || v < 0 {
				return TypeName{}, p.errAt(n.off, "type argument %s must be a non-negative integer", n.val)
			}
			tn.Args = append(tn.Args, v)
			p.i++
			if p.acceptPunct(",") {
				continue
			}
			if err := p.expectPunct(")", "expected ',' or ')'"); err != nil {
				return TypeName{}, err
			}
			break
		}
	}
	switch {
	case p.accept("WITH", "LOCAL", "TIME", "ZONE"):
		tn.Name += " WITH LOCAL TIME ZONE"
	case p.accept("WITHOUT", "TIME", "ZONE"):
		tn.Name += " WITHOUT TIME ZONE"
	case p.accept("UNSIGNED"):
		tn.Name += " UNSIGNED"
	}
	return tn, nil
}

// rowType parses the fields of ROW<name TYPE [NOT NULL] ['description'],
// ...> or ROW(...), the ROW already consumed.
func (p *stmtParser) rowType(tn TypeName) (TypeName, *Error) {
	closer := ">"
	if p.peek().isPunct("(") {
		closer = ")"
	}
	p.i++
	for {
		t := p.peek()
		if !t.isName() {
			return TypeName{}, p.unexpected("expected a field name: ROW<name TYPE, ...>")
		}
		f := FieldDef{Name: t.val, Pos: p.sc.pos(t.off)}
		p.i++
		var err *Error
		if f.Type, err = p.typeName(); err != nil {
			return TypeName{}, err
		}
		if p.accept("NOT", "NULL") {
			f.NotNull = true
		} else {
			p.accept("NULL")
		}
		if p.peek().kind == tokString {
			f.Description = p.peek().val
			p.i++
		}
		for _, g := range tn.Fields {
			if strings.EqualFold(g.Name, f.Name) {
				return TypeName{}, Errorf(f.Pos, "field '%s' is declared twice in ROW", f.Name)
			}
		}
		tn.Fields = append(tn.Fields, f)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(closer, "expected ',' or '"+closer+"' in ROW"+map[string]string{">": "<...>", ")": "(...)"}[closer]); err != nil {
			return TypeName{}, err
		}
		return tn, nil
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
