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
	"github.com/streamsql/streamsql/connectors/internal/conntest"
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

// BenchmarkWritePartitioned writes 1M rows of Nexmark q10's shape (four
// data columns and two partition columns, 60 partitions) through a
// partitioned sink ('partitioned'), and the same rows with the partition
// columns as data into an unpartitioned one ('flat'), then commits. Run
// both in one invocation and compare rows/s; allocs/op covers the whole
// run (part files, their buffers and directories included).
func BenchmarkWritePartitioned(b *testing.B) {
	schema := types.Schema{{Name: "auction", Type: types.BigIntType}, {Name: "price", Type: types.BigIntType},
		{Name: "ts", Type: types.TimestampOf(3)}, {Name: "extra", Type: types.StringType},
		{Name: "dt", Type: types.StringType}, {Name: "hm", Type: types.StringType}}
	const rows, batch = 1_000_000, 1024
	var lines []string
	for i := range batch {
		lines = append(lines, fmt.Sprintf("%d, %d, 2024-01-01 00:%02d:00, extra%d, 2024-01-01, 00:%02d", i, i*7, i%60, i, i%60))
	}
	bt, err := conntest.ParseBatch(schema, lines)
	if err != nil {
		b.Fatal(err)
	}
	defer bt.Rec.Release()
	for _, name := range []string{"partitioned", "flat"} {
		b.Run(name, func(b *testing.B) {
			var keys []string
			if name == "partitioned" {
				keys = []string{"dt", "hm"}
			}
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				s, err := registry.Sink(filesystem.Name, exec.TableSpec{Table: "t", Schema: schema, PartitionKeys: keys, Parallelism: 1,
					Mem: memory.DefaultAllocator, Options: map[string]string{"path": b.TempDir(), "format": "csv"}})
				if err != nil {
					b.Fatal(err)
				}
				s.Open(ctx)
				for n := 0; n < rows; n += batch {
					if err := s.Write(ctx, bt); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Finish(ctx); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
