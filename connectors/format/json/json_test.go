package json

import (
	stdjson "encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/raw"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
)

// TestEncoderWritesUTF8: a STRING that holds bytes that are not UTF-8
// (read by the raw format, which takes any bytes) is written as JSON with
// each such byte as U+FFFD, the replacement character; valid UTF-8 and
// escapes are written as they are.
func TestEncoderWritesUTF8(t *testing.T) {
	sch, err := conntest.ParseSchema("s STRING")
	if err != nil {
		t.Fatal(err)
	}
	spec := format.Spec{Schema: sch, Options: map[string]string{}, Mem: memory.DefaultAllocator}
	d, err := raw.NewDecoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	in := []string{"a\xffb", "\xc3", "é\"\n\x01", "\xed\xa0\x80 surrogate", "ok"}
	want := []string{"a\uFFFDb", "\uFFFD", "é\"\n\x01", "\uFFFD\uFFFD\uFFFD surrogate", "ok"}
	for _, s := range in {
		if err := d.Decode([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	rec := d.Flush()
	defer rec.Release()
	e, err := NewEncoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		line := e.AppendRow(nil, rec, i)
		// encoding/json takes bytes that are not UTF-8 in strings (and
		// reads them as U+FFFD): JSON text is UTF-8 (RFC 8259).
		if !stdjson.Valid(line) || !utf8.Valid(line) {
			t.Fatalf("row %d (%q): not JSON: %q", i, in[i], line)
		}
		var got struct{ S string }
		if err := stdjson.Unmarshal(line, &got); err != nil || got.S != want[i] {
			t.Errorf("row %d (%q): wrote %q, read back %q (%v), want %q", i, in[i], line, got.S, err, want[i])
		}
	}
}
