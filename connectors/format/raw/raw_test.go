package raw

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ, endian string
		value       string
		bytes       []byte
	}{
		{"STRING", "", "héllo", []byte("héllo")},
		{"BYTES", "", "x'6869'", []byte("hi")},
		{"INT", "", "258", []byte{0, 0, 1, 2}},
		{"INT", "little-endian", "258", []byte{2, 1, 0, 0}},
		{"BIGINT", "", "-1", bytes.Repeat([]byte{0xff}, 8)},
		{"SMALLINT", "", "-2", []byte{0xff, 0xfe}},
		{"TINYINT", "", "7", []byte{7}},
		{"BOOLEAN", "", "TRUE", []byte{1}},
		{"DOUBLE", "", "1.5", []byte{0x3f, 0xf8, 0, 0, 0, 0, 0, 0}},
		{"FLOAT", "", "-2.0", []byte{0xc0, 0, 0, 0}},
	} {
		sch, err := conntest.ParseSchema("v " + tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		opts := map[string]string{}
		if tc.endian != "" {
			opts["raw.endianness"] = tc.endian
		}
		spec := format.Spec{Schema: sch, Options: opts, Prefix: "raw.", Mem: memory.DefaultAllocator}
		d, err := NewDecoder(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Decode(tc.bytes); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if err := d.Decode(nil); err != nil {
			t.Fatal(err)
		}
		rec := d.Flush()
		lines := rowfmt.Lines(sch, exec.Batch{Rec: rec})
		if want := "+I[" + tc.value + "]"; lines[0] != want || lines[1] != "+I[NULL]" {
			t.Fatalf("%s: got %v want %s, +I[NULL]", tc.typ, lines, want)
		}
		e, err := NewEncoder(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Append(nil, rec, 0); !bytes.Equal(got, tc.bytes) {
			t.Fatalf("%s: encoded %x want %x", tc.typ, got, tc.bytes)
		}
		if !IsNull(rec, 1) || IsNull(rec, 0) {
			t.Fatalf("%s: IsNull", tc.typ)
		}
		rec.Release()
		d.Release()
	}
}

func TestErrors(t *testing.T) {
	sch, _ := conntest.ParseSchema("a INT, b INT")
	if _, err := NewDecoder(format.Spec{Schema: sch, Prefix: "raw."}); err == nil || !strings.Contains(err.Error(), "exactly one column") {
		t.Fatal(err)
	}
	sch, _ = conntest.ParseSchema("a DATE")
	if _, err := NewDecoder(format.Spec{Schema: sch, Prefix: "raw."}); err == nil || !strings.Contains(err.Error(), "cannot hold column 'a' of type DATE") {
		t.Fatal(err)
	}
	sch, _ = conntest.ParseSchema("a INT")
	d, err := NewDecoder(format.Spec{Schema: sch, Prefix: "raw."})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if err := d.Decode([]byte{1, 2}); err == nil || err.Error() != "column 'a': a raw INT is 4 bytes, got 2" {
		t.Fatal(err)
	}
	if _, err := NewDecoder(format.Spec{Schema: sch, Prefix: "raw.", Options: map[string]string{"raw.charset": "latin1"}}); err == nil {
		t.Fatal("want a charset error")
	}
}
