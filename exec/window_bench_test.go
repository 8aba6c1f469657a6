package exec_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// The window benchmarks run SQL through a session on bounded datagen input
// (in-process, 'rows-per-second' = '0'), on one core:
//
//	go test ./exec -run '^$' -bench PipelineTumble -benchtime 1x
//
// Event times are datagen's: the wall clock minus up to 'max-past', so a run
// of a few seconds keeps one or two 1-minute windows open per key and the
// watermark advances with every batch.
func benchWindowJob(b *testing.B, rows int, ddl []string, insert string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := session.Open("")
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range append([]string{"SET 'table.dml-sync' = 'true'"}, ddl...) {
			if _, err := s.Execute(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		b.StartTimer()
		start := time.Now()
		if _, err := s.Execute(ctx, insert); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/total.Seconds(), "rows/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkPipelineTumble: datagen -> TUMBLE 1 min COUNT(*) over 1000 keys
// -> blackhole; without checkpoints, and with 10 s checkpoints on the
// hashmap backend.
func BenchmarkPipelineTumble(b *testing.B) {
	const rows = 10_000_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE clicks (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '1000', 'fields.ts.max-past' = '3s')`, rows),
		`CREATE TABLE out (window_start TIMESTAMP(3), k INT, n BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT window_start, k, COUNT(*)
		FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
		GROUP BY window_start, window_end, k`
	b.Run("memory", func(b *testing.B) { benchWindowJob(b, rows, ddl, q) })
	b.Run("checkpointed-hashmap", func(b *testing.B) {
		benchWindowJob(b, rows, append(ddl, "SET 'execution.checkpointing.interval' = '10s'",
			"SET 'state.backend' = 'hashmap'", "SET 'pipeline.name' = 'bench-tumble'"), q)
	})
}

// BenchmarkPipelineHop: Nexmark q5's shape, HOP 10 s / 2 s MAX(price) by
// auction (every row in 5 windows) over 1000 auctions -> blackhole.
func BenchmarkPipelineHop(b *testing.B) {
	const rows = 5_000_000
	benchWindowJob(b, rows, []string{
		fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.auction.min' = '1', 'fields.auction.max' = '1000',
			'fields.price.min' = '1', 'fields.price.max' = '100000', 'fields.ts.max-past' = '1s')`, rows),
		`CREATE TABLE out (window_start TIMESTAMP(3), auction BIGINT, hi BIGINT) WITH ('connector' = 'blackhole')`,
	}, `INSERT INTO out SELECT window_start, auction, MAX(price)
		FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction`)
}
