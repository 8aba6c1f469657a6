// Command kafkabench measures Kafka -> COUNT(*) by key -> Kafka end to end
// on a `streamsql kafka-dev` broker, on Apache Kafka (--broker apache) or
// on both in turn: streamsql exactly-once and at-least-once (the binary run
// as a subprocess), the exactly-once job again in `streamsql server` with
// its /metrics read every second, a bare franz-go consume->count->produce loop in
// transactions (the floor), goka v1.1.16 at-least-once, and Kafka Streams
// 4.4 and Flink 2.2.1 SQL, exactly-once (Java programs under ../peers,
// built with Maven). See ../README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	streamsql   string
	broker      string // kafka-dev, apache or both
	repo        string // the repository's root (scripts/, bench/peers/)
	javaHeap    string // -Xmx of the Java peers
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
	// The latency mode (latency.go), on when rate is set.
	rate             string
	duration, warmup time.Duration
	maxRecords       int
}

// result is one contender's measurement.
type result struct {
	name    string
	elapsed time.Duration // from start until the output was complete
	outRecs int64         // committed output records read by the checker
	usage   usage
	// brokerCPU is the broker's CPU time over the contender's run (the
	// checker's fetches included).
	brokerCPU time.Duration
	note      string
	round     int
	err       error
}

// cpuPerM is the CPU seconds the contender spent per million input
// records.
func (r result) cpuPerM(n int) float64 { return r.usage.cpu.Seconds() * 1e6 / float64(n) }

func (r result) rate(n int) float64 { return float64(n) / r.elapsed.Seconds() }

