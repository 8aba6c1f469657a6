package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchUsage is `streamsql bench -h`.
const benchUsage = `usage: streamsql bench SUITE [flags]

suites (streamsql bench SUITE -h for each one's flags; bench/README.md):
  nexmark   the Nexmark queries of bench/nexmark, each run to its end in a
            process of its own: events per CPU second, peak RSS, state
            size; --flink runs Flink 2.2 on the same queries
  groupby   INSERT INTO blackhole_t SELECT k, COUNT(*), SUM(v) FROM
            datagen_t GROUP BY k over --rows rows of random keys in
            [0, --keys), per key count and state backend: rows per CPU
            second, peak RSS; --flink runs Flink 2.2 (RocksDB) on the
            same query
  soak      one workload (a Nexmark query or the group-by) for --duration
            in a streamsql server, its RSS, CPU time and records read
            sampled every --interval into --out; prints the first and
            last thirds' throughput and RSS, and their ratios
`

// runBench runs `streamsql bench SUITE`.
func runBench(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "nexmark":
			return runBenchNexmark(args[1:], os.Stdout)
		case "groupby":
			return runBenchGroupBy(args[1:], os.Stdout)
		case "soak":
			return runBenchSoak(args[1:], os.Stdout)
		case "-h", "-help", "--help":
			fmt.Fprint(os.Stdout, benchUsage)
			return 0
		}
	}
	fmt.Fprint(os.Stderr, benchUsage)
	return 2
}

// Engines a Nexmark run can measure.
const (
	engineStreamsql = "streamsql"
	engineFlink     = "flink"
)

// nexmarkConfig is what `streamsql bench nexmark` was asked for.
type nexmarkConfig struct {
	queries      []string // q0, q5, ...: bench/nexmark/<q>.sql
	events       int64
	parallelisms []int // each query runs at each, in turn
	engines      []string
	jsonFile     string
	markdown     string // the report of a run with Flink; "" for none
	repo         string // the repository root (bench/nexmark, bench/peers)
	javaHeap     string
	timeout      time.Duration // of each run
	args         []string      // the command line, for the report
}

// nexmarkRun is one query on one engine.
type nexmarkRun struct {
	Query              string  `json:"query"`
	Engine             string  `json:"engine"`
	Events             int64   `json:"events"`
	Parallelism        int     `json:"parallelism"`
	EventsPerSecond    float64 `json:"events_per_second"`
	EventsPerCPUSecond float64 `json:"events_per_cpu_second"`
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
	StateBytes         int64   `json:"state_bytes"`
	// Checkpointed: StateBytes is the size of a checkpoint; otherwise the
	// job completed none (streamsql: StateBytes is then its Pebble
	// directories' size, Flink: 0).
	Checkpointed bool    `json:"checkpointed"`
	WallSeconds  float64 `json:"wall_seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	// StartupCPUSeconds is the CPU time the engine's process had used
	// when its job was submitted (Flink: a JVM's start, the planner and
	// the MiniCluster's; streamsql: 0, not measured, under 0.1 s), and
	// EventsPerJobCPUSecond the events over the CPU time after it.
	StartupCPUSeconds     float64 `json:"startup_cpu_seconds"`
	EventsPerJobCPUSecond float64 `json:"events_per_job_cpu_second"`
	// LoadAverage is the machine's 1-minute load average when the run
	// started.
	LoadAverage float64 `json:"load_average"`
}

func newNexmarkFlags(c *nexmarkConfig, queries, engines, parallelisms *string, flinkToo *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("streamsql bench nexmark", flag.ContinueOnError)
	fs.StringVar(queries, "queries", "", "comma-separated queries of bench/nexmark to run (default: all of them but q6, which does not plan)")
	fs.Int64Var(&c.events, "events", 10_000_000, "events of each run (the nexmark table's 'events.num')")
	fs.StringVar(parallelisms, "parallelism", "1", "parallelism of every operator; a comma-separated list runs each query at each")
	fs.StringVar(&c.jsonFile, "json", "", "write the runs to `FILE` as JSON")
	fs.StringVar(engines, "engines", engineStreamsql, "comma-separated engines: streamsql, flink")
	fs.BoolVar(flinkToo, "flink", false, "same as --engines streamsql,flink")
	fs.StringVar(&c.markdown, "markdown", "", "the report of a run with both engines (default: bench/NEXMARK.md; '-' for none)")
	fs.StringVar(&c.repo, "repo", "", "the repository root (default: found from the working directory)")
	fs.StringVar(&c.javaHeap, "java-heap", "2g", "the heap of Flink's JVM (-Xmx)")
	fs.DurationVar(&c.timeout, "timeout", time.Hour, "the longest a run may take")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: streamsql bench nexmark [flags]

Runs each Nexmark query of bench/nexmark over --events events, each in a
process of its own, with 10 s checkpoints and Pebble state (Flink: RocksDB)
in a new temporary directory, and prints per query events/s, events per CPU
second, peak RSS and state size (see bench/nexmark/README.md).

flags:
`)
		fs.PrintDefaults()
	}
	return fs
}

