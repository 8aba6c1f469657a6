package filesystem_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/filesystem"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkRead reads 1M rows of four columns from one CSV or JSON-lines file.
func BenchmarkRead(b *testing.B) {
	for _, fm := range []string{"csv", "json"} {
		b.Run(fm, func(b *testing.B) {
			dir := b.TempDir()
			f, _ := os.Create(filepath.Join(dir, "a"))
			w := bufio.NewWriter(f)
			for i := range 1000000 {
				if fm == "csv" {
					fmt.Fprintf(w, "%d,name%d,%d.25,2024-01-02 03:04:05.123\n", i, i, i%1000)
				} else {
					fmt.Fprintf(w, `{"id":%d,"s":"name%d","d":%d.25,"ts":"2024-01-02 03:04:05.123"}`+"\n", i, i, i%1000)
				}
			}
			w.Flush()
			f.Close()
			schema := types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "s", Type: types.StringType}, {Name: "d", Type: types.DecimalOf(10, 2)}, {Name: "ts", Type: types.TimestampOf(3)}}
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				src, _ := registry.Source(filesystem.Name, exec.TableSpec{Table: "t", Schema: schema, Parallelism: 1, BatchSize: 1024, Mem: memory.DefaultAllocator,
					Options: map[string]string{"path": dir, "format": fm}})
				src.Open(context.Background())
				for {
					bt, err := src.Next(context.Background())
					if err != nil {
						break
					}
					rows += bt.Len()
					bt.Rec.Release()
				}
				src.Close()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