func main() {
	var c config
	flag.StringVar(&c.streamsql, "streamsql", "", "path of the streamsql `binary` (go build -o streamsql ./cmd/streamsql)")
	flag.StringVar(&c.broker, "broker", kindKafkaDev, "the broker to run on: kafka-dev, apache (scripts/apache-kafka.sh) or both (one after the other)")
	flag.StringVar(&c.repo, "repo", "", "the repository's `root` (default: the first directory up from here holding scripts/apache-kafka.sh)")
	flag.StringVar(&c.javaHeap, "java-heap", "2g", "maximum heap (-Xmx) of the Kafka Streams and Flink JVMs")
	flag.IntVar(&c.records, "records", 5_000_000, "clicks to produce and count")
	flag.IntVar(&c.keys, "keys", 1000, "distinct app ids (keys)")
	flag.IntVar(&c.partitions, "partitions", 4, "partitions of every topic")
	flag.IntVar(&c.parallelism, "parallelism", 2, "streamsql's 'parallelism.default'")
	flag.DurationVar(&c.checkpoint, "checkpoint", time.Second, "checkpoint interval (streamsql) and transaction length (bare loop)")
	flag.BoolVar(&c.classic, "classic-txn", false, "run kafka-dev with the classic (pre-KIP-890) transaction protocol")
	flag.StringVar(&c.only, "only", "", "comma-separated contenders to run, of "+allContenders+" (default: all; kstreams and flink only on Apache Kafka)")
	flag.StringVar(&c.gokaStorage, "goka-storage", "memory", "goka's local table storage: memory or leveldb")
	flag.StringVar(&c.results, "results", "RESULTS.md", "write the results (markdown) to this `file`; empty: do not")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up on a contender after this long")
	flag.IntVar(&c.rounds, "rounds", 3, "measure each contender this many times (in turn), report the median")
	flag.StringVar(&c.rate, "rate", "", "latency mode: comma-separated input rates, each records/s (20000) or a share of streamsql's measured maximum (50%); the contenders are "+latencyContenders)
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "latency mode: how long each contender's measured window lasts")
	flag.DurationVar(&c.warmup, "warmup", 5*time.Second, "latency mode: the wait from a contender's first output to its measured window")
	flag.IntVar(&c.maxRecords, "max-records", 3_000_000, "latency mode: records the maximum is measured over (for a rate given as a share)")
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
	switch c.broker {
	case kindKafkaDev, kindApache, "both":
	default:
		fmt.Fprintln(os.Stderr, "kafkabench: --broker must be kafka-dev, apache or both")
		os.Exit(2)
	}
	known := allContenders
	if c.rate != "" {
		known = latencyContenders
	}
	if c.only == "" {
		c.only = known
	} else {
		for _, k := range strings.Split(c.only, ",") {
			k = strings.TrimSpace(k)
			if !strings.Contains(","+known+",", ","+k+",") {
				fmt.Fprintf(os.Stderr, "kafkabench: unknown contender %q in --only (known: %s)\n", k, known)
				os.Exit(2)
			}
			if isJava(k) && c.broker == kindKafkaDev {
				fmt.Fprintf(os.Stderr, "kafkabench: %s runs on Apache Kafka only (--broker apache or both): %s\n", k, whyNotKafkaDev)
				os.Exit(2)
			}
		}
	}
	if c.repo == "" {
		c.repo = findRepo()
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

// allContenders are the --only keys, in the order each round runs them.
const allContenders = "eo,eo-server,alo,bare,goka,kstreams,flink"

// isJava says whether contender k is a Java peer: they run on Apache
// Kafka only.
func isJava(k string) bool { return strings.HasPrefix(k, "kstreams") || strings.HasPrefix(k, "flink") }

// whyNotKafkaDev is why the Java peers do not run on kafka-dev.
const whyNotKafkaDev = "the Java clients reject two of kafka-dev's answers (a DescribeConfigs config source of -1: Kafka Streams fails creating its changelog topic; a DescribeTopicPartitions partition without eligible leader replicas: Flink's Kafka source fails listing the partitions)"

// section is the part of a run on one broker.
type section struct {
	broker  *broker
	in      *input
	results []result
	table   string
}

func run(c config) error {
	// An interrupt (or SIGTERM) ends the contender that runs, stops the
	// broker and removes the temporary directory before exiting.
	base, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	work, err := os.MkdirTemp("", "kafkabench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	wantAny := func(name string) bool {
		for _, s := range strings.Split(c.only, ",") {
			if strings.TrimSpace(s) == name {
				return true
			}
		}
		return false
	}
	wantPeer := func(peer string) bool {
		for _, s := range strings.Split(c.only, ",") {
			if strings.HasPrefix(strings.TrimSpace(s), peer) {
				return true
			}
		}
		return false
	}
	// The Java peers are built once, before any broker starts.
	peers := map[string]*javaPeer{}
	for _, p := range []struct{ key, main string }{
		{"kstreams", "io.streamsql.bench.KStreamsCount"},
		{"flink", "io.streamsql.bench.FlinkSqlCount"},
	} {
		if !wantPeer(p.key) || c.broker == kindKafkaDev {
			continue
		}
		jp, err := buildPeer(c.repo, p.key, p.main)
		if err != nil {
			return err
		}
		logf("%s", jp)
		peers[p.key] = jp
	}
	kinds := []string{c.broker}
	if c.broker == "both" {
		kinds = []string{kindKafkaDev, kindApache}
	}
	if c.rate != "" {
		rates, err := parseRates(c.rate)
		if err != nil {
			return err
		}
		var tables []string
		for _, kind := range kinds {
			want := func(name string) bool { return wantAny(name) && (kind == kindApache || !isJava(name)) }
			t, err := runLatency(base, c, rates, latencyContenderList(), want, filepath.Join(work, kind), peers, kind)
			if err != nil {
				return err
			}
			fmt.Println()
			fmt.Print(t)
			tables = append(tables, t)
		}
		if c.results != "" {
			if err := writeLatencyResults(c, tables, peers); err != nil {
				return err
			}
			logf("wrote %s", c.results)
		}
		return nil
	}
	var sections []section
	failed := false
	for _, kind := range kinds {
		want := func(name string) bool { return wantAny(name) && (kind == kindApache || !isJava(name)) }
		s, err := runOn(base, c, kind, filepath.Join(work, kind), want, peers)
		if err != nil {
			return err
		}
		s.table = formatTable(c, s.in, s.results)
		if kind == kindKafkaDev && (wantAny("kstreams") || wantAny("flink")) {
			s.table += "- Kafka Streams and Flink ran on Apache Kafka only: " + whyNotKafkaDev + "\n"
		}
		fmt.Println()
		fmt.Println("## " + s.broker.desc)
		fmt.Println()
		fmt.Print(s.table)
		for _, r := range s.results {
			failed = failed || r.err != nil
		}
		sections = append(sections, s)
	}
	if c.results != "" {
		if err := writeResults(c, sections, peers); err != nil {
			return err
		}
		logf("wrote %s", c.results)
	}
	if failed {
		return fmt.Errorf("a contender failed")
	}
	return nil
}

// runOn starts a broker of the kind, produces the input and runs every
// wanted contender --rounds times on it.
func runOn(base context.Context, c config, kind, work string, want func(string) bool, peers map[string]*javaPeer) (section, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return section{}, err
	}
	topics := []string{"clicks"}
	for r := 1; r <= c.rounds; r++ {
		for _, k := range strings.Split(allContenders, ",") {
			topics = append(topics, fmt.Sprintf("pv_%s_%d", k, r))
		}
	}
	b, err := startBroker(c, kind, work, topics...)
	if err != nil {
		return section{}, err
	}
	defer b.stop()
	logf("%s on %s (%d partitions)", b.desc, b.addr, c.partitions)

	in, err := produceClicks(b.addr, c.records, c.keys)
	if err != nil {
		return section{}, fmt.Errorf("producing the input: %w", err)
	}
	logf("produced %d clicks over %d keys in %v (%.0f records/s)", c.records, c.keys, in.took.Round(time.Millisecond), float64(c.records)/in.took.Seconds())

	type contender struct {
		key string
		// inProcess: it runs in this process, which measures its own
		// usage around it.
		inProcess bool
		fn        func(ctx context.Context, round int) result
	}
	contenders := []contender{
		{"eo", false, func(ctx context.Context, round int) result { return runStreamsql(ctx, c, b, in, work, true, round) }},
		{"eo-server", false, func(ctx context.Context, round int) result { return runStreamsqlServer(ctx, c, b, in, work, round) }},
		{"alo", false, func(ctx context.Context, round int) result { return runStreamsql(ctx, c, b, in, work, false, round) }},
		{"bare", true, func(ctx context.Context, round int) result { return runBare(ctx, c, b, in, round) }},
		{"goka", true, func(ctx context.Context, round int) result { return runGoka(ctx, c, b, in, work, round) }},
		{"kstreams", false, func(ctx context.Context, round int) result {
			return runKStreams(ctx, c, b, in, work, peers["kstreams"], round)
		}},
		{"flink", false, func(ctx context.Context, round int) result {
			return runFlink(ctx, c, b, in, work, peers["flink"], round)
		}},
	}
	// Each round measures every contender once, in turn, so that a slow
	// spell of the machine does not fall on one contender only.
	var all []result
	for round := 1; round <= c.rounds; round++ {
		for _, ct := range contenders {
			if !want(ct.key) {
				continue
			}
			if base.Err() != nil {
				return section{}, fmt.Errorf("interrupted")
			}
			ctx, cancel := context.WithTimeout(base, c.timeout)
			runtime.GC()
			var m *selfMeter
			if ct.inProcess {
				m = startSelfMeter()
			}
			bcpu := b.cpu()
			r := ct.fn(ctx, round)
			r.brokerCPU = b.cpu() - bcpu
			if m != nil {
				r.usage = m.stop()
			}
			cancel()
			r.round = round
			if r.err != nil {
				logf("round %d, %s: FAILED: %v", round, r.name, r.err)
			} else {
				logf("round %d, %s: %d records in %v: %.0f records/s, %.2f CPU s per 1M records, peak RSS %s, broker %.2f CPU s per 1M (%d output records)",
					round, r.name, c.records, r.elapsed.Round(time.Millisecond), r.rate(c.records), r.cpuPerM(c.records), mib(r.usage.maxRSS),
					r.brokerCPU.Seconds()*1e6/float64(c.records), r.outRecs)
			}
			all = append(all, r)
		}
	}
	return section{broker: b, in: in, results: all}, nil
}

// findRepo is the first directory from the working directory up that
// holds scripts/apache-kafka.sh ("." if none does).
func findRepo() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "apache-kafka.sh")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

// mib formats bytes as MiB ("n/a" for 0: unknown).
func mib(n int64) string {
	if n <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func logf(format string, args ...any) {
	fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
