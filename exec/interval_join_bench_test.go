package exec_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// BenchmarkIntervalJoin: two datagen streams (in-process, 'rows-per-second'
// = '0') of 5M rows each, event time 1 ms per row up to 1 s out of order
// with watermarks 1 s behind, 10,000 keys, joined by
// l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts (about one joined row
// per right row) into a blackhole, on one core, as a checkpointed job (10 s
// interval) on the pebble and the hashmap backends:
//
//	go test ./exec -run '^$' -bench IntervalJoin -benchtime 1x -count 3
//
// (STREAMSQL_BENCH_ROWS=n sets the rows per stream.) On one core one
// stream runs ahead of the other, whose watermark the join waits for, and
// the rows of the faster stream pile up; the aligned runs put both sources
// in one watermark alignment group ('scan.watermark.alignment.max-drift' =
// '5 s'), which bounds that.
//
// Metrics: rows/s, input rows of both streams per second of the whole job
// (planning excluded); rows/cpu-s, the same per second of CPU time used by
// the process (on a loaded machine wall time overstates the cost); held-rows, the most rows the join held at once
// (sampled every 100 ms); ckpt-bytes, the largest checkpoint; peak-rss-MB,
// the process's peak resident memory (VmHWM, reset before each run) at the
// end of the run.
func BenchmarkIntervalJoin(b *testing.B) {
	rows := benchRows(5_000_000) // per stream
	table := func(name string, aligned bool) string {
		align := ""
		if aligned {
			align = `'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '5 s', `
		}
		return fmt.Sprintf(`CREATE TABLE %s (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0', %s
			'fields.k.min' = '1', 'fields.k.max' = '10000', %s)`, name, rows, align, eventTime)
	}
	const q = `INSERT INTO out SELECT l.k, l.v, r.v FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts`
	for _, run := range []string{"pebble", "hashmap", "pebble-aligned", "hashmap-aligned"} {
		backend, aligned := strings.CutSuffix(run, "-aligned")
		b.Run(run, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ctx := context.Background()
			var total, cpu time.Duration
			var held, ckpt, out int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := session.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				for _, q := range []string{"SET 'table.dml-sync' = 'true'", table("l", aligned), table("r", aligned),
					`CREATE TABLE out (k INT, lv BIGINT, rv BIGINT) WITH ('connector' = 'blackhole')`,
					"SET 'execution.checkpointing.interval' = '10s'", "SET 'state.backend' = '" + backend + "'",
					"SET 'pipeline.name' = 'bench-interval-join-" + run + "'"} {
					if _, err := s.Execute(ctx, q); err != nil {
						b.Fatalf("%s: %v", q, err)
					}
				}
				runtime.GC()
				resetPeakRSS()
				done := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-done:
							return
						case <-tick.C:
							for _, j := range s.Jobs() {
								held = max(held, j.JoinRows)
								ckpt = max(ckpt, j.Checkpoints.LastSize)
							}
						}
					}
				}()
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				if _, err := s.Execute(ctx, q); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				cpu += cpuTime() - cpu0
				b.StopTimer()
				close(done)
				<-sampled
				for _, j := range s.Jobs() {
					ckpt = max(ckpt, j.Checkpoints.LastSize)
					out += j.RecOut
				}
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(2*rows)*float64(b.N)/total.Seconds(), "rows/s")
			b.ReportMetric(float64(2*rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(out)/float64(b.N), "joined")
			b.ReportMetric(float64(held), "held-rows")
			b.ReportMetric(float64(ckpt), "ckpt-bytes")
			b.ReportMetric(peakRSSMB(), "peak-rss-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// peakRSSMB is the process's peak resident set size (VmHWM) in MB, 0 where
// /proc is not there.
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