func runBenchNexmark(args []string, stdout io.Writer) int {
	c := nexmarkConfig{args: args}
	var queries, engines, parallelisms string
	var flinkToo bool
	fs := newNexmarkFlags(&c, &queries, &engines, &parallelisms, &flinkToo)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.resolve(fs, queries, engines, parallelisms, flinkToo); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 2
	}
	runs, err := benchNexmark(context.Background(), c, stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	return writeBenchJSON(c.jsonFile, struct {
		Runs []nexmarkRun `json:"runs"`
	}{runs})
}

// writeBenchJSON writes v, a bench command's runs, as indented JSON to
// path (--json; nothing when it is empty) and returns the command's exit
// code: 0, or 1 when the file cannot be written.
func writeBenchJSON(path string, v any) int {
	if path == "" {
		return 0
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	return 0
}

// resolve checks the flags and fills in the defaults that depend on the
// repository.
func (c *nexmarkConfig) resolve(fs *flag.FlagSet, queries, engines, parallelisms string, flinkToo bool) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.events <= 0 {
		return fmt.Errorf("--events must be positive, got %d", c.events)
	}
	for _, p := range strings.Split(parallelisms, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return fmt.Errorf("--parallelism: want positive integers, got %q", p)
		}
		c.parallelisms = append(c.parallelisms, n)
	}
	if flinkToo {
		engines = engineStreamsql + "," + engineFlink
	}
	for _, e := range strings.Split(engines, ",") {
		e = strings.TrimSpace(e)
		if e != engineStreamsql && e != engineFlink {
			return fmt.Errorf("--engines: unknown engine %q (streamsql, flink)", e)
		}
		if !slices.Contains(c.engines, e) {
			c.engines = append(c.engines, e)
		}
	}
	if c.repo == "" {
		r, err := findRepo()
		if err != nil {
			return err
		}
		c.repo = r
	}
	all, err := nexmarkQueries(c.repo)
	if err != nil {
		return err
	}
	if queries == "" {
		for _, q := range all {
			if !nexmarkUnplanned[q] {
				c.queries = append(c.queries, q)
			}
		}
	} else {
		for _, q := range strings.Split(queries, ",") {
			q = strings.TrimSpace(q)
			if !slices.Contains(all, q) {
				return fmt.Errorf("--queries: no query %q in bench/nexmark (there: %s)", q, strings.Join(all, ", "))
			}
			c.queries = append(c.queries, q)
		}
	}
	switch {
	case c.markdown == "-":
		c.markdown = ""
	case c.markdown == "" && len(c.engines) == 2:
		c.markdown = filepath.Join(c.repo, "bench", "NEXMARK.md")
	}
	return nil
}

// findRepo is the repository root: the working directory or the first of
// its parents with bench/nexmark/ddl.sql.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "bench", "nexmark", "ddl.sql")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no bench/nexmark/ddl.sql in %s or its parents: run in the repository or give --repo", dir)
		}
	}
}

