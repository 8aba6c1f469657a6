package avro

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
)

// FuzzDecode: any bytes, read with a writer schema of every kind of
// field the resolver handles (skipped arrays and maps, unions, enums,
// fixed decimals, a nested record), are a row or an error, never a panic
// or a row appended in part.
func FuzzDecode(f *testing.F) {
	sch, err := conntest.ParseSchema("a BIGINT NOT NULL, s STRING, m DECIMAL(10, 2), t TIMESTAMP(3), r ROW<x INT, y STRING>, e STRING, f DECIMAL(6, 2), d DOUBLE")
	if err != nil {
		f.Fatal(err)
	}
	writer, err := parseSchema(`{"type":"record","name":"w","fields":[
		{"name":"a","type":"int"},
		{"name":"skip","type":{"type":"array","items":{"type":"map","values":["null","string"]}}},
		{"name":"s","type":["null","string","bytes"]},
		{"name":"m","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
		{"name":"t","type":["null",{"type":"long","logicalType":"timestamp-millis"}]},
		{"name":"r","type":["null",{"type":"record","name":"R","fields":[{"name":"x","type":"int"},{"name":"y","type":["null","string"]}]}]},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
		{"name":"f","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal","precision":6,"scale":2}},
		{"name":"d","type":"float"}]}`)
	if err != nil {
		f.Fatal(err)
	}
	r := newRows(format.Spec{Schema: sch, Mem: memory.DefaultAllocator})
	defer r.bld.Release()
	prog, err := r.program(writer)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{2, 0, 0, 4, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 2, 2, 0, 2, 'k', 0, 0, 2, 2, 'x', 2, 0x7f, 0, 2, 4, 2, 2, 'y', 2, 0, 1, 2, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		before := r.n
		err := r.decode(prog, rec)
		if err == nil && r.n != before+1 || err != nil && r.n != before {
			t.Fatalf("rows %d -> %d with error %v", before, r.n, err)
		}
		for i := range r.cols {
			if got := r.bld.Field(i).Len(); got != r.n {
				t.Fatalf("column %d has %d values, %d rows", i, got, r.n)
			}
		}
		if r.n >= 1024 {
			r.flush().Release()
		}
	})
}
