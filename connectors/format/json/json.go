package json

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/textenc"
	"github.com/streamsql/streamsql/types"
)

// Name is the value of the 'format' option.
const Name = "json"

// Option keys, without prefix.
const (
	OptFailOnMissingField = "fail-on-missing-field"
	OptIgnoreParseErrors  = "ignore-parse-errors"
)

func init() {
	format.Register(format.Format{
		Name:       Name,
		Options:    []string{OptFailOnMissingField, OptIgnoreParseErrors},
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
}

// Decoder reads JSON objects.
type Decoder struct {
	rows          *format.Rows
	failOnMissing bool
	ignoreErrors  bool
	exact, folded map[string]int // member name -> index into rows.Cols
	seen          []uint64       // generation each column was last set in
	gen           uint64
	str, key      []byte
}

// NewDecoder checks the options of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	d := &Decoder{rows: format.NewRows(s), exact: map[string]int{}, folded: map[string]int{}}
	var err error
	if d.failOnMissing, err = option.Bool(s.Options, s.Prefix+OptFailOnMissingField, false); err != nil {
		return nil, err
	}
	if d.ignoreErrors, err = option.Bool(s.Options, s.Prefix+OptIgnoreParseErrors, false); err != nil {
		return nil, err
	}
	if d.failOnMissing && d.ignoreErrors {
		return nil, fmt.Errorf("'%s' and '%s' cannot both be true", s.Prefix+OptFailOnMissingField, s.Prefix+OptIgnoreParseErrors)
	}
	for i, c := range d.rows.Cols {
		d.exact[c.Name] = i
		d.folded[strings.ToLower(c.Name)] = i
	}
	d.seen = make([]uint64, len(d.rows.Cols))
	return d, nil
}

func (d *Decoder) IgnoreParseErrors() bool    { return d.ignoreErrors }
func (d *Decoder) Incomplete(rec []byte) bool { return false }
func (d *Decoder) Rows() int                  { return d.rows.Len() }
func (d *Decoder) Flush() arrow.RecordBatch   { return d.rows.Flush() }
func (d *Decoder) Release()                   { d.rows.Release() }

var errSyntax = errors.New("invalid JSON")

func (d *Decoder) column(name []byte) int {
	if i, ok := d.exact[string(name)]; ok {
		return i
	}
	if i, ok := d.folded[strings.ToLower(string(name))]; ok {
		return i
	}
	return -1
}

// Decode parses one JSON object.
func (d *Decoder) Decode(rec []byte) error {
	d.gen++
	p := skipWS(rec, 0)
	if p >= len(rec) || rec[p] != '{' {
		return fmt.Errorf("%w: expected an object", errSyntax)
	}
	p = skipWS(rec, p+1)
	if p < len(rec) && rec[p] == '}' {
		p++
	} else {
		for {
			if p >= len(rec) || rec[p] != '"' {
				return fmt.Errorf("%w: expected a member name at offset %d", errSyntax, p)
			}
			var err error
			d.key, p, err = unquote(d.key[:0], rec, p)
			if err != nil {
				return err
			}
			p = skipWS(rec, p)
			if p >= len(rec) || rec[p] != ':' {
				return fmt.Errorf("%w: expected ':' at offset %d", errSyntax, p)
			}
			p = skipWS(rec, p+1)
			ci := d.column(d.key)
			if p, err = d.value(rec, p, ci); err != nil {
				return err
			}
			p = skipWS(rec, p)
			if p < len(rec) && rec[p] == ',' {
				p = skipWS(rec, p+1)
				continue
			}
			if p < len(rec) && rec[p] == '}' {
				p++
				break
			}
			return fmt.Errorf("%w: expected ',' or '}' at offset %d", errSyntax, p)
		}
	}
	if p = skipWS(rec, p); p != len(rec) {
		return fmt.Errorf("%w: unexpected text after the object at offset %d", errSyntax, p)
	}
	for i, c := range d.rows.Cols {
		if d.seen[i] == d.gen {
			continue
		}
		if d.failOnMissing {
			return fmt.Errorf("column '%s': field is missing", c.Name)
		}
		if err := c.SetNull(); err != nil {
			return err
		}
	}
	d.rows.Commit()
	return nil
}

// value reads the value at p into column ci (-1: skip it) and returns the
// position after it.
func (d *Decoder) value(rec []byte, p, ci int) (int, error) {
	if p >= len(rec) {
		return p, fmt.Errorf("%w: expected a value", errSyntax)
	}
	var err error
	start := p
	switch c := rec[p]; {
	case c == '"':
		d.str, p, err = unquote(d.str[:0], rec, p)
		if err != nil || ci < 0 {
			return p, err
		}
		d.seen[ci] = d.gen
		return p, d.rows.Cols[ci].Parse(d.str)
	case c == '{' || c == '[':
		if p, err = skipNested(rec, p); err != nil || ci < 0 {
			return p, err
		}
		d.seen[ci] = d.gen
		col := d.rows.Cols[ci]
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
			return p, fmt.Errorf("%w: expected a value at offset %d", errSyntax, start)
		}
		if ci < 0 {
			return p, nil
		}
		d.seen[ci] = d.gen
		col := d.rows.Cols[ci]
		if string(tok) == "null" {
			return p, col.SetNull()
		}
		return p, col.Parse(tok)
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

func skipWS(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
		p++
	}
	return p
}

// skipNested returns the position after the object or array at p.
func skipNested(b []byte, p int) (int, error) {
	depth := 0
	for p < len(b) {
		switch b[p] {
		case '"':
			for p++; p < len(b) && b[p] != '"'; p++ {
				if b[p] == '\\' {
					p++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return p + 1, nil
			}
		}
		p++
	}
	return p, fmt.Errorf("%w: unterminated object or array", errSyntax)
}

// unquote appends the unescaped string starting at b[p] == '"' to dst and
// returns the position after the closing quote.
func unquote(dst, b []byte, p int) ([]byte, int, error) {
	p++
	for p < len(b) {
		c := b[p]
		switch {
		case c == '"':
			return dst, p + 1, nil
		case c != '\\':
			dst = append(dst, c)
			p++
			continue
		}
		if p+1 >= len(b) {
			break
		}
		p++
		switch b[p] {
		case '"', '\\', '/':
			dst = append(dst, b[p])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := hex4(b, p+1)
			if n < 0 {
				return dst, p, fmt.Errorf("%w: bad \\u escape", errSyntax)
			}
			p += n
			if r >= 0xd800 && r < 0xdc00 && p+2 < len(b) && b[p+1] == '\\' && b[p+2] == 'u' {
				if r2, m := hex4(b, p+3); m > 0 && r2 >= 0xdc00 && r2 < 0xe000 {
					r = (r-0xd800)<<10 + (r2 - 0xdc00) + 0x10000
					p += 2 + m
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, p, fmt.Errorf("%w: bad escape '\\%c'", errSyntax, b[p])
		}
		p++
	}
	return dst, p, fmt.Errorf("%w: unterminated string", errSyntax)
}

func hex4(b []byte, p int) (rune, int) {
	if p+4 > len(b) {
		return 0, -1
	}
	var r rune
	for _, c := range b[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, -1
		}
	}
	return r, 4
}

// Encoder writes JSON objects.
type Encoder struct {
	schema types.Schema
	names  [][]byte // "name": for each column
	val    []byte
}

// NewEncoder returns an encoder for the columns of s.
func NewEncoder(s format.Spec) (*Encoder, error) {
	e := &Encoder{schema: s.Schema}
	for _, c := range s.Schema {
		e.names = append(e.names, append(appendString(nil, []byte(c.Name)), ':'))
	}
	return e, nil
}

// AppendRow appends row i of rec as one JSON object and a newline.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	dst = append(dst, '{')
	for c := range int(rec.NumCols()) {
		if c > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, e.names[c]...)
		col, t := rec.Column(c), e.schema[c].Type
		if col.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		if t.Kind == types.Boolean {
			dst = textenc.AppendValue(dst, t, col, i)
			continue
		}
		e.val = textenc.AppendValue(e.val[:0], t, col, i)
		if textenc.IsNumber(t) && finite(col, i) {
			dst = append(dst, e.val...)
		} else {
			dst = appendString(dst, e.val)
		}
	}
	return append(dst, '}', '\n')
}

func finite(col arrow.Array, i int) bool {
	switch a := col.(type) {
	case *array.Float32:
		f := float64(a.Value(i))
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case *array.Float64:
		f := a.Value(i)
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
