package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/raw"
	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// valueColumns are the indexes of the table columns the value holds.
func (c *config) valueColumns() []int {
	var out []int
	for i := range c.schema {
		if !c.exceptKey || !slices.Contains(c.keyFields, i) {
			out = append(out, i)
		}
	}
	return out
}

// keySchema is the row type the key format reads and writes: the key
// columns, named without 'key.fields-prefix'.
func (c *config) keySchema() types.Schema {
	out := make(types.Schema, len(c.keyFields))
	for i, f := range c.keyFields {
		out[i] = c.schema[f]
		out[i].Name = strings.TrimPrefix(out[i].Name, c.keyNamesPrefix)
	}
	return out
}

func (c *config) subSchema(cols []int) types.Schema {
	out := make(types.Schema, len(cols))
	for i, f := range cols {
		out[i] = c.schema[f]
	}
	return out
}

// errKeyPart and errValuePart tell which part of a message did not decode.
var (
	errKeyPart   = errors.New("key")
	errValuePart = errors.New("value")
)

// partError is a decoding error of the key or the value of a message.
type partError struct {
	part error
	err  error
}

func (e *partError) Error() string   { return e.part.Error() + ": " + e.err.Error() }
func (e *partError) Unwrap() []error { return []error{e.part, e.err} }

// part is the decoder of the key or the value. Rows it appended that the
// message as a whole did not (the value decoded, the key did not) are
// dropped from its batch at the flush.
type part struct {
	dec   format.Decoder
	drops []int
	mem   memory.Allocator
}

