package exec_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// BenchmarkPipelineTemporalJoin: 1M orders (ts 1 ms apart, up to 1 s out
// of order, 10K currencies) LEFT JOIN a versioned table of 10K currencies
// with 100K versions over the same 1000 s of event time (a version every
// 10 ms, about 10 per key) -> blackhole, at GOMAXPROCS=1 with 10 s
// checkpoints. rows/s counts the rows of both inputs per second of wall
// time, rows/cpu-s per second of the process's CPU time (user and system,
// GC included: on a shared machine the wall time also counts other
// processes'); state-bytes is the size of the last checkpoint.
func BenchmarkPipelineTemporalJoin(b *testing.B) {
	const (
		orders   = 1_000_000
		versions = 100_000
		keys     = 10_000
	)
	for _, backend := range []string{"pebble", "hashmap"} {
		b.Run(backend, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ctx := context.Background()
			var total, cpu time.Duration
			var stateBytes int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := session.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				for _, q := range []string{
					"SET 'table.dml-sync' = 'true'",
					"SET 'execution.checkpointing.interval' = '10s'",
					"SET 'state.backend' = '" + backend + "'",
					"SET 'pipeline.name' = 'bench-temporal-" + backend + "'",
					fmt.Sprintf(`CREATE TABLE orders (k INT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
						'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
						'fields.k.min' = '1', 'fields.k.max' = '%d', %s)`, orders, keys, eventTime),
					fmt.Sprintf(`CREATE TABLE rates (k INT, rate INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, PRIMARY KEY (k) NOT ENFORCED) WITH (
						'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
						'fields.k.min' = '1', 'fields.k.max' = '%d',
						'fields.ts.kind' = 'sequence', 'fields.ts.start' = '2024-01-01 00:00:00', 'fields.ts.step' = '10 ms')`, versions, keys),
					`CREATE TABLE out (k INT, amount INT, rate INT) WITH ('connector' = 'blackhole')`,
				} {
					if _, err := s.Execute(ctx, q); err != nil {
						b.Fatalf("%s: %v", q, err)
					}
				}
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				if _, err := s.Execute(ctx, `INSERT INTO out SELECT o.k, o.amount, r.rate
					FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k`); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				cpu += cpuTime() - cpu0
				b.StopTimer()
				info := s.Jobs()[0]
				if info.RecOut != orders {
					b.Fatalf("%d rows out, want %d", info.RecOut, orders)
				}
				stateBytes = info.Checkpoints.LastSize
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(orders+versions)*float64(b.N)/total.Seconds(), "rows/s")
			b.ReportMetric(float64(orders+versions)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(stateBytes), "state-bytes")
			b.ReportMetric(0, "ns/op")
		})
	}
}
