package exec_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// BenchmarkPipelineLookupJoin: Nexmark q13's shape, 1M probe rows (10K
// keys) joined in processing time with a 10,000-row CSV side input
// ('lookup'), against the same pipeline without the join ('scan': the
// PROCTIME() projection into the blackhole), at GOMAXPROCS=1. Run both in
// one invocation and compare their rows/cpu-s (CPU time of the process,
// user and system, GC included); allocs/row is the heap allocations per
// probe row over the whole job (the side input's load included).
func BenchmarkPipelineLookupJoin(b *testing.B) {
	const probes, side = 1_000_000, 10_000
	queries := map[string]string{
		"lookup": `INSERT INTO out SELECT B.k, B.v, S.val
			FROM (SELECT *, PROCTIME() AS p FROM probe) B
			JOIN side FOR SYSTEM_TIME AS OF B.p AS S ON MOD(B.k, 10000) = S.key`,
		"scan": `INSERT INTO out SELECT B.k, B.v, CAST(B.p AS STRING)
			FROM (SELECT *, PROCTIME() AS p FROM probe) B`,
	}
	for _, name := range []string{"lookup", "scan"} {
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ctx := context.Background()
			var total, cpu time.Duration
			var allocs uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := b.TempDir()
				s, err := session.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				for _, q := range []string{
					"SET 'table.dml-sync' = 'true'",
					fmt.Sprintf(`CREATE TABLE probe (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
						'rows-per-second' = '0', 'fields.k.min' = '1', 'fields.k.max' = '10000')`, probes),
					fmt.Sprintf(`CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'fields.k.kind' = 'sequence',
						'fields.k.start' = '0', 'fields.k.end' = '%d')`, side-1),
					`CREATE TABLE side (key BIGINT, val VARCHAR) WITH ('connector' = 'filesystem', 'path' = '` + dir + `/side', 'format' = 'csv')`,
					`INSERT INTO side SELECT k, CAST(k AS VARCHAR) FROM gen`,
					`CREATE TABLE out (k BIGINT, v BIGINT, val VARCHAR) WITH ('connector' = 'blackhole')`,
				} {
					if _, err := s.Execute(ctx, q); err != nil {
						b.Fatalf("%s: %v", q, err)
					}
				}
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				if _, err := s.Execute(ctx, queries[name]); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				cpu += cpuTime() - cpu0
				b.StopTimer()
				runtime.ReadMemStats(&m1)
				allocs += m1.Mallocs - m0.Mallocs
				jobs := s.Jobs()
				if out := jobs[len(jobs)-1].RecOut; out != probes {
					b.Fatalf("%d rows out, want %d", out, probes)
				}
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(probes)*float64(b.N)/total.Seconds(), "rows/s")
			b.ReportMetric(float64(probes)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(allocs)/float64(probes)/float64(b.N), "allocs/row")
			b.ReportMetric(0, "ns/op")
		})
	}
}
