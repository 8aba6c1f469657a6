package csv

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/textenc"
	"github.com/streamsql/streamsql/types"
)

// Name is the value of the 'format' option.
const Name = "csv"

// Option keys, without prefix.
const (
	OptFieldDelimiter        = "field-delimiter"
	OptQuoteCharacter        = "quote-character"
	OptDisableQuoteCharacter = "disable-quote-character"
	OptEscapeCharacter       = "escape-character"
	OptAllowComments         = "allow-comments"
	OptIgnoreParseErrors     = "ignore-parse-errors"
	OptNullLiteral           = "null-literal"
)

func init() {
	format.Register(format.Format{
		Name:      Name,
		Flat:      true,
		Extension: ".csv",
		Options: []string{OptFieldDelimiter, OptQuoteCharacter, OptDisableQuoteCharacter,
			OptEscapeCharacter, OptAllowComments, OptIgnoreParseErrors, OptNullLiteral},
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
}

// config is the parsed options; quote and escape are -1 when disabled.
type config struct {
	delim         byte
	quote, escape int
	comments      bool
	ignoreErrors  bool
	null          []byte
	hasNull       bool
}

func parse(s format.Spec) (config, error) {
	c := config{quote: '"', escape: -1}
	if err := format.RefuseRows(Name, s.Schema); err != nil {
		return c, err
	}
	o, p := s.Options, s.Prefix
	var err error
	if c.delim, err = option.Char(o, p+OptFieldDelimiter, ','); err != nil {
		return c, err
	}
	q, err := option.Char(o, p+OptQuoteCharacter, '"')
	if err != nil {
		return c, err
	}
	c.quote = int(q)
	noQuote, err := option.Bool(o, p+OptDisableQuoteCharacter, false)
	if err != nil {
		return c, err
	}
	if noQuote {
		if _, ok := o[p+OptQuoteCharacter]; ok {
			return c, fmt.Errorf("'%s' and '%s' cannot both be set", p+OptQuoteCharacter, p+OptDisableQuoteCharacter)
		}
		c.quote = -1
	}
	if _, ok := o[p+OptEscapeCharacter]; ok {
		e, err := option.Char(o, p+OptEscapeCharacter, 0)
		if err != nil {
			return c, err
		}
		c.escape = int(e)
	}
	if c.comments, err = option.Bool(o, p+OptAllowComments, false); err != nil {
		return c, err
	}
	if c.ignoreErrors, err = option.Bool(o, p+OptIgnoreParseErrors, false); err != nil {
		return c, err
	}
	if v, ok := o[p+OptNullLiteral]; ok {
		c.null, c.hasNull = []byte(v), true
	}
	if int(c.delim) == c.quote || int(c.delim) == c.escape {
		return c, fmt.Errorf("'%s' must differ from the quote and escape characters", p+OptFieldDelimiter)
	}
	return c, nil
}

// Decoder reads CSV records.
type Decoder struct {
	c     config
	rows  *format.Rows
	ncols int
	buf   []byte // an unquoted value
}

// NewDecoder checks the options of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	c, err := parse(s)
	if err != nil {
		return nil, err
	}
	return &Decoder{c: c, rows: format.NewRows(s), ncols: len(s.Schema)}, nil
}

func (d *Decoder) IgnoreParseErrors() bool  { return d.c.ignoreErrors }
func (d *Decoder) Rows() int                { return d.rows.Len() }
func (d *Decoder) Flush() arrow.RecordBatch { return d.rows.Flush() }
func (d *Decoder) Release()                 { d.rows.Release() }

// Incomplete reports whether rec ends inside a quoted value.
func (d *Decoder) Incomplete(rec []byte) bool {
	if d.c.quote < 0 || bytes.IndexByte(rec, byte(d.c.quote)) < 0 {
		return false
	}
	in := false
	for i := 0; i < len(rec); i++ {
		switch c := int(rec[i]); {
		case c == d.c.escape:
			i++
		case c == d.c.quote:
			in = !in
		}
	}
	return in
}

// Decode parses one record.
func (d *Decoder) Decode(rec []byte) error {
	if d.c.comments && len(rec) > 0 && rec[0] == '#' {
		return nil
	}
	rec = bytes.TrimSuffix(rec, []byte{'\r'})
	field := 0
	pos := 0
	for {
		val, quoted, next, err := d.next(rec, pos)
		if err != nil {
			return err
		}
		if field < d.ncols {
			if ci := d.rows.ByField[field]; ci >= 0 {
				col := d.rows.Cols[ci]
				switch {
				case d.c.hasNull && bytes.Equal(val, d.c.null),
					len(val) == 0 && !quoted && col.Type.Kind != types.String:
					err = col.SetNull()
				default:
					err = col.Parse(val)
				}
				if err != nil {
					return err
				}
			}
		}
		field++
		if next < 0 {
			break
		}
		pos = next
	}
	if field != d.ncols {
		return fmt.Errorf("expected %d fields, got %d", d.ncols, field)
	}
	d.rows.Commit()
	return nil
}

// next returns the value starting at pos, whether it was quoted, and the
// position after its delimiter (-1 at the end of the record).
func (d *Decoder) next(rec []byte, pos int) ([]byte, bool, int, error) {
	c := d.c
	if c.quote >= 0 && pos < len(rec) && int(rec[pos]) == c.quote {
		d.buf = d.buf[:0]
		i := pos + 1
		for {
			if i >= len(rec) {
				return nil, false, 0, fmt.Errorf("unterminated quoted value")
			}
			ch := rec[i]
			switch {
			case int(ch) == c.escape && i+1 < len(rec):
				d.buf = append(d.buf, rec[i+1])
				i += 2
				continue
			case int(ch) == c.quote:
				if i+1 < len(rec) && int(rec[i+1]) == c.quote {
					d.buf = append(d.buf, ch)
					i += 2
					continue
				}
				i++
				if i == len(rec) {
					return d.buf, true, -1, nil
				}
				if rec[i] != c.delim {
					return nil, false, 0, fmt.Errorf("unexpected character %q after a quoted value", rec[i])
				}
				return d.buf, true, i + 1, nil
			}
			d.buf = append(d.buf, ch)
			i++
		}
	}
	if c.escape < 0 {
		end := bytes.IndexByte(rec[pos:], c.delim)
		if end < 0 {
			return rec[pos:], false, -1, nil
		}
		return rec[pos : pos+end], false, pos + end + 1, nil
	}
	d.buf = d.buf[:0]
	for i := pos; i < len(rec); i++ {
		switch ch := rec[i]; {
		case int(ch) == c.escape && i+1 < len(rec):
			i++
			d.buf = append(d.buf, rec[i])
		case ch == c.delim:
			return d.buf, false, i + 1, nil
		default:
			d.buf = append(d.buf, ch)
		}
	}
	return d.buf, false, -1, nil
}

// Encoder writes CSV records.
type Encoder struct {
	c      config
	schema types.Schema
	val    []byte
}

// NewEncoder checks the options of s and returns an encoder.
func NewEncoder(s format.Spec) (*Encoder, error) {
	c, err := parse(s)
	if err != nil {
		return nil, err
	}
	return &Encoder{c: c, schema: s.Schema}, nil
}

// AppendRow appends row i of rec as one CSV line.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	for c := range int(rec.NumCols()) {
		if c > 0 {
			dst = append(dst, e.c.delim)
		}
		col := rec.Column(c)
		if col.IsNull(i) {
			dst = append(dst, e.c.null...)
			continue
		}
		e.val = textenc.AppendValue(e.val[:0], e.schema[c].Type, col, i)
		dst = e.appendField(dst, e.val)
	}
	return append(dst, '\n')
}

func (e *Encoder) appendField(dst, v []byte) []byte {
	needs := e.c.hasNull && bytes.Equal(v, e.c.null) && len(v) > 0
	for _, ch := range v {
		if ch == e.c.delim || ch == '\n' || ch == '\r' || int(ch) == e.c.quote || int(ch) == e.c.escape {
			needs = true
			break
		}
	}
	if !needs {
		return append(dst, v...)
	}
	if e.c.quote < 0 {
		if e.c.escape < 0 {
			return append(dst, v...) // nothing can protect it; written as is
		}
		for _, ch := range v {
			if ch == e.c.delim || int(ch) == e.c.escape {
				dst = append(dst, byte(e.c.escape))
			}
			dst = append(dst, ch)
		}
		return dst
	}
	q := byte(e.c.quote)
	dst = append(dst, q)
	for _, ch := range v {
		if ch == q {
			dst = append(dst, q)
		} else if int(ch) == e.c.escape {
			dst = append(dst, ch)
		}
		dst = append(dst, ch)
	}
	return append(dst, q)
}
