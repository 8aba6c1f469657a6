package avro

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
)

// ErrUnknownSchema is the error of a record whose schema id the registry
// does not know (errors.Is).
var ErrUnknownSchema = errors.New("unknown schema id")

// ErrWireFormat is the error of a record that does not start with the
// Confluent header (a zero byte and a 4-byte schema id) (errors.Is).
var ErrWireFormat = errors.New("not in the Confluent wire format")

// registryTimeout bounds one request to the schema registry.
const registryTimeout = 10 * time.Second

// registry returns the client of the registry the options of s name.
func registry(s format.Spec) (*sr.Client, string, error) {
	url, err := oneOf(s, OptURL, OptURLLegacy)
	if err != nil {
		return nil, "", err
	}
	if url == "" {
		return nil, "", fmt.Errorf("format '%s' needs '%s%s', the schema registry's URL", ConfluentName, s.Prefix, OptURL)
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, "", option.Bad(s.Prefix+OptURL, url, "an http:// or https:// URL")
	}
	cl, err := sr.NewClient(sr.URLs(strings.TrimRight(url, "/")), sr.HTTPClient(&http.Client{Timeout: registryTimeout}))
	if err != nil {
		return nil, "", fmt.Errorf("'%s%s': %v", s.Prefix, OptURL, err)
	}
	return cl, url, nil
}

// oneOf reads an option that has an older name; setting both is an error.
func oneOf(s format.Spec, key, legacy string) (string, error) {
	v, ok := s.Options[s.Prefix+key]
	lv, lok := s.Options[s.Prefix+legacy]
	if ok && lok {
		return "", fmt.Errorf("'%s%s' and '%s%s' are the same option: set one", s.Prefix, key, s.Prefix, legacy)
	}
	if lok {
		return strings.TrimSpace(lv), nil
	}
	return strings.TrimSpace(v), nil
}

// ConfluentDecoder reads records in the Confluent wire format, resolving
// each writer schema (looked up by id, once) to the table's columns.
type ConfluentDecoder struct {
	rows         *rows
	cl           *sr.Client
	url          string
	progs        map[uint32]*node
	bad          map[uint32]error // ids whose schema cannot be read into the table
	ignoreErrors bool
}

// NewConfluentDecoder checks the options and columns of s and returns a
// decoder. It does not contact the registry.
func NewConfluentDecoder(s format.Spec) (*ConfluentDecoder, error) {
	if _, err := Schema(s.Schema); err != nil {
		return nil, err
	}
	if _, err := oneOf(s, OptSubject, OptSubjectLegacy); err != nil {
		return nil, err
	}
	cl, url, err := registry(s)
	if err != nil {
		return nil, err
	}
	d := &ConfluentDecoder{cl: cl, url: url, progs: map[uint32]*node{}, bad: map[uint32]error{}}
	if d.ignoreErrors, err = ignoreParseErrors(s); err != nil {
		return nil, err
	}
	d.rows = newRows(s)
	return d, nil
}

// Decode reads one record; a nil record (a message without a key) is a
// row of NULLs.
func (d *ConfluentDecoder) Decode(rec []byte) error {
	if rec == nil {
		return d.rows.nulls()
	}
	if len(rec) < 5 || rec[0] != 0 {
		return fmt.Errorf("%w: %d bytes starting with %#x (want a zero byte and a 4-byte schema id)", ErrWireFormat, len(rec), rec[:min(len(rec), 1)])
	}
	id := binary.BigEndian.Uint32(rec[1:5])
	prog, ok := d.progs[id]
	if !ok {
		var err error
		if prog, err = d.program(id); err != nil {
			return err
		}
	}
	if err := d.rows.decode(prog, rec[5:]); err != nil {
		return fmt.Errorf("schema id %d: %w", id, err)
	}
	return nil
}

