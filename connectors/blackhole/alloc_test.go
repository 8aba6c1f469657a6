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

func TestWriteAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	schema := types.Schema{{Name: "id", Type: types.BigIntType}}
	b := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, [][]types.Value{{int64(1)}})}
	defer b.Rec.Release()
	s, err := registry.Sink(blackhole.Name, exec.TableSpec{Table: "bh", Schema: schema, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Write allocates %v times per batch", n)
	}
}
