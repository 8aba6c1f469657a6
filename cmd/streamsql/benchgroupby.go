package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// groupByQuery is the group-by of `streamsql bench groupby` and `bench
// soak --groupby`: a count and a sum per key, every key's row updated as
// its rows come.
const groupByQuery = "INSERT INTO blackhole_t SELECT k, COUNT(*), SUM(v) FROM datagen_t GROUP BY k;\n"

// flinkRowsPerSecond is the datagen table's 'rows-per-second' on Flink,
// whose datagen has no '0' (as fast as possible): far above what one
// machine generates, so it never throttles.
const flinkRowsPerSecond = "1000000000000"

// groupByDDL is the group-by's tables: datagen_t, rows (0: unbounded) of
// a random key k in [0, keys-1] and a random value v in [0, 1000], as
// fast as the engine takes them, and the blackhole sink blackhole_t. For
// Flink (flink), the same with a rate no machine reaches.
func groupByDDL(keys, rows int64, flink bool) string {
	perSecond := "0"
	if flink {
		perSecond = flinkRowsPerSecond
	}
	var numRows string
	if rows > 0 {
		numRows = fmt.Sprintf("\n    'number-of-rows' = '%d',", rows)
	}
	return fmt.Sprintf(`CREATE TABLE datagen_t (
    k BIGINT,
    v BIGINT
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '%s',%s
    'fields.k.min' = '0',
    'fields.k.max' = '%d',
    'fields.v.min' = '0',
    'fields.v.max' = '1000'
);

CREATE TABLE blackhole_t (
    k BIGINT,
    c BIGINT,
    s BIGINT
) WITH ('connector' = 'blackhole');
`, perSecond, numRows, keys-1)
}

// groupByConfig is what `streamsql bench groupby` was asked for.
type groupByConfig struct {
	keys        []int64
	rows        int64
	backends    []string // streamsql's: pebble, hashmap
	flink       bool
	parallelism int
	jsonFile    string
	markdown    string // the report; "" for none
	repo        string
	javaHeap    string
	timeout     time.Duration
	args        []string
}

// groupByRun is one run of the group-by: on streamsql with a state
// backend, or on Flink (backend rocksdb).
type groupByRun struct {
	Keys             int64   `json:"keys"`
	Rows             int64   `json:"rows"`
	Engine           string  `json:"engine"`
	Backend          string  `json:"backend"`
	Parallelism      int     `json:"parallelism"`
	RowsPerSecond    float64 `json:"rows_per_second"`
	RowsPerCPUSecond float64 `json:"rows_per_cpu_second"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	StateBytes       int64   `json:"state_bytes"`
	Checkpointed     bool    `json:"checkpointed"`
	WallSeconds      float64 `json:"wall_seconds"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	// As in nexmarkRun: Flink's start-up CPU, and the rows over the CPU
	// time after it.
	StartupCPUSeconds   float64 `json:"startup_cpu_seconds"`
	RowsPerJobCPUSecond float64 `json:"rows_per_job_cpu_second"`
	LoadAverage         float64 `json:"load_average"`
}