// program looks writer schema id up and resolves it, once.
func (d *ConfluentDecoder) program(id uint32) (*node, error) {
	if err, ok := d.bad[id]; ok {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	s, err := d.cl.SchemaByID(ctx, int(id))
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			err = fmt.Errorf("%w %d: the schema registry at %s does not have it", ErrUnknownSchema, id, d.url)
			d.bad[id] = err
			return nil, err
		}
		return nil, fmt.Errorf("%w: looking up schema id %d in the schema registry at %s: %v", format.ErrService, id, d.url, err)
	}
	if s.Type != sr.TypeAvro {
		err = fmt.Errorf("%w: schema id %d is a %s schema, not Avro", ErrIncompatible, id, s.Type)
	} else {
		var w avro.Schema
		if w, err = parseSchema(s.Schema); err != nil {
			err = fmt.Errorf("%w: schema id %d does not parse: %v", ErrIncompatible, id, err)
		} else {
			var prog *node
			if prog, err = d.rows.program(w); err == nil {
				d.progs[id] = prog
				return prog, nil
			}
			err = fmt.Errorf("schema id %d: %w", id, err)
		}
	}
	d.bad[id] = err
	return nil, err
}

func (d *ConfluentDecoder) IgnoreParseErrors() bool    { return d.ignoreErrors }
func (d *ConfluentDecoder) Incomplete(rec []byte) bool { return false }
func (d *ConfluentDecoder) Rows() int                  { return d.rows.n }
func (d *ConfluentDecoder) Flush() arrow.RecordBatch   { return d.rows.flush() }
func (d *ConfluentDecoder) Release()                   { d.rows.bld.Release() }

// ConfluentEncoder writes records in the Confluent wire format with the
// table's schema, which Prepare registers.
type ConfluentEncoder struct {
	enc     *Encoder
	cl      *sr.Client
	url     string
	subject string
	schema  string
	header  [5]byte
	ready   bool
	// noSubject is the error of an encoder without a subject.
	noSubject error
}

// NewConfluentEncoder checks the options and columns of s and returns an
// encoder. It does not contact the registry: Prepare does, and fails when
// neither the options nor s.Subject name a subject.
func NewConfluentEncoder(s format.Spec) (*ConfluentEncoder, error) {
	js, err := Schema(s.Schema)
	if err != nil {
		return nil, err
	}
	e := &ConfluentEncoder{enc: &Encoder{cols: s.Schema}, schema: js}
	if e.cl, e.url, err = registry(s); err != nil {
		return nil, err
	}
	if e.subject, err = oneOf(s, OptSubject, OptSubjectLegacy); err != nil {
		return nil, err
	}
	if e.subject == "" {
		e.subject = s.Subject
	}
	if e.subject == "" {
		// A table that is only read (a topic pattern) needs no subject:
		// the sink's Prepare fails without one.
		e.noSubject = fmt.Errorf("format '%s' needs '%s%s', the subject to register the table's schema under", ConfluentName, s.Prefix, OptSubject)
	}
	return e, nil
}

// Subject is the subject the encoder registers its schema under.
func (e *ConfluentEncoder) Subject() string { return e.subject }

// Prepare registers the table's schema under the subject (or finds it
// there) and keeps its id for the records' header.
func (e *ConfluentEncoder) Prepare(ctx context.Context) error {
	if e.ready {
		return nil
	}
	if e.noSubject != nil {
		return e.noSubject
	}
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	id, err := e.cl.RegisterSchema(ctx, e.subject, sr.Schema{Schema: e.schema, Type: sr.TypeAvro}, -1, -1)
	if err != nil {
		return fmt.Errorf("registering the schema under subject '%s' in the schema registry at %s: %w", e.subject, e.url, err)
	}
	binary.BigEndian.PutUint32(e.header[1:], uint32(id))
	e.ready = true
	return nil
}

// AppendRow appends row i of rec as one record: the header with the
// schema's id, then the Avro body. Prepare must have succeeded.
func (e *ConfluentEncoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	if !e.ready {
		panic("avro-confluent: AppendRow before Prepare")
	}
	return e.enc.AppendRow(append(dst, e.header[:]...), rec, i)
}
