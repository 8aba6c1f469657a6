package jsonrow

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/connectors/internal/textparse"
	"github.com/streamsql/streamsql/types"
)

// Reader parses JSON objects into the values a set of columns hold: the
// members are matched to columns by name, exactly first and then ignoring
// case; unknown members are skipped. A value may be a JSON number, string,
// boolean or null for any column of a matching type, and a string holding
// the value for any type; a nested object is read into a ROW column (its
// members are the row's fields, matched the same way) and a nested object
// or array into a STRING column as its JSON text.
type Reader struct {
	cols []*textparse.Column
	// FailOnMissing makes a column with no member an error instead of NULL.
	FailOnMissing bool
	exact, folded map[string]int // member name -> index into cols
	// sub reads the nested object of a ROW column (nil for the others).
	sub      []*Reader
	seen     []uint64 // generation each column was last set in
	gen      uint64
	str, key []byte
}

// NewReader returns a reader filling cols.
func NewReader(cols []*textparse.Column) *Reader {
	r := &Reader{cols: cols, exact: map[string]int{}, folded: map[string]int{}, seen: make([]uint64, len(cols)), sub: make([]*Reader, len(cols))}
	for i, c := range cols {
		r.exact[c.Name] = i
		r.folded[strings.ToLower(c.Name)] = i
		if c.Type.Kind == types.Row {
			r.sub[i] = NewReader(c.Fields)
		}
	}
	return r
}

func (r *Reader) column(name []byte) int {
	if i, ok := r.exact[string(name)]; ok {
		return i
	}
	if i, ok := r.folded[strings.ToLower(string(name))]; ok {
		return i
	}
	return -1
}

// ReadObject parses the object at b[p] into the columns' held values
// (NULL for a column without a member) and returns the position after it.
// On error the held values are unspecified.
func (r *Reader) ReadObject(b []byte, p int) (int, error) {
	r.gen++
	// The loop of Members, without its call per member.
	if p >= len(b) || b[p] != '{' {
		return p, fmt.Errorf("%w: expected an object", ErrSyntax)
	}
	p = SkipWS(b, p+1)
	if p < len(b) && b[p] == '}' {
		p++
	} else {
		for {
			if p >= len(b) || b[p] != '"' {
				return p, fmt.Errorf("%w: expected a member name at offset %d", ErrSyntax, p)
			}
			var err error
			r.key, p, err = Unquote(r.key[:0], b, p)
			if err != nil {
				return p, err
			}
			p = SkipWS(b, p)
			if p >= len(b) || b[p] != ':' {
				return p, fmt.Errorf("%w: expected ':' at offset %d", ErrSyntax, p)
			}
			p = SkipWS(b, p+1)
			if p, err = r.value(b, p, r.column(r.key)); err != nil {
				return p, err
			}
			p = SkipWS(b, p)
			if p < len(b) && b[p] == ',' {
				p = SkipWS(b, p+1)
				continue
			}
			if p < len(b) && b[p] == '}' {
				p++
				break
			}
			return p, fmt.Errorf("%w: expected ',' or '}' at offset %d", ErrSyntax, p)
		}
	}
	for i, c := range r.cols {
		if r.seen[i] == r.gen {
			continue
		}
		if r.FailOnMissing {
			return p, fmt.Errorf("column '%s': field is missing", c.Name)
		}
		if err := c.SetNull(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// value reads the value at p into column ci (-1: skip it) and returns the
// position after it.
func (r *Reader) value(rec []byte, p, ci int) (int, error) {
	if p >= len(rec) {
		return p, fmt.Errorf("%w: expected a value", ErrSyntax)
	}
	var err error
	start := p
	switch c := rec[p]; {
	case c == '"':
		r.str, p, err = Unquote(r.str[:0], rec, p)
		if err != nil || ci < 0 {
			return p, err
		}
		r.seen[ci] = r.gen
		return p, r.cols[ci].Parse(r.str)
	case c == '{' && ci >= 0 && r.sub[ci] != nil:
		// A ROW column: the object's members are its fields.
		r.seen[ci] = r.gen
		col, sub := r.cols[ci], r.sub[ci]
		sub.FailOnMissing = r.FailOnMissing
		if p, err = sub.ReadObject(rec, p); err != nil {
			return p, fmt.Errorf("column '%s': %w", col.Name, err)
		}
		col.SetRow()
		return p, nil
	case c == '{' || c == '[':
		if p, err = skipNested(rec, p); err != nil || ci < 0 {
			return p, err
		}
		r.seen[ci] = r.gen
		col := r.cols[ci]
		if col.Type.Kind != types.String {
			return p, fmt.Errorf("column '%s': cannot read a JSON %s as %s", col.Name, map[byte]string{'{': "object", '[': "array"}[c], col.Type)
		}
		return p, col.Parse(rec[start:p])
	default:
		for p < len(rec) && !isDelim(rec[p]) {
			p++
		}
		tok := rec[start:p]
		if len(tok) == 0 {
			return p, fmt.Errorf("%w: expected a value at offset %d", ErrSyntax, start)
		}
		if err := checkLiteral(tok, start); err != nil {
			return p, err
		}
		if ci < 0 {
			return p, nil
		}
		r.seen[ci] = r.gen
		col := r.cols[ci]
		if string(tok) == "null" {
			return p, col.SetNull()
		}
		return p, col.Parse(tok)
	}
}