func newGroupByFlags(c *groupByConfig, keys, backends *string) *flag.FlagSet {
	fs := flag.NewFlagSet("streamsql bench groupby", flag.ContinueOnError)
	fs.StringVar(keys, "keys", "500000,4000000,20000000", "comma-separated distinct key counts, a run each")
	fs.Int64Var(&c.rows, "rows", 40_000_000, "rows of each run (the datagen table's 'number-of-rows')")
	fs.StringVar(backends, "backend", "pebble,hashmap", "comma-separated state backends of streamsql: pebble, hashmap")
	fs.BoolVar(&c.flink, "flink", false, "run Flink 2.2 (RocksDB state, bench/peers) on each key count too")
	fs.IntVar(&c.parallelism, "parallelism", 1, "the parallelism of every operator")
	fs.StringVar(&c.jsonFile, "json", "", "write the runs to `FILE` as JSON")
	fs.StringVar(&c.markdown, "markdown", "", "the report (default: bench/GROUPBY.md; '-' for none)")
	fs.StringVar(&c.repo, "repo", "", "the repository root (default: found from the working directory)")
	fs.StringVar(&c.javaHeap, "java-heap", "2g", "the heap of Flink's JVM (-Xmx)")
	fs.DurationVar(&c.timeout, "timeout", time.Hour, "the longest a run may take")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: streamsql bench groupby [flags]

Runs `+strings.TrimSpace(groupByQuery)+`
over --rows rows of datagen_t (a random key k in [0, keys-1], a random
value v) for each key count of --keys and each state backend of --backend,
each in a process of its own with 10 s checkpoints in a new temporary
directory, and prints rows/s, rows per CPU second, peak RSS and state size
per run; --flink runs Flink 2.2 with RocksDB state on the same SQL (see
bench/README.md).

flags:
`)
		fs.PrintDefaults()
	}
	return fs
}

func runBenchGroupBy(args []string, stdout io.Writer) int {
	c := groupByConfig{args: args}
	var keys, backends string
	fs := newGroupByFlags(&c, &keys, &backends)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.resolve(fs, keys, backends); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 2
	}
	runs, err := benchGroupBy(context.Background(), c, stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	return writeBenchJSON(c.jsonFile, struct {
		Runs []groupByRun `json:"runs"`
	}{runs})
}

func (c *groupByConfig) resolve(fs *flag.FlagSet, keys, backends string) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.rows <= 0 {
		return fmt.Errorf("--rows must be positive, got %d", c.rows)
	}
	if c.parallelism <= 0 {
		return fmt.Errorf("--parallelism must be positive, got %d", c.parallelism)
	}
	for _, k := range strings.Split(keys, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(k), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("--keys: want positive integers, got %q", k)
		}
		c.keys = append(c.keys, n)
	}
	for _, b := range strings.Split(backends, ",") {
		b = strings.TrimSpace(b)
		if b != "pebble" && b != "hashmap" {
			return fmt.Errorf("--backend: unknown backend %q (pebble, hashmap)", b)
		}
		if !slices.Contains(c.backends, b) {
			c.backends = append(c.backends, b)
		}
	}
	if c.repo == "" {
		r, err := findRepo()
		if err != nil {
			return err
		}
		c.repo = r
	}
	switch c.markdown {
	case "-":
		c.markdown = ""
	case "":
		c.markdown = filepath.Join(c.repo, "bench", "GROUPBY.md")
	}
	return nil
}

// benchGroupBy runs the group-by for each key count, on each backend and
// then on Flink, in turn, and prints the table.
func benchGroupBy(ctx context.Context, c groupByConfig, w io.Writer) ([]groupByRun, error) {
	var peer *nexmarkPeer
	if c.flink {
		fmt.Fprintln(w, "building bench/peers with Maven...")
		var err error
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
	var runs []groupByRun
	for _, k := range c.keys {
		engines := slices.Clone(c.backends)
		if c.flink {
			engines = append(engines, engineFlink)
		}
		for _, e := range engines {
			r, err := runGroupBy(ctx, c, peer, self, k, e)
			if err != nil {
				return runs, fmt.Errorf("%d keys on %s: %w", k, e, err)
			}
			state := byteSize(r.StateBytes)
			if !r.Checkpointed {
				state = "none"
			}
			fmt.Fprintf(w, "%d keys, %d rows on %s (%s): %.1f s, %.1f CPU s (%.1f to start), %s rows/s, %s rows per CPU second, peak RSS %s, state %s\n",
				k, c.rows, r.Engine, r.Backend, r.WallSeconds, r.CPUSeconds, r.StartupCPUSeconds, rate(r.RowsPerSecond), rate(r.RowsPerCPUSecond),
				byteSize(r.PeakRSSBytes), state)
			runs = append(runs, r)
		}
	}
	table := groupByTable(runs)
	fmt.Fprintln(w)
	fmt.Fprint(w, table)
	if c.markdown != "" {
		report := groupByReport(c, peer, table, startLoad, loadAverage(), time.Since(start))
		if err := os.WriteFile(c.markdown, []byte(report), 0o644); err != nil {
			return runs, err
		}
		fmt.Fprintf(w, "\nwrote %s\n", c.markdown)
	}
	return runs, nil
}

// runGroupBy runs the group-by over keys on e, a backend of streamsql or
// flink, in a new temporary directory removed afterwards.
func runGroupBy(ctx context.Context, c groupByConfig, peer *nexmarkPeer, self string, keys int64, e string) (groupByRun, error) {
	r := groupByRun{Keys: keys, Rows: c.rows, Engine: engineStreamsql, Backend: e, Parallelism: c.parallelism, LoadAverage: loadAverage()}
	if e == engineFlink {
		r.Engine, r.Backend = engineFlink, "rocksdb"
	}
	work, err := os.MkdirTemp("", "streamsql-groupby-"+e+"-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var cost childCost
	if e == engineFlink {
		cost, r.StateBytes, r.Checkpointed, err = peer.run(ctx, c.javaHeap, c.parallelism, work, groupByDDL(keys, c.rows, true), groupByQuery)
	} else {
		job := groupByDDL(keys, c.rows, false) + benchSettings(c.parallelism, e) + groupByQuery
		cost, r.StateBytes, r.Checkpointed, err = runStreamsqlJob(ctx, self, work, job)
	}
	if err != nil {
		return r, err
	}
	r.WallSeconds, r.CPUSeconds = cost.wall.Seconds(), cost.cpu.Seconds()
	r.RowsPerSecond, r.RowsPerCPUSecond, r.RowsPerJobCPUSecond = cost.rates(float64(c.rows))
	r.PeakRSSBytes = cost.peakRSS
	r.StartupCPUSeconds = cost.startCPU.Seconds()
	return r, nil
}

// groupByTable is the Markdown table of the runs, a row each.
func groupByTable(runs []groupByRun) string {
	var b strings.Builder
	b.WriteString("| keys | rows | P | engine | state | rows/s | rows per CPU second | after start-up | peak RSS | checkpoint | wall s | CPU s | start-up CPU s | load |\n")
	b.WriteString("|--:|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range runs {
		state := byteSize(r.StateBytes)
		if !r.Checkpointed {
			state = "none"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f |\n",
			count(r.Keys), count(r.Rows), r.Parallelism, r.Engine, r.Backend, rate(r.RowsPerSecond), rate(r.RowsPerCPUSecond), rate(r.RowsPerJobCPUSecond),
			byteSize(r.PeakRSSBytes), state, r.WallSeconds, r.CPUSeconds, r.StartupCPUSeconds, r.LoadAverage)
	}
	return b.String()
}

// count prints a count: 500K, 4M, 1.5M, 999.
func count(n int64) string {
	switch {
	case n >= 1e6 && n%1e5 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 1e3 && n%1e3 == 0:
		return strconv.FormatInt(n/1e3, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

// groupByReport is bench/GROUPBY.md: the command, the machine, the load,
// the query and the table.
func groupByReport(c groupByConfig, peer *nexmarkPeer, table string, load0, load1 float64, took time.Duration) string {
	var b strings.Builder
	b.WriteString("# A group-by over many keys: streamsql's state backends and Flink\n\n")
	b.WriteString("Written by `streamsql bench groupby` (bench/README.md says what it runs and measures). The run:\n\n")
	fmt.Fprintf(&b, "```sh\nstreamsql bench groupby %s\n```\n\n", strings.Join(c.args, " "))
	fmt.Fprintf(&b, "- when: %s, %s in all\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	fmt.Fprintf(&b, "- machine: %s, %d cores (`nproc`), %s; %s/%s\n", cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- load average (1 min): %.2f at the start, %.2f at the end; each run's is in the table. The machine is shared with other work, so compare rows per CPU second rather than rows/s\n", load0, load1)
	fmt.Fprintf(&b, "- streamsql: %s (%s), built with %s\n", version, buildCommit(c.repo), runtime.Version())
	if peer != nil {
		fmt.Fprintf(&b, "- Flink: 2.2.1 (bench/peers), %s, JVM -Xmx%s; %s\n", javaVersion(), c.javaHeap, peer)
	}
	fmt.Fprintf(&b, "- parallelism (P) %d, 10 s checkpoints, mini-batches of 2 s / 50,000 rows\n\n", c.parallelism)
	fmt.Fprintf(&b, "The query, over a datagen table of a random BIGINT key k in [0, keys-1] and a random BIGINT v in [0, 1000] (`'rows-per-second'` '0' on streamsql, %s on Flink, whose datagen has no '0'), into a blackhole sink:\n\n```sql\n%s```\n\n", flinkRowsPerSecond, groupByQuery)
	b.WriteString("Each figure is of one run, from the start of the engine's process to its exit. Rows per CPU second is the rows over the process's user+sys CPU time; \"after start-up\" leaves out the CPU time Flink's JVM, planner and MiniCluster had used when the job was submitted (streamsql's is not measured: the same figure); peak RSS is the process's VmHWM; checkpoint the size of the latest checkpoint at the end (\"none\": the job took none).\n\n")
	b.WriteString(table)
	return b.String()
}
