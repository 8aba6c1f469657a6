package avro

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/types"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRegistry() // if a test started it
	os.Exit(code)
}

func confluentSpec(t *testing.T, cols string, opts map[string]string, subject string) format.Spec {
	t.Helper()
	sch, err := conntest.ParseSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	return format.Spec{Schema: sch, Options: opts, Prefix: ConfluentName + ".", Mem: memory.DefaultAllocator, Subject: subject}
}

// TestConfluentRoundTrip: the encoder registers the table's schema under
// the subject the connector suggests (or 'avro-confluent.subject', or its
// older name) in a real registry and frames records with its id; the
// decoder looks the id up and reads the rows back. A second encoder of
// the same schema gets the same id.
func TestConfluentRoundTrip(t *testing.T) {
	reg := testenv.Registry(t)
	cols := "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3)"
	in, err := conntest.ParseBatch(mustSchema(t, cols), []string{
		"1, a, 1.50, 2024-01-02 03:04:05.123",
		"2, NULL, NULL, NULL",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Rec.Release()
	var ids []byte
	for _, c := range []struct {
		opts    map[string]string
		subject string
	}{
		{map[string]string{"avro-confluent.url": reg.URL}, "rt-value"},
		{map[string]string{"avro-confluent.schema-registry.url": reg.URL, "avro-confluent.subject": "rt-value"}, ""},
		{map[string]string{"avro-confluent.url": reg.URL, "avro-confluent.schema-registry.subject": "rt-value"}, "ignored-value"},
	} {
		spec := confluentSpec(t, cols, c.opts, c.subject)
		enc, err := NewConfluentEncoder(spec)
		if err != nil {
			t.Fatal(err)
		}
		if enc.Subject() != "rt-value" {
			t.Fatalf("subject %q, want rt-value", enc.Subject())
		}
		if err := enc.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		dec, err := NewConfluentDecoder(spec)
		if err != nil {
			t.Fatal(err)
		}
		for i := range in.Len() {
			rec := enc.AppendRow(nil, in.Rec, i)
			if rec[0] != 0 {
				t.Fatalf("record %x does not start with the magic byte", rec)
			}
			ids = append(ids, rec[4])
			if err := dec.Decode(rec); err != nil {
				t.Fatal(err)
			}
		}
		b := exec.Batch{Rec: dec.Flush()}
		got := strings.Join(rowfmt.Lines(spec.Schema, b), "\n")
		b.Rec.Release()
		dec.Release()
		want := "+I[1, a, 1.50, 2024-01-02 03:04:05.123]\n+I[2, NULL, NULL, NULL]"
		if got != want {
			t.Fatalf("read back\n%s\nwant\n%s", got, want)
		}
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("the same schema registered under ids %v", ids)
		}
	}
	if s := get(t, reg.URL+"/subjects/rt-value/versions"); s != "[1]" {
		t.Fatalf("versions of rt-value: %s, want [1]", s)
	}
}

// TestConfluentBadRecords: a record without the header, a schema id the
// registry does not have, and a writer schema the table cannot read are
// errors of the record; a registry that does not answer is
// format.ErrService (the job fails even with ignore-parse-errors).
func TestConfluentBadRecords(t *testing.T) {
	reg := testenv.Registry(t)
	// A writer schema whose id field is a string: INT cannot read it.
	var out struct{ ID int }
	post(t, reg.URL+"/subjects/bad-value/versions", `{"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"id\",\"type\":\"string\"}]}"}`, &out)
	spec := confluentSpec(t, "id INT", map[string]string{"avro-confluent.url": reg.URL}, "")
	dec, err := NewConfluentDecoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	incompatible := []byte{0, 0, 0, 0, byte(out.ID), 2, 'x'}
	for _, c := range []struct {
		rec  []byte
		want error
		text string
	}{
		{[]byte{1, 0, 0, 0, 1, 2}, ErrWireFormat, "6 bytes starting with 0x01"},
		{[]byte{0, 0, 0}, ErrWireFormat, "3 bytes"},
		{[]byte{0, 0, 0, 0x7f, 0x7f, 2}, ErrUnknownSchema, "unknown schema id 32639: the schema registry at " + reg.URL + " does not have it"},
		{incompatible, ErrIncompatible, "column 'id' of type INT cannot be read from the writer's string"},
		{incompatible, ErrIncompatible, "column 'id' of type INT"}, // kept: not looked up again
	} {
		err := dec.Decode(c.rec)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("record %x: got %v, want %v with %q", c.rec, err, c.want, c.text)
		}
		if errors.Is(err, format.ErrService) {
			t.Errorf("record %x: %v is not a service error", c.rec, err)
		}
	}
	if dec.Rows() != 0 {
		t.Fatalf("bad records appended %d rows", dec.Rows())
	}

	down := confluentSpec(t, "id INT", map[string]string{"avro-confluent.url": "http://127.0.0.1:1", "avro-confluent.ignore-parse-errors": "true"}, "")
	dd, err := NewConfluentDecoder(down)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Release()
	if err := dd.Decode([]byte{0, 0, 0, 0, 1, 2}); !errors.Is(err, format.ErrService) {
		t.Fatalf("registry down: got %v, want format.ErrService", err)
	}
	enc, err := NewConfluentEncoder(confluentSpec(t, "id INT", map[string]string{"avro-confluent.url": "http://127.0.0.1:1"}, "x-value"))
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Prepare(context.Background()); err == nil || !strings.Contains(err.Error(), "registering the schema under subject 'x-value'") {
		t.Fatalf("registry down: Prepare got %v", err)
	}
}

// TestConfluentOptions: what the options must say, checked when the table
// is created (no registry needed).
func TestConfluentOptions(t *testing.T) {
	for _, c := range []struct {
		opts    map[string]string
		subject string
		want    string
	}{
		{map[string]string{}, "t-value", "needs 'avro-confluent.url'"},
		{map[string]string{"avro-confluent.url": "localhost:8081"}, "t-value", "an http:// or https:// URL"},
		{map[string]string{"avro-confluent.url": "http://a", "avro-confluent.schema-registry.url": "http://b"}, "t-value", "are the same option"},
		{map[string]string{"avro-confluent.url": "http://a", "avro-confluent.ignore-parse-errors": "maybe"}, "t-value", "avro-confluent.ignore-parse-errors"},
	} {
		spec := confluentSpec(t, "id INT", c.opts, c.subject)
		_, derr := NewConfluentDecoder(spec)
		_, eerr := NewConfluentEncoder(spec)
		err := errors.Join(derr, eerr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.opts, err, c.want)
		}
	}
	// Without a subject (a table of a topic pattern) the table can be
	// read; a sink fails when it opens.
	enc, err := NewConfluentEncoder(confluentSpec(t, "id INT", map[string]string{"avro-confluent.url": "http://a"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Prepare(context.Background()); err == nil || !strings.Contains(err.Error(), "needs 'avro-confluent.subject'") {
		t.Fatalf("Prepare without a subject: got %v", err)
	}
}

func mustSchema(t *testing.T, cols string) types.Schema {
	t.Helper()
	s, err := conntest.ParseSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return strings.TrimSpace(string(b))
}

func post(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/vnd.schemaregistry.v1+json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %s", url, resp.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