func (p *part) flush(n int) (arrow.RecordBatch, error) {
	rec := p.dec.Flush()
	if len(p.drops) == 0 {
		return rec, nil
	}
	defer func() { p.drops = p.drops[:0] }()
	if rec.NumCols() == 0 {
		rec.Release()
		return array.NewRecordBatch(rec.Schema(), nil, int64(n)), nil
	}
	mb := array.NewBooleanBuilder(p.mem)
	defer mb.Release()
	total := int(rec.NumRows())
	keep := make([]bool, total)
	for i := range keep {
		keep[i] = true
	}
	for _, d := range p.drops {
		keep[d] = false
	}
	mb.AppendValues(keep, nil)
	mask := mb.NewBooleanArray()
	defer mask.Release()
	defer rec.Release()
	out, err := compute.FilterRecordBatch(compute.WithAllocator(context.Background(), p.mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("dropping a half-decoded row: %w", err)
	}
	return out, nil
}

// colRef locates a produced column in the key's or the value's batch.
type colRef struct {
	fromKey bool
	idx     int
}

// rowDecoder assembles the rows a source produces from the key and the
// value of each message, decoding straight into the formats' Arrow
// builders.
type rowDecoder struct {
	value  part
	key    *part // nil when no produced column comes from the key
	out    []colRef
	schema *arrow.Schema
	// nullValue: a message without a value is a row of NULLs (raw) rather
	// than skipped.
	nullValue bool
	// nullKey is the record the key format reads as a key of NULLs, for a
	// message without a key.
	nullKey []byte
	// track keeps the kind of each row (the upsert source).
	track bool
	kinds []exec.RowKind
}

// newRowDecoder builds the decoder of the columns fields (indexes into the
// table's columns; nil: all).
func newRowDecoder(c *config, fields []int, mem memory.Allocator, track bool) (*rowDecoder, error) {
	if fields == nil {
		for i := range c.schema {
			fields = append(fields, i)
		}
	}
	valueCols := c.valueColumns()
	d := &rowDecoder{track: track, nullValue: c.value.Name == raw.Name}
	produced := make(types.Schema, len(fields))
	valueFields := []int{}
	for j, f := range fields {
		produced[j] = c.schema[f]
		if c.exceptKey && slices.Contains(c.keyFields, f) {
			d.out = append(d.out, colRef{fromKey: true, idx: slices.Index(c.keyFields, f)})
			continue
		}
		pos := slices.Index(valueCols, f)
		idx := slices.Index(valueFields, pos)
		if idx < 0 {
			idx = len(valueFields)
			valueFields = append(valueFields, pos)
		}
		d.out = append(d.out, colRef{idx: idx})
	}
	d.schema = produced.Arrow()
	vdec, err := c.value.NewDecoder(format.Spec{Schema: c.subSchema(valueCols), Fields: valueFields,
		Options: optionsOf(c), Prefix: c.valuePrefix, Mem: mem, Subject: c.subject("value")})
	if err != nil {
		return nil, fmt.Errorf("value format: %w", err)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	d.value = part{dec: vdec, mem: mem}
	if c.key != nil {
		// The key is decoded whenever there is a key format, as Flink
		// does: a key the format cannot read is an error (or skipped with
		// the key format's ignore-parse-errors) also when every produced
		// column comes from the value ('value.fields-include' = 'ALL',
		// where the value's key columns overwrite the key's). The decoder
		// reads every key column.
		kdec, err := c.key.NewDecoder(format.Spec{Schema: c.keySchema(), Options: optionsOf(c), Prefix: c.keyPrefix, Mem: mem, Subject: c.subject("key")})
		if err != nil {
			vdec.Release()
			return nil, fmt.Errorf("key format: %w", err)
		}
		d.key = &part{dec: kdec, mem: mem}
		if d.nullKey, err = nullRecord(c.key, c.keyPrefix, optionsOf(c), len(c.keyFields)); err != nil {
			d.release()
			return nil, err
		}
	}
	return d, nil
}

// checkKey decodes a key that no row of the batch needs (the tombstone of
// a key the upsert source does not know), to find a key the key format
// cannot read; the decoded row is dropped at the flush.
func (d *rowDecoder) checkKey(key []byte) error {
	if d.key == nil {
		return nil
	}
	if err := d.key.dec.Decode(key); err != nil {
		return &partError{errKeyPart, err}
	}
	d.key.drops = append(d.key.drops, d.key.dec.Rows()-1)
	return nil
}

// subject is the schema registry subject of the key or the value (part)
// of the table's topic, Flink's default: '<topic>-key', '<topic>-value';
// "" when the table reads several topics.
func (c *config) subject(part string) string {
	if len(c.topics) != 1 {
		return ""
	}
	return c.topics[0] + "-" + part
}

// optionsOf returns the table's options; the formats read theirs from it.
func optionsOf(c *config) map[string]string { return c.opts }

// nullRecord is the record format f reads as n NULL columns: what a
// message without a key stands for.
func nullRecord(f *format.Format, prefix string, opts map[string]string, n int) ([]byte, error) {
	if f.Binary {
		return nil, nil // a binary decoder reads nil as NULLs
	}
	switch f.Name {
	case "json":
		return []byte("{}"), nil
	case "csv":
		d, err := option.Char(opts, prefix+"field-delimiter", ',')
		if err != nil {
			return nil, err
		}
		return []byte(strings.Repeat(string(d), n-1)), nil
	case raw.Name:
		return nil, nil
	}
	return nil, fmt.Errorf("format '%s' cannot be a key format", f.Name)
}

// ignoreParseErrors reports whether bad messages are skipped.
func (d *rowDecoder) ignoreParseErrors() bool {
	return d.value.dec.IgnoreParseErrors() || d.key != nil && d.key.dec.IgnoreParseErrors()
}

// errEmptyValue is the error of a message whose value is empty (zero bytes,
// not null) for a format that reads no row from it (all but raw, for
// which it is an empty string).
var errEmptyValue = errors.New("the value is empty (0 bytes; a message without a value is a tombstone, an empty one is not)")

// errNoRow is returned for a message the value format reads as no row (a
// comment, with 'csv.allow-comments'): it is skipped, and counted.
var errNoRow = errors.New("the value holds no row")

// appendRow decodes one message into a row of kind k (rows: a changelog
// value may stand for several). On error nothing is appended. A message
// without a value appends nothing unless the value format reads it as
// NULL (ok false). An empty value is a value error (errEmptyValue) unless
// the format is raw; a value that holds no row is errNoRow.
func (d *rowDecoder) appendRow(key, value []byte, k exec.RowKind) (ok bool, err error) {
	if value == nil && !d.nullValue {
		return false, nil
	}
	if value != nil && len(value) == 0 && !d.nullValue {
		return false, &partError{errValuePart, errEmptyValue}
	}
	before := d.value.dec.Rows()
	if err := d.value.dec.Decode(value); err != nil {
		return false, &partError{errValuePart, err}
	}
	added := d.value.dec.Rows() - before
	if added == 0 {
		return false, errNoRow
	}
	if d.key != nil {
		if key == nil {
			key = d.nullKey
		}
		if err := d.key.dec.Decode(key); err != nil {
			for i := before; i < before+added; i++ {
				d.value.drops = append(d.value.drops, i)
			}
			return false, &partError{errKeyPart, err}
		}
	}
	if d.track {
		d.kinds = append(d.kinds, k)
	}
	return true, nil
}

// dropLast takes back the last row appended (with its kind).
func (d *rowDecoder) dropLast() {
	d.value.drops = append(d.value.drops, d.value.dec.Rows()-1)
	if d.key != nil {
		d.key.drops = append(d.key.drops, d.key.dec.Rows()-1)
	}
	if d.track {
		d.kinds = d.kinds[:len(d.kinds)-1]
	}
}

// rows is the number of rows appended since the last flush.
func (d *rowDecoder) rows() int { return d.value.dec.Rows() - len(d.value.drops) }

// flush returns the rows appended so far as a batch.
func (d *rowDecoder) flush() (exec.Batch, error) {
	n := d.rows()
	var ops []exec.RowKind
	var vrec arrow.RecordBatch
	if cl, ok := d.value.dec.(format.ChangelogDecoder); ok && len(d.value.drops) == 0 {
		vrec, ops = cl.FlushChanges()
	} else {
		var err error
		if vrec, err = d.value.flush(n); err != nil {
			return exec.Batch{}, err
		}
	}
	defer vrec.Release()
	var krec arrow.RecordBatch
	if d.key != nil {
		var err error
		if krec, err = d.key.flush(n); err != nil {
			return exec.Batch{}, err
		}
		defer krec.Release()
	}
	cols := make([]arrow.Array, len(d.out))
	for j, r := range d.out {
		if r.fromKey {
			cols[j] = krec.Column(r.idx)
		} else {
			cols[j] = vrec.Column(r.idx)
		}
	}
	b := exec.Batch{Rec: array.NewRecordBatch(d.schema, cols, int64(n)), Ops: ops}
	if d.track {
		for _, k := range d.kinds {
			if k != exec.Insert {
				b.Ops = d.kinds
				break
			}
		}
		if b.Ops == nil {
			d.kinds = d.kinds[:0]
		} else {
			d.kinds = nil
		}
	}
	return b, nil
}

func (d *rowDecoder) release() {
	d.value.dec.Release()
	if d.key != nil {
		d.key.dec.Release()
	}
}

// rowEncoder writes the key and the value of the message of a row,
// straight from the batch's Arrow arrays.
type rowEncoder struct {
	value     format.Encoder
	valueLog  format.ChangelogEncoder
	valueRaw  *raw.Encoder
	valueCols []int
	valueSch  *arrow.Schema
	allValue  bool

	key     format.Encoder // nil: messages without a key
	keyRaw  *raw.Encoder
	keyCols []int
	keySch  *arrow.Schema

	// valueBinary, keyBinary: the format writes no record terminator.
	valueBinary, keyBinary bool
	// prepare are the encoders to prepare before the first record
	// (format.Preparer), nil once done.
	prepare []format.Preparer
}

func newRowEncoder(c *config, _ int) (*rowEncoder, error) {
	e := &rowEncoder{valueCols: c.valueColumns()}
	e.allValue = len(e.valueCols) == len(c.schema)
	vs := c.subSchema(e.valueCols)
	e.valueSch = vs.Arrow()
	var err error
	if e.value, err = c.value.NewEncoder(format.Spec{Schema: vs, Options: optionsOf(c), Prefix: c.valuePrefix, Subject: c.subject("value")}); err != nil {
		return nil, fmt.Errorf("value format: %w", err)
	}
	e.valueBinary = c.value.Binary
	if p, ok := e.value.(format.Preparer); ok {
		e.prepare = append(e.prepare, p)
	}
	e.valueLog, _ = e.value.(format.ChangelogEncoder)
	e.valueRaw, _ = e.value.(*raw.Encoder)
	if c.key != nil {
		ks := c.keySchema()
		e.keyCols, e.keySch = c.keyFields, ks.Arrow()
		if e.key, err = c.key.NewEncoder(format.Spec{Schema: ks, Options: optionsOf(c), Prefix: c.keyPrefix, Subject: c.subject("key")}); err != nil {
			return nil, fmt.Errorf("key format: %w", err)
		}
		e.keyBinary = c.key.Binary
		if p, ok := e.key.(format.Preparer); ok {
			e.prepare = append(e.prepare, p)
		}
		e.keyRaw, _ = e.key.(*raw.Encoder)
	}
	return e, nil
}

// ready prepares the encoders that need it (registering a schema), once,
// before the first record.
func (e *rowEncoder) ready(ctx context.Context) error {
	for len(e.prepare) > 0 {
		if err := e.prepare[0].Prepare(ctx); err != nil {
			return err
		}
		e.prepare = e.prepare[1:]
	}
	return nil
}

// project returns the value's and the key's columns of rec (the key's nil
// without a key format); the caller releases both.
func (e *rowEncoder) project(rec arrow.RecordBatch) (v, k arrow.RecordBatch) {
	if e.allValue {
		v = arrowutil.Project(e.valueSch, rec, nil)
	} else {
		v = arrowutil.Project(e.valueSch, rec, e.valueCols)
	}
	if e.key != nil {
		k = arrowutil.Project(e.keySch, rec, e.keyCols)
	}
	return v, k
}

// appendValue appends the value of row i (of kind k) to dst; null reports a
// message without a value (a NULL of the raw format).
func (e *rowEncoder) appendValue(dst []byte, v arrow.RecordBatch, i int, k exec.RowKind) (out []byte, null bool) {
	switch {
	case e.valueRaw != nil:
		if raw.IsNull(v, i) {
			return dst, true
		}
		return e.valueRaw.Append(dst, v, i), false
	case e.valueLog != nil:
		out = e.valueLog.AppendChange(dst, v, i, k)
	default:
		out = e.value.AppendRow(dst, v, i)
	}
	if e.valueBinary {
		return out, false
	}
	return trimNewline(out, len(dst)), false
}

// appendKey appends the key of row i to dst.
func (e *rowEncoder) appendKey(dst []byte, kr arrow.RecordBatch, i int) (out []byte, null bool) {
	if e.keyRaw != nil {
		if raw.IsNull(kr, i) {
			return dst, true
		}
		return e.keyRaw.Append(dst, kr, i), false
	}
	if e.keyBinary {
		return e.key.AppendRow(dst, kr, i), false
	}
	return trimNewline(e.key.AppendRow(dst, kr, i), len(dst)), false
}

// trimNewline drops the record terminator the text encoders write.
func trimNewline(b []byte, start int) []byte {
	if len(b) > start && b[len(b)-1] == '\n' {
		return b[:len(b)-1]
	}
	return b
}
