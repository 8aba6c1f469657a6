package session

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"
)

var (
	nexmarkEvents = flag.Int("nexmark.events", 500_000, "events of each BenchmarkNexmark run")
	nexmarkHeap   = flag.String("nexmark.heap", "", "BenchmarkNexmark: write a heap profile (live objects) to this file while the job runs, after -nexmark.heap-after")
	nexmarkAfter  = flag.Duration("nexmark.heap-after", 5*time.Second, "BenchmarkNexmark: when to write -nexmark.heap")
)

// BenchmarkNexmark runs Nexmark queries of bench/nexmark as `streamsql
// bench nexmark` runs them (its ddl.sql, Pebble state, 10 s checkpoints,
// mini-batches of 2 s / 50,000 rows), in this process, so that -cpuprofile
// and -memprofile see the job (and -nexmark.heap the live heap while it
// runs). events/cpu-s is the figure the bench reports:
//
//	GOMAXPROCS=1 go test ./session -run '^$' -bench 'Nexmark/q16' -benchtime 1x -nexmark.events 500000 -cpuprofile /tmp/cpu.out
func BenchmarkNexmark(b *testing.B) {
	ddl, err := os.ReadFile(filepath.Join("..", "bench", "nexmark", "ddl.sql"))
	if err != nil {
		b.Fatal(err)
	}
	events := regexp.MustCompile(`'events\.num'\s*=\s*'[0-9]*'`)
	setup := events.ReplaceAllString(string(ddl), fmt.Sprintf("'events.num' = '%d'", *nexmarkEvents)) + `
SET 'table.dml-sync' = 'true';
SET 'execution.checkpointing.interval' = '10s';
SET 'state.backend' = 'pebble';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.mini-batch.size' = '50000';
`
	for _, q := range []string{"q1", "q15", "q16", "q21", "q22"} {
		b.Run(q, func(b *testing.B) {
			query, err := os.ReadFile(filepath.Join("..", "bench", "nexmark", q+".sql"))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var cpu, wall time.Duration
			for range b.N {
				b.StopTimer()
				s, err := Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Execute(ctx, setup); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				var heap *time.Timer
				if *nexmarkHeap != "" {
					heap = time.AfterFunc(*nexmarkAfter, func() { writeHeapProfile(b, *nexmarkHeap) })
				}
				if _, err := s.Execute(ctx, string(query)); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
				wall += time.Since(start)
				if heap != nil {
					heap.Stop()
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			n := float64(*nexmarkEvents) * float64(b.N)
			b.ReportMetric(n/cpu.Seconds(), "events/cpu-s")
			b.ReportMetric(n/wall.Seconds(), "events/s")
		})
	}
}

func writeHeapProfile(b *testing.B, path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Error(err)
	}
}
