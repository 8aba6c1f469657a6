package format

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Spec is what a decoder or encoder is built for.
type Spec struct {
	// Schema is the table's row type.
	Schema types.Schema
	// Fields are the columns a decoder produces, indexes into Schema (nil:
	// all). An encoder always writes every column.
	Fields []int
	// Options are the table's options; the format reads the keys that
	// start with Prefix.
	Options map[string]string
	// Prefix is prepended to the format's option keys: "csv.", "json.".
	Prefix string
	// Mem allocates the batches a decoder builds (nil: the Go allocator).
	Mem memory.Allocator
	// Subject is the schema registry subject the connector suggests for
	// the records ('<topic>-value', '<topic>-key' for Kafka), "" for none;
	// a format's own subject option overrides it.
	Subject string
}

// Decoder turns records into the rows of a batch. It is used by one
// goroutine.
type Decoder interface {
	// Decode appends the row rec stands for (one record without its line
	// terminator), or nothing for a record that holds no row (a comment).
	// On error it appends nothing; the error names the column when it can.
	Decode(rec []byte) error
	// Incomplete reports whether rec ends inside a quoted value, so the
	// record goes on at the next line.
	Incomplete(rec []byte) bool
	// IgnoreParseErrors reports whether the user asked to skip bad records.
	IgnoreParseErrors() bool
	// Rows is the number of rows appended since the last Flush.
	Rows() int
	// Flush returns the rows appended so far (the caller owns the batch)
	// and starts a new batch.
	Flush() arrow.RecordBatch
	// Release frees the decoder's builders.
	Release()
}

// Encoder turns rows into records.
type Encoder interface {
	// AppendRow appends row i of rec, with a terminating newline, to dst.
	AppendRow(dst []byte, rec arrow.RecordBatch, i int) []byte
}

// Preparer is an Encoder that must do something that can fail before it
// writes its first record (avro-confluent registers its schema). A
// connector calls Prepare once, before the first AppendRow.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// ErrService marks a decoder error that is not about the record but about
// a service the format needs (a schema registry that does not answer): it
// fails the job even with ignore-parse-errors (errors.Is).
var ErrService = errors.New("format service unavailable")

// ChangelogDecoder is a Decoder of a changelog format (debezium-json): a
// record may stand for rows of any kind, and for several rows (an update is
// its before and after image). Decode appends all of a record's rows or
// none.
type ChangelogDecoder interface {
	Decoder
	// FlushChanges is Flush with the kind of each row, in order; the kinds
	// are nil when every row is +I. The caller owns both.
	FlushChanges() (arrow.RecordBatch, []exec.RowKind)
}

// ChangelogEncoder is an Encoder of a changelog format: it writes rows of
// every kind. AppendRow writes a +I row.
type ChangelogEncoder interface {
	Encoder
	// AppendChange appends row i of rec, of kind k, with a terminating
	// newline, to dst.
	AppendChange(dst []byte, rec arrow.RecordBatch, i int, k exec.RowKind) []byte
}

// OptIgnoreParseErrors is the option of the formats that can skip bad
// records, without prefix.
const OptIgnoreParseErrors = "ignore-parse-errors"

// SkipHint is what an error about a record f could not read adds, for a
// format that can skip bad records: the hint to set its ignore-parse-errors
// option (under prefix: 'json.', 'value.json.') to skip such records and
// count them; "" for a format that cannot.
func SkipHint(f *Format, prefix string) string {
	if f == nil || !slices.Contains(f.Options, OptIgnoreParseErrors) {
		return ""
	}
	return fmt.Sprintf(" (or set '%s%s' = 'true' to skip such records and count them)", prefix, OptIgnoreParseErrors)
}

// Format is one registered format.
type Format struct {
	// Name is the value of the 'format' option.
	Name string
	// Extension is the file name extension of files in this format, with
	// its dot (".csv"), for connectors that name the files they write.
	Extension string
	// Options are the keys the format reads, without prefix.
	Options []string
	// Flat says the format cannot carry ROW columns (csv, raw): its
	// decoders and encoders refuse a schema with one (RefuseRows), and
	// connectors that check formats at CREATE TABLE without building them
	// call RefuseRows when it is set.
	Flat bool
	// Binary says a record is bytes whose end the connector marks (a
	// Kafka message), never a line: encoders write no terminator, and
	// connectors that split lines (filesystem) refuse the format. A binary
	// decoder reads a nil record (a message without a key) as a row of
	// NULLs.
	Binary bool
	// NewDecoder and NewEncoder check the options and build.
	NewDecoder func(Spec) (Decoder, error)
	NewEncoder func(Spec) (Encoder, error)
}

var formats = struct {
	sync.Mutex
	m map[string]*Format
}{m: map[string]*Format{}}

// Register adds f; it panics on a duplicate name.
func Register(f Format) {
	formats.Lock()
	defer formats.Unlock()
	if _, dup := formats.m[f.Name]; dup {
		panic("format: duplicate " + f.Name)
	}
	formats.m[f.Name] = &f
}

// Lookup returns the format called name, or an error listing the formats.
func Lookup(name string) (*Format, error) {
	formats.Lock()
	defer formats.Unlock()
	if f, ok := formats.m[strings.ToLower(name)]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("unknown format '%s' (formats: %s)", name, strings.Join(namesLocked(), ", "))
}

// Names lists the registered formats, sorted.
func Names() []string {
	formats.Lock()
	defer formats.Unlock()
	return namesLocked()
}

func namesLocked() []string {
	var out []string
	for n := range formats.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// OptionKeys returns the keys of every registered format with its own name
// as prefix ("csv.field-delimiter", ...), for a connector's option list.
func OptionKeys() []string {
	formats.Lock()
	defer formats.Unlock()
	var out []string
	for _, n := range namesLocked() {
		for _, o := range formats.m[n].Options {
			out = append(out, n+"."+o)
		}
	}
	return out
}
