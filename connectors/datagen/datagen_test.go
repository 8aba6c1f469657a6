package datagen_test

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/datagen"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// benchSpec is the benchmark table: a BIGINT sequence, a random INT and a
// random STRING (100 hex characters, Flink's default length).
func benchSpec(rows string) exec.TableSpec {
	return exec.TableSpec{
		Table: "bench",
		Schema: types.Schema{
			{Name: "id", Type: types.BigIntType},
			{Name: "v", Type: types.IntType},
			{Name: "s", Type: types.StringType},
		},
		Options: map[string]string{
			"rows-per-second": "0",
			"number-of-rows":  rows,
			"fields.id.kind":  "sequence",
			"fields.id.start": "1",
			"fields.id.end":   "1000000000000",
			"fields.v.min":    "0",
			"fields.v.max":    "1000",
		},
		Parallelism: 1,
		BatchSize:   exec.DefaultBatchSize,
		Mem:         memory.DefaultAllocator,
	}
}

func drain(tb testing.TB, spec exec.TableSpec) int {
	ctx := context.Background()
	src, err := registry.Source(datagen.Name, spec)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	if err := src.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for {
		b, err := src.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n += b.Len()
		b.Rec.Release()
	}
}

// BenchmarkDatagen generates 1M rows of three columns per iteration.
func BenchmarkDatagen(b *testing.B) {
	spec := benchSpec("1000000")
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		rows += drain(b, spec)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func TestRowCountExact(t *testing.T) {
	for _, p := range []int{1, 3, 7} {
		total := 0
		for i := range p {
			spec := benchSpec("100001")
			spec.Parallelism, spec.Subtask, spec.BatchSize = p, i, 1000
			total += drain(t, spec)
		}
		if total != 100001 {
			t.Errorf("parallelism %d: %d rows, want 100001", p, total)
		}
	}
}
