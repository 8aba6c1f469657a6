package blackhole_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/blackhole"
	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

func BenchmarkBlackhole(b *testing.B) {
	ctx := context.Background()
	schema := types.Schema{{Name: "id", Type: types.BigIntType}}
	rows := make([][]types.Value, 1024)
	for i := range rows {
		rows[i] = []types.Value{int64(i)}
	}
	batch := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, rows)}
	defer batch.Rec.Release()
	s, err := registry.Sink(blackhole.Name, exec.TableSpec{Table: "bh", Schema: schema, Parallelism: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Open(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Write(ctx, batch) }); n != 0 {
		b.Fatalf("Write allocates %v times per batch", n)
	}
}
