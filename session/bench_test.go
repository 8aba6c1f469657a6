package session

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// The pipeline benchmarks run real SQL through the session on bounded
// datagen input: every operator, channel and batch is the production path.
// Run them with GOMAXPROCS=1 to compare with the per-core targets:
//
//	GOMAXPROCS=1 go test ./session -run '^$' -bench Pipeline -benchtime 3x
func benchJob(b *testing.B, rows int, ddl []string, insert string) {
	b.ReportAllocs()
	ctx := context.Background()
	var total, cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := Open("")
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range append([]string{"SET 'table.dml-sync' = 'true'"}, ddl...) {
			if _, err := s.Execute(ctx, q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		if _, err := s.Execute(ctx, insert); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/total.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the process's CPU time so far (user + system, every thread):
// rows per CPU second hold on a shared machine where rows per second do not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipelineFilterProject: datagen -> WHERE + 3-column projection -> blackhole.
func BenchmarkPipelineFilterProject(b *testing.B) {
	const rows = 10_000_000
	benchJob(b, rows, []string{
		fmt.Sprintf(`CREATE TABLE src (id BIGINT, user_id INT, price DOUBLE, name STRING) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
			'fields.user_id.min' = '1', 'fields.user_id.max' = '1000',
			'fields.price.min' = '1', 'fields.price.max' = '100', 'fields.name.length' = '8')`, rows, rows),
		`CREATE TABLE out (id BIGINT, user_id INT, total DOUBLE) WITH ('connector' = 'blackhole')`,
	}, `INSERT INTO out SELECT id, user_id, price * 2 FROM src WHERE user_id > 10`)
}

// BenchmarkPipelineGroupBy: datagen -> GROUP BY over 10K keys, COUNT + SUM
// -> blackhole, in an ad-hoc job (in-memory state, no checkpoints), and as
// checkpointed jobs (1 s interval) on the hashmap and pebble backends, so
// their ratio comes from one run.
func BenchmarkPipelineGroupBy(b *testing.B) {
	const rows = 5_000_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE src (id BIGINT, k INT, v BIGINT) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
			'fields.k.min' = '1', 'fields.k.max' = '10000', 'fields.v.min' = '1', 'fields.v.max' = '100')`, rows, rows),
		`CREATE TABLE out (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k`
	b.Run("memory", func(b *testing.B) { benchJob(b, rows, ddl, q) })
	for _, backend := range []string{"hashmap", "pebble"} {
		b.Run("checkpointed-"+backend, func(b *testing.B) {
			benchJob(b, rows, append(ddl, "SET 'execution.checkpointing.interval' = '1s'",
				"SET 'state.backend' = '"+backend+"'", "SET 'pipeline.name' = 'bench-"+backend+"'"), q)
		})
	}
}
