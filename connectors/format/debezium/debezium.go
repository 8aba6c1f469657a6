package debezium

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/internal/jsonrow"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/textparse"
	"github.com/streamsql/streamsql/exec"
)

// Name is the value of the 'format' option.
const Name = "debezium-json"

// OptIgnoreParseErrors is the option key, without prefix.
const OptIgnoreParseErrors = "ignore-parse-errors"

// The values of "op".
const (
	opCreate = "c"
	opRead   = "r"
	opUpdate = "u"
	opDelete = "d"
)

func init() {
	format.Register(format.Format{
		Name:       Name,
		Extension:  ".json",
		Options:    []string{OptIgnoreParseErrors},
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
}

// Decoder reads Debezium change records into rows and their kinds. It
// implements format.ChangelogDecoder.
type Decoder struct {
	rows *format.Rows
	// first reads into rows.Cols, second into a second set of columns on
	// the same builders (the after image of an update), so both images
	// are parsed before either is appended.
	first, second *jsonrow.Reader
	secondCols    []*textparse.Column
	ignoreErrors  bool
	kinds         []exec.RowKind // of the rows appended since the last flush
	changes       bool           // some kind in kinds is not +I

	// The envelope of the record being decoded.
	rec           []byte
	before, after int // offsets of the images; -1 when null or absent
	op            []byte
	hasOp         bool
	key           []byte
	member        func(name []byte, p int) (int, error)
}

// NewDecoder checks the options of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	d := &Decoder{rows: format.NewRows(s)}
	var err error
	if d.ignoreErrors, err = option.Bool(s.Options, s.Prefix+OptIgnoreParseErrors, false); err != nil {
		return nil, err
	}
	d.first = jsonrow.NewReader(d.rows.Cols)
	d.secondCols = d.rows.Second()
	d.second = jsonrow.NewReader(d.secondCols)
	d.member = d.envelopeMember
	return d, nil
}

func (d *Decoder) IgnoreParseErrors() bool    { return d.ignoreErrors }
func (d *Decoder) Incomplete(rec []byte) bool { return false }
func (d *Decoder) Rows() int                  { return d.rows.Len() }
func (d *Decoder) Release()                   { d.rows.Release() }

// Flush returns the rows appended so far without their kinds; a reader of
// a changelog calls FlushChanges instead.
func (d *Decoder) Flush() arrow.RecordBatch {
	rec, _ := d.FlushChanges()
	return rec
}

// FlushChanges returns the rows appended so far and their kinds (nil when
// every row is +I).
func (d *Decoder) FlushChanges() (arrow.RecordBatch, []exec.RowKind) {
	var kinds []exec.RowKind
	if d.changes {
		kinds, d.kinds = d.kinds, nil
	} else {
		d.kinds = d.kinds[:0]
	}
	d.changes = false
	return d.rows.Flush(), kinds
}

func (d *Decoder) envelopeMember(name []byte, p int) (int, error) {
	var img *int
	switch string(name) {
	case "before":
		img = &d.before
	case "after":
		img = &d.after
	case "op":
		if p < len(d.rec) && d.rec[p] == '"' {
			var err error
			d.op, p, err = jsonrow.Unquote(d.op[:0], d.rec, p)
			d.hasOp = err == nil
			return p, err
		}
		end, err := jsonrow.SkipValue(d.rec, p)
		if err == nil && string(d.rec[p:end]) != "null" {
			err = fmt.Errorf(`"op" must be a string, not %s`, d.rec[p:end])
		}
		d.hasOp = false
		return end, err
	default:
		return jsonrow.SkipValue(d.rec, p)
	}
	end, err := jsonrow.SkipValue(d.rec, p)
	if err != nil {
		return end, err
	}
	switch {
	case d.rec[p] == '{':
		*img = p
	case string(d.rec[p:end]) == "null":
		*img = -1
	default:
		return end, fmt.Errorf(`"%s" must be an object or null, not %s`, name, d.rec[p:end])
	}
	return end, nil
}

// Decode parses one change record and appends its rows: one for a create,
// read or delete, two for an update.
func (d *Decoder) Decode(rec []byte) error {
	if err := jsonrow.CheckUTF8(rec); err != nil {
		return err
	}
	d.rec, d.before, d.after, d.hasOp = rec, -1, -1, false
	p, err := jsonrow.Members(rec, jsonrow.SkipWS(rec, 0), &d.key, d.member)
	d.rec = nil
	if err != nil {
		return err
	}
	if p = jsonrow.SkipWS(rec, p); p != len(rec) {
		return fmt.Errorf("%w: unexpected text after the object at offset %d", jsonrow.ErrSyntax, p)
	}
	if !d.hasOp {
		return errors.New(`the "op" field is missing`)
	}
	switch string(d.op) {
	case opCreate, opRead:
		if d.after < 0 {
			return fmt.Errorf(`the "after" field of a %q message is null`, d.op)
		}
		if _, err := d.first.ReadObject(rec, d.after); err != nil {
			return fmt.Errorf("after: %w", err)
		}
		d.commit(d.rows.Cols, exec.Insert)
	case opUpdate:
		if d.before < 0 {
			return fmt.Errorf(`the "before" field of an update message is null (Debezium's Postgres connector sends the old row only for tables with REPLICA IDENTITY FULL)`)
		}
		if d.after < 0 {
			return fmt.Errorf(`the "after" field of an update message is null`)
		}
		if _, err := d.first.ReadObject(rec, d.before); err != nil {
			return fmt.Errorf("before: %w", err)
		}
		if _, err := d.second.ReadObject(rec, d.after); err != nil {
			return fmt.Errorf("after: %w", err)
		}
		d.commit(d.rows.Cols, exec.UpdateBefore)
		d.commit(d.secondCols, exec.UpdateAfter)
	case opDelete:
		if d.before < 0 {
			return fmt.Errorf(`the "before" field of a delete message is null (Debezium's Postgres connector sends the old row only for tables with REPLICA IDENTITY FULL)`)
		}
		if _, err := d.first.ReadObject(rec, d.before); err != nil {
			return fmt.Errorf("before: %w", err)
		}
		d.commit(d.rows.Cols, exec.Delete)
	default:
		return fmt.Errorf(`unknown "op" value %q`, d.op)
	}
	return nil
}

func (d *Decoder) commit(cols []*textparse.Column, k exec.RowKind) {
	d.rows.CommitCols(cols)
	d.kinds = append(d.kinds, k)
	d.changes = d.changes || k != exec.Insert
}

// Encoder writes rows as Debezium change records. It implements
// format.ChangelogEncoder.
type Encoder struct {
	w *jsonrow.Writer
}

// NewEncoder returns an encoder for the columns of s.
func NewEncoder(s format.Spec) (*Encoder, error) {
	if _, err := option.Bool(s.Options, s.Prefix+OptIgnoreParseErrors, false); err != nil {
		return nil, err
	}
	return &Encoder{w: jsonrow.NewWriter(s.Schema)}, nil
}

// AppendRow appends row i of rec as the record of an insert.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	return e.AppendChange(dst, rec, i, exec.Insert)
}

// AppendChange appends row i of rec, of kind k, as Flink writes it: +I and
// +U as a create ("op":"c", the row in "after"), -U and -D as a delete
// ("op":"d", the row in "before").
func (e *Encoder) AppendChange(dst []byte, rec arrow.RecordBatch, i int, k exec.RowKind) []byte {
	if k.IsRetract() {
		dst = append(dst, `{"before":`...)
		dst = e.w.AppendObject(dst, rec, i)
		return append(dst, `,"after":null,"op":"d"}`+"\n"...)
	}
	dst = append(dst, `{"before":null,"after":`...)
	dst = e.w.AppendObject(dst, rec, i)
	return append(dst, `,"op":"c"}`+"\n"...)
}

var (
	_ format.ChangelogDecoder = (*Decoder)(nil)
	_ format.ChangelogEncoder = (*Encoder)(nil)
)
