package avro

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hamba/avro/v2"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/types"
)

// rows is the batch a decoder builds: the produced columns' targets and a
// way to resolve a writer schema to them.
type rows struct {
	schema types.Schema
	bld    *array.RecordBuilder
	tgts   []*target // by table column; nil: not produced
	cols   []*target // produced, in produced order
	n      int
}

func newRows(s format.Spec) *rows {
	mem := s.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	fields := s.Fields
	if fields == nil {
		for i := range s.Schema {
			fields = append(fields, i)
		}
	}
	produced := make(types.Schema, len(fields))
	for i, f := range fields {
		produced[i] = s.Schema[f]
	}
	r := &rows{schema: s.Schema, bld: array.NewRecordBuilder(mem, produced.Arrow()), tgts: make([]*target, len(s.Schema))}
	for i, f := range fields {
		tg := newTarget(s.Schema[f].Name, s.Schema[f].Type, r.bld.Field(i))
		r.tgts[f] = tg
		r.cols = append(r.cols, tg)
	}
	return r
}

// program resolves writer schema w to the produced columns.
func (r *rows) program(w avro.Schema) (*node, error) { return resolve(w, r.schema, r.tgts) }

// decode reads body with program prog and appends its row, or nothing on
// error.
func (r *rows) decode(prog *node, body []byte) error {
	for _, c := range r.cols {
		c.reset()
	}
	p, err := prog.read(body, 0)
	if err != nil {
		return err
	}
	if p != len(body) {
		return malformed(p, "bytes left after the record")
	}
	for _, c := range r.cols {
		if err := c.check(); err != nil {
			return err
		}
	}
	for _, c := range r.cols {
		c.commit()
	}
	r.n++
	return nil
}

// nulls appends a row of NULLs: the row of a message without a key.
func (r *rows) nulls() error {
	for _, c := range r.cols {
		c.reset()
		if err := c.check(); err != nil {
			return err
		}
	}
	for _, c := range r.cols {
		c.commit()
	}
	r.n++
	return nil
}

func (r *rows) flush() arrow.RecordBatch {
	n := r.n
	r.n = 0
	if len(r.cols) == 0 {
		return array.NewRecordBatch(r.bld.Schema(), nil, int64(n))
	}
	rec := r.bld.NewRecordBatch()
	r.bld.Reserve(n) // the next batch is likely as long: grow once
	return rec
}

// Decoder reads plain Avro records written with the table's own schema.
type Decoder struct {
	rows         *rows
	prog         *node
	ignoreErrors bool
}

// NewDecoder checks the options and columns of s and returns a decoder.
func NewDecoder(s format.Spec) (*Decoder, error) {
	w, err := tableSchema(s.Schema)
	if err != nil {
		return nil, err
	}
	d := &Decoder{rows: newRows(s)}
	if d.ignoreErrors, err = ignoreParseErrors(s); err != nil {
		d.rows.bld.Release()
		return nil, err
	}
	if d.prog, err = d.rows.program(w); err != nil {
		d.rows.bld.Release()
		return nil, err
	}
	return d, nil
}

// Decode reads one record; a nil record (a message without a key) is a
// row of NULLs.
func (d *Decoder) Decode(rec []byte) error {
	if rec == nil {
		return d.rows.nulls()
	}
	return d.rows.decode(d.prog, rec)
}

func (d *Decoder) IgnoreParseErrors() bool    { return d.ignoreErrors }
func (d *Decoder) Incomplete(rec []byte) bool { return false }
func (d *Decoder) Rows() int                  { return d.rows.n }
func (d *Decoder) Flush() arrow.RecordBatch   { return d.rows.flush() }
func (d *Decoder) Release()                   { d.rows.bld.Release() }

// tableSchema derives and parses the Avro schema of s.
func tableSchema(s types.Schema) (avro.Schema, error) {
	js, err := Schema(s)
	if err != nil {
		return nil, err
	}
	return parseSchema(js)
}

// parseSchema parses an Avro schema on its own (named types of one schema
// never meet another's).
func parseSchema(js string) (avro.Schema, error) {
	return avro.ParseWithCache(js, "", &avro.SchemaCache{})
}