// nexmarkUnplanned are the queries of bench/nexmark that streamsql does not
// plan yet (bench/nexmark/README.md says why): run only when --queries
// names them.
var nexmarkUnplanned = map[string]bool{"q6": true}

// flinkRefuses are the queries of bench/nexmark Flink does not run, and
// why: with --flink they run on streamsql only, and the report says so.
var flinkRefuses = map[string]string{
	"q13": "Flink 2.2's filesystem connector is no lookup source, so its planner takes the processing-time join for an event-time temporal join and refuses it: \"Temporal Table Join requires primary key in versioned table\"",
}

// nexmarkQueries lists bench/nexmark's queries, q0 to q23 in order.
func nexmarkQueries(repo string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(repo, "bench", "nexmark", "q*.sql"))
	if err != nil {
		return nil, err
	}
	var qs []string
	for _, f := range files {
		qs = append(qs, strings.TrimSuffix(filepath.Base(f), ".sql"))
	}
	num := func(q string) int { n, _ := strconv.Atoi(strings.TrimPrefix(q, "q")); return n }
	slices.SortFunc(qs, func(a, b string) int { return num(a) - num(b) })
	if len(qs) == 0 {
		return nil, fmt.Errorf("no queries in %s", filepath.Join(repo, "bench", "nexmark"))
	}
	return qs, nil
}

var eventsNumOption = regexp.MustCompile(`'events\.num'\s*=\s*'[0-9]*'`)

// nexmarkDDL is bench/nexmark/ddl.sql with 'events.num' set to events.
func nexmarkDDL(repo string, events int64) (string, error) {
	b, err := os.ReadFile(filepath.Join(repo, "bench", "nexmark", "ddl.sql"))
	if err != nil {
		return "", err
	}
	if !eventsNumOption.Match(b) {
		return "", errors.New("bench/nexmark/ddl.sql sets no 'events.num'")
	}
	return eventsNumOption.ReplaceAllString(string(b), fmt.Sprintf("'events.num' = '%d'", events)), nil
}

// miniBatch are Flink nexmark's mini-batch settings (its flink-conf.yaml),
// set for both engines.
const miniBatch = `SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.mini-batch.size' = '50000';
`

