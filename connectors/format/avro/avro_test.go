package avro

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/hamba/avro/v2"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// TestAvro runs testdata/*: schema derivation per type, round trips
// checked by an independent decoder (hamba/avro), reading records other
// writers wrote with other schemas (evolution), and bad records.
//
//	schema: the input is the table's columns; prints the derived schema.
//	roundtrip: the input is the columns, then rows ("+I[1, a]"); our
//	  encoder writes them, hamba/avro reads them back ("avro: {...}") and
//	  our decoder reads them back ("read: +I[...]").
//	decode: the input is "table: <columns>", "writer: <schema>" and records:
//	  a JSON object hamba/avro writes with the writer schema, or "hex: <bytes>";
//	  prints the rows read or each record's error. Arguments: fields=a,b
//	  (the produced columns).
func TestAvro(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "schema":
				sch, err := conntest.ParseSchema(strings.TrimSpace(td.Input))
				if err != nil {
					return "error: " + err.Error()
				}
				js, err := Schema(sch)
				if err != nil {
					return "error: " + err.Error()
				}
				if _, err := parseSchema(js); err != nil {
					return "invalid schema: " + err.Error()
				}
				return indent(js) + "\n"
			case "roundtrip":
				return roundTrip(t, td)
			case "decode":
				return decode(t, td)
			}
			t.Fatalf("unknown command %s", td.Cmd)
			return ""
		})
	})
}

func indent(js string) string {
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		return js
	}
	b, _ := json.Marshal(v) // keys sorted: stable output
	return string(b)
}

func roundTrip(t *testing.T, td *datadriven.TestData) string {
	lines := strings.Split(strings.TrimSpace(td.Input), "\n")
	sch, err := conntest.ParseSchema(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	in, err := conntest.ParseBatch(sch, lines[1:])
	if err != nil {
		t.Fatal(err)
	}
	defer in.Rec.Release()
	spec := format.Spec{Schema: sch, Options: map[string]string{}, Prefix: Name + ".", Mem: memory.DefaultAllocator}
	enc, err := NewEncoder(spec)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	js, _ := Schema(sch)
	hs := avro.MustParse(js)
	dec, err := NewDecoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Release()
	var out strings.Builder
	for i := range in.Len() {
		rec := enc.AppendRow(nil, in.Rec, i)
		var v any
		if err := avro.Unmarshal(hs, rec, &v); err != nil {
			fmt.Fprintf(&out, "avro: error: %v\n", err)
		} else {
			b, _ := json.Marshal(v)
			fmt.Fprintf(&out, "avro: %s\n", b)
		}
		if err := dec.Decode(rec); err != nil {
			fmt.Fprintf(&out, "read: error: %v\n", err)
		}
	}
	b := exec.Batch{Rec: dec.Flush()}
	defer b.Rec.Release()
	for _, l := range rowfmt.Lines(sch, b) {
		fmt.Fprintf(&out, "read: %s\n", l)
	}
	return out.String()
}

func decode(t *testing.T, td *datadriven.TestData) string {
	var sch types.Schema
	var writer avro.Schema
	var recs [][]byte
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		switch {
		case strings.HasPrefix(l, "table: "):
			var err error
			if sch, err = conntest.ParseSchema(strings.TrimPrefix(l, "table: ")); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(l, "writer: "):
			var err error
			if writer, err = avro.Parse(strings.TrimPrefix(l, "writer: ")); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(l, "hex:"):
			b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimPrefix(l, "hex:"), " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, b)
		default:
			var v any
			d := json.NewDecoder(strings.NewReader(l))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			b, err := avro.Marshal(writer, native(t, writer, v))
			if err != nil {
				t.Fatalf("writing %q: %v", l, err)
			}
			recs = append(recs, b)
		}
	}
	spec := format.Spec{Schema: sch, Options: map[string]string{}, Mem: memory.DefaultAllocator}
	var produced types.Schema = sch
	if td.HasArg("fields") {
		var names []string
		td.ScanArgs(t, "fields", &names)
		for _, n := range names {
			spec.Fields = append(spec.Fields, sch.Index(n))
		}
		produced = nil
		for _, f := range spec.Fields {
			produced = append(produced, sch[f])
		}
	}
	r := newRows(spec)
	defer r.bld.Release()
	prog, err := r.program(writer)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	for i, rec := range recs {
		if err := r.decode(prog, rec); err != nil {
			fmt.Fprintf(&out, "record %d: error: %v\n", i, err)
		}
	}
	b := exec.Batch{Rec: r.flush()}
	defer b.Rec.Release()
	for _, l := range rowfmt.Lines(produced, b) {
		fmt.Fprintf(&out, "%s\n", l)
	}
	return out.String()
}

// native turns a JSON value into what hamba/avro writes as type s.
func native(t *testing.T, s avro.Schema, v any) any {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if v == nil {
		return nil
	}
	num := func() int64 {
		n, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	lt := avro.LogicalType("")
	if l := logical(s); l != nil {
		lt = l.Type()
	}
	if lt == avro.Decimal {
		r, ok := new(big.Rat).SetString(fmt.Sprint(v))
		if !ok {
			t.Fatalf("decimal %v", v)
		}
		return r
	}
	switch s := s.(type) {
	case *avro.UnionSchema:
		// {"branch": value} picks a branch by name, as Avro's JSON does.
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("a union value must be null or {\"type\": value}: %v", v)
		}
		for k, x := range m {
			for _, b := range s.Types() {
				name := string(b.Type())
				if n, ok := b.(avro.NamedSchema); ok {
					name = n.FullName()
				}
				if l := logical(b); l != nil {
					name += "." + string(l.Type())
				}
				if name == k {
					return map[string]any{k: native(t, b, x)}
				}
			}
			t.Fatalf("no union branch %s", k)
		}
	case *avro.RecordSchema:
		m := v.(map[string]any)
		out := map[string]any{}
		for _, f := range s.Fields() {
			out[f.Name()] = native(t, f.Type(), m[f.Name()])
		}
		return out
	case *avro.PrimitiveSchema:
		switch {
		case lt == avro.Date:
			return time.Unix(num()*86400, 0).UTC()
		case lt == avro.TimeMillis:
			return time.Duration(num()) * time.Millisecond
		case lt == avro.TimeMicros:
			return time.Duration(num()) * time.Microsecond
		case lt == avro.TimestampMillis:
			return time.UnixMilli(num()).UTC()
		case lt == avro.TimestampMicros:
			return time.UnixMicro(num()).UTC()
		}
		switch s.Type() {
		case avro.Int:
			return int(num())
		case avro.Long:
			return num()
		case avro.Float:
			f, _ := v.(json.Number).Float64()
			return float32(f)
		case avro.Double:
			f, _ := v.(json.Number).Float64()
			return f
		case avro.Bytes:
			return []byte(v.(string))
		}
		return v
	case *avro.ArraySchema:
		var out []any
		for _, x := range v.([]any) {
			out = append(out, native(t, s.Items(), x))
		}
		return out
	case *avro.MapSchema:
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = native(t, s.Values(), x)
		}
		return out
	case *avro.FixedSchema:
		b := []byte(v.(string))
		arr := make([]byte, s.Size())
		copy(arr, b)
		return arr
	}
	return v
}
