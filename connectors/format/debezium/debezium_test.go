package debezium_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/debezium"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

var schema = types.Schema{
	{Name: "id", Type: types.BigIntType},
	{Name: "s", Type: types.StringType},
	{Name: "ts", Type: types.TimestampOf(3)},
	{Name: "x", Type: types.DoubleType},
}

// Rows of every kind written and read back: +I and +U come back as +I,
// -U and -D as -D (Flink writes no update records); an update record
// written by Debezium reads as -U and +U.
func TestRoundTrip(t *testing.T) {
	in, err := conntest.ParseBatch(schema, []string{
		"+I[1, a, 2024-01-02 03:04:05.123, 1.5]",
		"-U[1, a, 2024-01-02 03:04:05.123, 1.5]",
		"+U[1, b\"\n, NULL, NaN]",
		"-D[1, b\"\n, NULL, NaN]",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Rec.Release()
	spec := format.Spec{Schema: schema, Prefix: debezium.Name + ".", Mem: memory.DefaultAllocator}
	enc, err := debezium.NewEncoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for i := range in.Len() {
		buf = enc.AppendChange(buf, in.Rec, i, in.Op(i))
	}
	want := `{"before":null,"after":{"id":1,"s":"a","ts":"2024-01-02 03:04:05.123","x":1.5},"op":"c"}
{"before":{"id":1,"s":"a","ts":"2024-01-02 03:04:05.123","x":1.5},"after":null,"op":"d"}
{"before":null,"after":{"id":1,"s":"b\"\n","ts":null,"x":"NaN"},"op":"c"}
{"before":{"id":1,"s":"b\"\n","ts":null,"x":"NaN"},"after":null,"op":"d"}
`
	if string(buf) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf, want)
	}
	dec, err := debezium.NewDecoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	recs := strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
	recs = append(recs, `{"op":"u","before":{"id":1,"s":"a"},"after":{"id":1,"s":"c"},"source":{"op":"x"}}`)
	for _, r := range recs {
		if err := dec.Decode([]byte(r)); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
	}
	rec, ops := dec.FlushChanges()
	defer rec.Release()
	got := rowfmt.Lines(schema, exec.Batch{Rec: rec, Ops: ops})
	wantRows := []string{
		"+I[1, a, 2024-01-02 03:04:05.123, 1.5]",
		"-D[1, a, 2024-01-02 03:04:05.123, 1.5]",
		"+I[1, b\"\n, NULL, NaN]",
		"-D[1, b\"\n, NULL, NaN]",
		"-U[1, a, NULL, NULL]",
		"+U[1, c, NULL, NULL]",
	}
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Fatalf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
	// All inserts: no kinds.
	if err := dec.Decode([]byte(recs[0])); err != nil {
		t.Fatal(err)
	}
	rec2, ops2 := dec.FlushChanges()
	defer rec2.Release()
	if ops2 != nil || rec2.NumRows() != 1 {
		t.Fatalf("got %d rows, kinds %v", rec2.NumRows(), ops2)
	}
}

// Reading a record allocates nothing per record, and neither does writing
// one (for types whose text form types formats without allocating:
// TIMESTAMP and DOUBLE values are formatted through strings).
func TestNoAllocations(t *testing.T) {
	plain := types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "s", Type: types.StringType}, {Name: "b", Type: types.BooleanType}}
	in, err := conntest.ParseBatch(plain, []string{"-U[1, some text, TRUE]"})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Rec.Release()
	enc, _ := debezium.NewEncoder(format.Spec{Schema: plain})
	buf := enc.AppendChange(nil, in.Rec, 0, exec.UpdateBefore)
	if n := testing.AllocsPerRun(100, func() { buf = enc.AppendChange(buf[:0], in.Rec, 0, exec.UpdateBefore) }); n != 0 {
		t.Errorf("AppendChange: %v allocations", n)
	}
	spec := format.Spec{Schema: schema, Prefix: debezium.Name + ".", Mem: memory.DefaultAllocator}
	dec, _ := debezium.NewDecoder(spec)
	defer dec.Release()
	upd := []byte(`{"before":{"id":1,"s":"some text","ts":"2024-01-02 03:04:05.123","x":1.5},"after":{"id":1,"s":"other text","ts":null,"x":2},"op":"u","source":{"ts_ms":1}}`)
	n := testing.AllocsPerRun(10000, func() {
		if err := dec.Decode(upd); err != nil {
			t.Fatal(err)
		}
	})
	if n > 0.1 { // amortized growth of the builders
		t.Errorf("Decode: %v allocations per record", n)
	}
	rec, _ := dec.FlushChanges()
	rec.Release()
}

// Bad records are errors, and append nothing.
func TestErrors(t *testing.T) {
	dec, err := debezium.NewDecoder(format.Spec{Schema: schema, Mem: memory.DefaultAllocator})
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	for _, c := range []struct{ rec, err string }{
		{`{"before":null,"after":{"id":1}}`, `the "op" field is missing`},
		{`{"before":null,"after":{"id":1},"op":null}`, `the "op" field is missing`},
		{`{"before":null,"after":{"id":1},"op":1}`, `"op" must be a string, not 1`},
		{`{"before":null,"after":{"id":1},"op":"x"}`, `unknown "op" value "x"`},
		{`{"before":null,"after":null,"op":"c"}`, `the "after" field of a "c" message is null`},
		{`{"before":{"id":1},"after":null,"op":"u"}`, `the "after" field of an update message is null`},
		{`{"before":null,"after":{"id":1},"op":"d"}`, `the "before" field of a delete message is null (Debezium's Postgres connector sends the old row only for tables with REPLICA IDENTITY FULL)`},
		{`{"before":"x","after":{"id":1},"op":"c"}`, `"before" must be an object or null, not "x"`},
		{`{"before":{"id":1},"after":{"id":"two"},"op":"u"}`, `after: column 'id': cannot parse 'two' as BIGINT: not an integer`},
		{`{"before":null,"after":{"id":1},"op":"c"} 1`, `invalid JSON: unexpected text after the object at offset 42`},
		{`[]`, `invalid JSON: expected an object`},
	} {
		err := dec.Decode([]byte(c.rec))
		if err == nil || err.Error() != c.err {
			t.Errorf("%s: got error %v, want %s", c.rec, err, c.err)
		}
	}
	if dec.Rows() != 0 {
		t.Errorf("%d rows appended", dec.Rows())
	}
}
