// Command kafkabench measures Kafka -> COUNT(*) by key -> Kafka end to end
// on one `streamsql kafka-dev` broker: streamsql exactly-once and
// at-least-once (the binary run as a subprocess), a bare franz-go
// consume->count->produce loop in transactions (the floor), and goka
// v1.1.16 at-least-once. See ../README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	streamsql   string
	records     int
	keys        int
	partitions  int
	parallelism int
	checkpoint  time.Duration
	classic     bool
	only        string
	gokaStorage string
	results     string
	timeout     time.Duration
	rounds      int
}

// result is one contender's measurement.
type result struct {
	name    string
	elapsed time.Duration // from start until the output was complete
	outRecs int64         // committed output records read by the checker
	note    string
	round   int
	err     error
}

func (r result) rate(n int) float64 { return float64(n) / r.elapsed.Seconds() }

func main() {
	var c config
	flag.StringVar(&c.streamsql, "streamsql", "", "path of the streamsql `binary` (go build -o streamsql ./cmd/streamsql)")
	flag.IntVar(&c.records, "records", 5_000_000, "clicks to produce and count")
	flag.IntVar(&c.keys, "keys", 1000, "distinct app ids (keys)")
	flag.IntVar(&c.partitions, "partitions", 4, "partitions of every topic")
	flag.IntVar(&c.parallelism, "parallelism", 2, "streamsql's 'parallelism.default'")
	flag.DurationVar(&c.checkpoint, "checkpoint", time.Second, "checkpoint interval (streamsql) and transaction length (bare loop)")
	flag.BoolVar(&c.classic, "classic-txn", false, "run kafka-dev with the classic (pre-KIP-890) transaction protocol")
	flag.StringVar(&c.only, "only", "eo,alo,bare,goka", "comma-separated contenders to run: eo, alo, bare, goka")
	flag.StringVar(&c.gokaStorage, "goka-storage", "memory", "goka's local table storage: memory or leveldb")
	flag.StringVar(&c.results, "results", "RESULTS.md", "write the results (markdown) to this `file`; empty: do not")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up on a contender after this long")
	flag.IntVar(&c.rounds, "rounds", 3, "measure each contender this many times (in turn), report the median")
	flag.Parse()
	if c.streamsql == "" {
		fmt.Fprintln(os.Stderr, "kafkabench: --streamsql is required (build it: go build -o streamsql ./cmd/streamsql)")
		os.Exit(2)
	}
	if c.rounds < 1 {
		fmt.Fprintln(os.Stderr, "kafkabench: --rounds must be at least 1")
		os.Exit(2)
	}
	if c.gokaStorage != "memory" && c.gokaStorage != "leveldb" {
		fmt.Fprintln(os.Stderr, "kafkabench: --goka-storage must be memory or leveldb")
		os.Exit(2)
	}
	abs, err := filepath.Abs(c.streamsql)
	if err == nil {
		c.streamsql = abs
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "kafkabench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	work, err := os.MkdirTemp("", "kafkabench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	topics := []string{"clicks"}
	for r := 1; r <= c.rounds; r++ {
		for _, k := range []string{"eo", "alo", "bare", "goka"} {
			topics = append(topics, fmt.Sprintf("pv_%s_%d", k, r))
		}
	}
	b, err := startBroker(c.streamsql, c.partitions, c.classic, topics...)
	if err != nil {
		return err
	}
	defer b.stop()
	logf("kafka-dev on %s (%d partitions, %s)", b.addr, c.partitions, b.mode())

	in, err := produceClicks(b.addr, c.records, c.keys)
	if err != nil {
		return fmt.Errorf("producing the input: %w", err)
	}
	logf("produced %d clicks over %d keys in %v (%.0f records/s)", c.records, c.keys, in.took.Round(time.Millisecond), float64(c.records)/in.took.Seconds())

	want := func(name string) bool {
		for _, s := range strings.Split(c.only, ",") {
			if strings.TrimSpace(s) == name {
				return true
			}
		}
		return false
	}
	type contender struct {
		key string
		fn  func(ctx context.Context, round int) result
	}
	contenders := []contender{
		{"eo", func(ctx context.Context, round int) result { return runStreamsql(ctx, c, b, in, work, true, round) }},
		{"alo", func(ctx context.Context, round int) result { return runStreamsql(ctx, c, b, in, work, false, round) }},
		{"bare", func(ctx context.Context, round int) result { return runBare(ctx, c, b, in, round) }},
		{"goka", func(ctx context.Context, round int) result { return runGoka(ctx, c, b, in, work, round) }},
	}
	// Each round measures every contender once, in turn, so that a slow
	// spell of the machine does not fall on one contender only.
	var all []result
	for round := 1; round <= c.rounds; round++ {
		for _, ct := range contenders {
			if !want(ct.key) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			runtime.GC()
			r := ct.fn(ctx, round)
			cancel()
			r.round = round
			if r.err != nil {
				logf("round %d, %s: FAILED: %v", round, r.name, r.err)
			} else {
				logf("round %d, %s: %d records in %v: %.0f records/s (%d output records)", round, r.name, c.records, r.elapsed.Round(time.Millisecond), r.rate(c.records), r.outRecs)
			}
			all = append(all, r)
		}
	}
	table := formatTable(c, in, all)
	fmt.Println()
	fmt.Print(table)
	if c.results != "" {
		if err := writeResults(c, b, table); err != nil {
			return err
		}
		logf("wrote %s", c.results)
	}
	for _, r := range all {
		if r.err != nil {
			return fmt.Errorf("%s failed", r.name)
		}
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
