package exec_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/session"
)

// The window benchmarks run SQL through a session on bounded datagen input
// (in-process, 'rows-per-second' = '0'), on one core, as checkpointed jobs
// (10 s interval) on the pebble backend (on disk, under a temporary data
// directory) and on the hashmap backend, so their ratio comes from one run:
//
//	go test ./exec -run '^$' -bench 'PipelineTumble|PipelineHop' -benchtime 1x -count 3
//
// Event time is a datagen TIMESTAMP sequence: 1 ms per row (1000 events per
// second of event time, as Nexmark's default inter-event delay), up to
// 1 s out of order, with a watermark 1 s behind. So a 1-minute TUMBLE fires
// every 60,000 rows and a HOP of 10 s sliding by 2 s every 2,000 rows, and
// state holds only the windows the watermark has not passed.
//
// Metrics: rows/s of the whole job (planning excluded); rows/cpu-s, rows
// per second of the process's CPU time (user + system, every thread), a
// figure that holds on a shared machine; allocs/batch, the
// heap allocations of the job (every goroutine, from submission to its end)
// per input batch of exec.DefaultBatchSize rows; checkpoints, those
// completed per run (the inputs are sized for a run of 10 to 30 s on one
// core, so that some are); ckpt-bytes, the size of the largest completed
// checkpoint, the job's state as it writes it (0 when none completed);
// peak-rss-MB, the process's peak resident memory (VmHWM, reset before
// each run) over the runs, the session's catalog and the benchmark's own
// memory included.
func benchWindowJob(b *testing.B, rows int, ddl []string, insert string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	var total, cpu time.Duration
	var mallocs uint64
	var checkpoints, ckpt int64
	var rss float64
	var ms runtime.MemStats
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
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		resetPeakRSS()
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		if _, err := s.Execute(ctx, insert); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
		rss = max(rss, peakRSSMB())
		for _, j := range s.Jobs() {
			checkpoints += int64(j.Checkpoints.Completed)
			ckpt = max(ckpt, j.Checkpoints.LastSize)
		}
		s.Close()
		b.StartTimer()
	}
	batches := float64(rows) * float64(b.N) / exec.DefaultBatchSize
	b.ReportMetric(float64(rows)*float64(b.N)/total.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(mallocs)/batches, "allocs/batch")
	b.ReportMetric(float64(checkpoints)/float64(b.N), "checkpoints")
	b.ReportMetric(float64(ckpt), "ckpt-bytes")
	b.ReportMetric(rss, "peak-rss-MB")
	b.ReportMetric(0, "ns/op")
}

// resetPeakRSS returns the heap's free memory to the system and resets the
// process's peak resident memory (VmHWM) to its current resident memory,
// so that peakRSSMB then measures what follows, not what an earlier run
// left mapped.
func resetPeakRSS() {
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// cpuTime is the process's CPU time so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// eventTime is the DDL of a datagen TIMESTAMP column ts advancing 1 ms per
// row, up to 1 s out of order.
const eventTime = `'fields.ts.kind' = 'sequence', 'fields.ts.start' = '2024-01-01 00:00:00',
	'fields.ts.step' = '1 ms', 'fields.ts.max-past' = '1 s'`

// checkpointed runs the job as a checkpointed job on each backend.
func checkpointed(b *testing.B, name string, rows int, ddl []string, q string) {
	for _, backend := range []string{"pebble", "hashmap"} {
		b.Run(backend, func(b *testing.B) {
			benchWindowJob(b, rows, append(ddl, "SET 'execution.checkpointing.interval' = '10s'",
				"SET 'state.backend' = '"+backend+"'", "SET 'pipeline.name' = '"+name+"-"+backend+"'"), q)
		})
	}
}

// BenchmarkPipelineTumble: datagen -> TUMBLE 1 min COUNT(*) over 1000 keys
// -> blackhole; 150M rows are 41.7 hours of event time, 2500 windows of
// 1000 groups each.
func BenchmarkPipelineTumble(b *testing.B) {
	const rows = 150_000_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE clicks (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '1000', %s)`, rows, eventTime),
		`CREATE TABLE out (window_start TIMESTAMP(3), k INT, n BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT window_start, k, COUNT(*)
		FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
		GROUP BY window_start, window_end, k`
	checkpointed(b, "bench-tumble", rows, ddl, q)
}

// BenchmarkPipelineHop: Nexmark q5's shape, HOP 10 s / 2 s MAX(price) by
// auction (every row in 5 windows) over 1000 auctions -> blackhole; 15M
// rows fire 7500 windows of up to 1000 groups each.
func BenchmarkPipelineHop(b *testing.B) {
	const rows = 15_000_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.auction.min' = '1', 'fields.auction.max' = '1000',
			'fields.price.min' = '1', 'fields.price.max' = '100000', %s)`, rows, eventTime),
		`CREATE TABLE out (window_start TIMESTAMP(3), auction BIGINT, hi BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT window_start, auction, MAX(price)
		FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, auction`
	checkpointed(b, "bench-hop", rows, ddl, q)
}
