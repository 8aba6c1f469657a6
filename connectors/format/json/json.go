package json

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/internal/jsonrow"
	"github.com/streamsql/streamsql/connectors/internal/option"
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
		Extension:  ".json",
		Options:    []string{OptFailOnMissingField, OptIgnoreParseErrors},
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
}

// Decoder reads JSON objects.
type Decoder struct {
	rows         *format.Rows
	r            *jsonrow.Reader
	ignoreErrors bool
}

// NewDecoder checks the options of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	d := &Decoder{rows: format.NewRows(s)}
	d.r = jsonrow.NewReader(d.rows.Cols)
	var err error
	if d.r.FailOnMissing, err = option.Bool(s.Options, s.Prefix+OptFailOnMissingField, false); err != nil {
		return nil, err
	}
	if d.ignoreErrors, err = option.Bool(s.Options, s.Prefix+OptIgnoreParseErrors, false); err != nil {
		return nil, err
	}
	if d.r.FailOnMissing && d.ignoreErrors {
		return nil, fmt.Errorf("'%s' and '%s' cannot both be true", s.Prefix+OptFailOnMissingField, s.Prefix+OptIgnoreParseErrors)
	}
	return d, nil
}

func (d *Decoder) IgnoreParseErrors() bool    { return d.ignoreErrors }
func (d *Decoder) Incomplete(rec []byte) bool { return false }
func (d *Decoder) Rows() int                  { return d.rows.Len() }
func (d *Decoder) Flush() arrow.RecordBatch   { return d.rows.Flush() }
func (d *Decoder) Release()                   { d.rows.Release() }

// Decode parses one JSON object.
func (d *Decoder) Decode(rec []byte) error {
	if err := jsonrow.CheckUTF8(rec); err != nil {
		return err
	}
	p, err := d.r.ReadObject(rec, jsonrow.SkipWS(rec, 0))
	if err != nil {
		return err
	}
	if p = jsonrow.SkipWS(rec, p); p != len(rec) {
		return fmt.Errorf("%w: unexpected text after the object at offset %d", jsonrow.ErrSyntax, p)
	}
	d.rows.Commit()
	return nil
}

// Encoder writes JSON objects.
type Encoder struct {
	w *jsonrow.Writer
}

// NewEncoder returns an encoder for the columns of s.
func NewEncoder(s format.Spec) (*Encoder, error) {
	return &Encoder{w: jsonrow.NewWriter(s.Schema)}, nil
}

// AppendRow appends row i of rec as one JSON object and a newline.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	return append(e.w.AppendObject(dst, rec, i), '\n')
}