// benchNexmark runs every query on every engine, in turn, and prints the
// table.
func benchNexmark(ctx context.Context, c nexmarkConfig, w io.Writer) ([]nexmarkRun, error) {
	ddl, err := nexmarkDDL(c.repo, c.events)
	if err != nil {
		return nil, err
	}
	var peer *nexmarkPeer
	if slices.Contains(c.engines, engineFlink) {
		fmt.Fprintln(w, "building bench/peers with Maven...")
		if peer, err = buildNexmarkPeer(c.repo); err != nil {
			return nil, err
		}
		fmt.Fprintln(w, peer)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	startLoad := loadAverage()
	start := time.Now()
	var runs []nexmarkRun
	for _, q := range c.queries {
		query, err := os.ReadFile(filepath.Join(c.repo, "bench", "nexmark", q+".sql"))
		if err != nil {
			return nil, err
		}
		for _, p := range c.parallelisms {
			for _, e := range c.engines {
				if why := flinkRefuses[q]; e == engineFlink && why != "" {
					fmt.Fprintf(w, "%s on flink: not run (%s)\n", q, why)
					continue
				}
				r, err := runNexmark(ctx, c, peer, self, q, e, p, ddl, string(query))
				if err != nil {
					return runs, fmt.Errorf("%s on %s at parallelism %d: %w", q, e, p, err)
				}
				state := byteSize(r.StateBytes)
				if !r.Checkpointed {
					state = "none"
				}
				fmt.Fprintf(w, "%s on %s, parallelism %d: %.1f s, %.1f CPU s (%.1f to start), %s events/s, %s events per CPU second, peak RSS %s, state %s\n",
					q, e, p, r.WallSeconds, r.CPUSeconds, r.StartupCPUSeconds, rate(r.EventsPerSecond), rate(r.EventsPerCPUSecond),
					byteSize(r.PeakRSSBytes), state)
				runs = append(runs, r)
			}
		}
	}
	table := nexmarkTable(runs, c.engines)
	fmt.Fprintln(w)
	fmt.Fprint(w, table)
	if c.markdown != "" {
		report := nexmarkReport(c, peer, runs, table, startLoad, loadAverage(), time.Since(start))
		if err := os.WriteFile(c.markdown, []byte(report), 0o644); err != nil {
			return runs, err
		}
		fmt.Fprintf(w, "\nwrote %s\n", c.markdown)
	}
	return runs, nil
}

// runNexmark runs query q on engine e at parallelism p in a new temporary
// directory, removed afterwards.
func runNexmark(ctx context.Context, c nexmarkConfig, peer *nexmarkPeer, self, q, e string, p int, ddl, query string) (nexmarkRun, error) {
	r := nexmarkRun{Query: q, Engine: e, Events: c.events, Parallelism: p, LoadAverage: loadAverage()}
	work, err := os.MkdirTemp("", "streamsql-nexmark-"+q+"-"+e+"-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(work)
	if query, err = prepareNexmarkQuery(query, work, c.repo, e); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var cost childCost
	switch e {
	case engineStreamsql:
		cost, r.StateBytes, r.Checkpointed, err = runStreamsqlNexmark(ctx, p, self, work, ddl, query)
	case engineFlink:
		cost, r.StateBytes, r.Checkpointed, err = peer.run(ctx, c.javaHeap, p, work, ddl, query)
	}
	if err != nil {
		return r, err
	}
	r.WallSeconds, r.CPUSeconds = cost.wall.Seconds(), cost.cpu.Seconds()
	r.EventsPerSecond, r.EventsPerCPUSecond, r.EventsPerJobCPUSecond = cost.rates(float64(c.events))
	r.PeakRSSBytes = cost.peakRSS
	r.StartupCPUSeconds = cost.startCPU.Seconds()
	return r, nil
}

// rates are n records over the run: per second, per CPU second, and per
// CPU second after start-up (the last two 0 when no CPU time was
// measured).
func (c childCost) rates(n float64) (perSecond, perCPU, perJobCPU float64) {
	perSecond = n / c.wall.Seconds()
	if cpu := c.cpu.Seconds(); cpu > 0 {
		perCPU = n / cpu
	}
	if job := (c.cpu - c.startCPU).Seconds(); job > 0 {
		perJobCPU = n / job
	}
	return perSecond, perCPU, perJobCPU
}

// The files the queries read and write, as bench/nexmark has them: q13's
// side input, q10's output directory, and the directory of q14's function
// count_char (a module of examples/udf).
const (
	nexmarkSideInput = "file:///tmp/nexmark_side_input.txt"
	nexmarkQ10Dir    = "file:///tmp/nexmark_q10/"
	nexmarkUDFDir    = "/tmp/nexmark_udf/"
)

// nexmarkUDF is a CREATE FUNCTION of bench/nexmark: a module of
// examples/udf, which Flink runs as the Java class of Flink nexmark that
// nexmarkJavaUDFs names (bench/peers).
var nexmarkUDF = regexp.MustCompile(`CREATE FUNCTION (\w+) AS '` + nexmarkUDFDir + `\w+\.wasm' LANGUAGE WASM`)

var nexmarkJavaUDFs = map[string]string{"count_char": "io.streamsql.bench.nexmark.CountChar"}

// prepareNexmarkQuery points a query's files into the run's directory work,
// removed with it: q13's side input, written there first as Flink
// nexmark's SideInputGenerator writes it (10,000 lines "i,i", i from 0),
// and q10's output directory. Both engines run the query so prepared, but
// for its functions: on streamsql the modules examples/udf/build.sh of
// repo builds into work, on Flink Flink nexmark's Java classes.
func prepareNexmarkQuery(query, work, repo, engine string) (string, error) {
	if nexmarkUDF.MatchString(query) {
		if engine == engineFlink {
			var missing string
			query = nexmarkUDF.ReplaceAllStringFunc(query, func(m string) string {
				name := nexmarkUDF.FindStringSubmatch(m)[1]
				class, ok := nexmarkJavaUDFs[name]
				if !ok {
					missing = name
				}
				return "CREATE FUNCTION " + name + " AS '" + class + "'"
			})
			if missing != "" {
				return "", fmt.Errorf("function %s has no Java class for Flink", missing)
			}
		} else {
			dir := filepath.Join(work, "udf")
			build := exec.Command("sh", filepath.Join(repo, "examples", "udf", "build.sh"), dir)
			if out, err := build.CombinedOutput(); err != nil {
				return "", fmt.Errorf("examples/udf/build.sh: %v\n%s", err, out)
			}
			query = strings.ReplaceAll(query, nexmarkUDFDir, dir+"/")
		}
	}
	if strings.Contains(query, nexmarkSideInput) {
		var b strings.Builder
		for i := range 10000 {
			fmt.Fprintf(&b, "%d,%d\n", i, i)
		}
		file := filepath.Join(work, "side_input.txt")
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			return "", err
		}
		query = strings.ReplaceAll(query, nexmarkSideInput, "file://"+file)
	}
	return strings.ReplaceAll(query, nexmarkQ10Dir, "file://"+filepath.Join(work, "nexmark_q10")+"/"), nil
}

// runStreamsqlNexmark runs a query with this binary (runStreamsqlJob):
// the DDL, the benchmark's settings with Pebble state and the query.
func runStreamsqlNexmark(ctx context.Context, parallelism int, self, work, ddl, query string) (childCost, int64, bool, error) {
	return runStreamsqlJob(ctx, self, work, ddl+benchSettings(parallelism, "pebble")+query)
}

// benchSettings are the SET lines of every streamsql run of the
// benchmarks: the parallelism, 10 s checkpoints, the state backend and
// Flink nexmark's mini-batch settings (miniBatch).
func benchSettings(parallelism int, backend string) string {
	return fmt.Sprintf(`
SET 'parallelism.default' = '%d';
SET 'execution.checkpointing.interval' = '10s';
SET 'state.backend' = '%s';
`, parallelism, backend) + miniBatch
}

// runStreamsqlJob runs a job file with this binary, `streamsql --data-dir
// WORK/data -f WORK/job.sql`. The state size is that of the job's latest
// checkpoint, or of its Pebble directories when it took none
// (checkpointed false).
func runStreamsqlJob(ctx context.Context, self, work, job string) (cost childCost, state int64, checkpointed bool, err error) {
	file := filepath.Join(work, "job.sql")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		return childCost{}, 0, false, err
	}
	data := filepath.Join(work, "data")
	cost, _, err = runMeasured(ctx, exec.Command(self, "--data-dir", data, "-f", file), "")
	if err != nil {
		return cost, 0, false, err
	}
	state, checkpointed = streamsqlStateSize(data)
	return cost, state, checkpointed, nil
}

// streamsqlStateSize is the size of the latest checkpoint of the (one) job
// in a data dir, or of its state directory when it has none (checkpointed
// false).
func streamsqlStateSize(data string) (size int64, checkpointed bool) {
	jobs, _ := filepath.Glob(filepath.Join(data, "jobs", "*"))
	for _, j := range jobs {
		// A completed checkpoint has its _metadata.
		chks, _ := filepath.Glob(filepath.Join(j, "checkpoints", "chk-*", "_metadata"))
		last, lastN := "", -1
		for _, chk := range chks {
			chk = filepath.Dir(chk)
			if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(chk), "chk-")); err == nil && n > lastN {
				last, lastN = chk, n
			}
		}
		if last != "" {
			size += dirSize(last)
			checkpointed = true
		} else {
			size += dirSize(filepath.Join(j, "state"))
		}
	}
	return size, checkpointed
}

// loadAverage is the machine's 1-minute load average (0 if unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
