package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
)

// soakConfig is what `streamsql bench soak` was asked for.
type soakConfig struct {
	query       string // a query of bench/nexmark; "" with groupBy
	groupBy     bool
	events      int64 // the nexmark table's 'events.num'; 0: unbounded
	keys, rows  int64 // the group-by's; rows 0: unbounded
	backend     string
	parallelism int
	sets        []string // 'key' = 'value' settings after the benchmark's own
	interval    time.Duration
	duration    time.Duration
	out         string // the samples, TSV; "" for none
	jsonFile    string // the summary and the samples, JSON; "" for none
	repo        string
	pprof       bool // the server serves /debug/pprof/
	// checkpointDir is where the job keeps its checkpoints: a new folder
	// of it for each run ("": the run's data directory).
	checkpointDir string
	// restore: after the run, a new server on an empty data directory
	// restores the job from checkpointDir, timed.
	restore bool
}

// soakSample is one sample of a soak run: the job's records in (its
// sources' rows read) and the server process's CPU time and resident set
// at Elapsed seconds after the job's submission, and the rates over the
// interval since the previous sample.
type soakSample struct {
	Elapsed             float64 `json:"elapsed_s"`
	RecordsIn           int64   `json:"records_in"`
	RecordsPerSecond    float64 `json:"records_per_s"`
	RecordsPerCPUSecond float64 `json:"records_per_cpu_s"`
	RSSMiB              float64 `json:"rss_mib"`
	CPUSeconds          float64 `json:"cpu_s"`
}

// soakHeader is the first line of --out: the columns of soakSample.
const soakHeader = "elapsed_s\trecords_in\trecords_per_s\trecords_per_cpu_s\trss_mib\tcpu_s\n"

func (s soakSample) tsv() string {
	return fmt.Sprintf("%.1f\t%d\t%.0f\t%.0f\t%.1f\t%.2f\n", s.Elapsed, s.RecordsIn, s.RecordsPerSecond, s.RecordsPerCPUSecond, s.RSSMiB, s.CPUSeconds)
}

// soakWindow is a stretch of a soak run, from the sample at From seconds
// to the one at To: the records over the wall time and over the CPU time
// between the two, and the highest and the mean resident set sampled in
// it (both samples included).
type soakWindow struct {
	From                float64 `json:"from_s"`
	To                  float64 `json:"to_s"`
	RecordsPerSecond    float64 `json:"records_per_s"`
	RecordsPerCPUSecond float64 `json:"records_per_cpu_s"`
	PeakRSSMiB          float64 `json:"peak_rss_mib"`
	MeanRSSMiB          float64 `json:"mean_rss_mib"`
}

// soakSummary is what a soak run printed at its end (and --json writes).
type soakSummary struct {
	Workload       string  `json:"workload"`
	Ended          string  `json:"ended"` // "input ended" or "duration"
	ElapsedSeconds float64 `json:"elapsed_s"`
	RecordsIn      int64   `json:"records_in"`
	CPUSeconds     float64 `json:"cpu_s"`
	Restarts       int     `json:"restarts"`
	// PeakRSSMiB is the server process's VmHWM at the end.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// First and Last are the first and last thirds of the run, or its
	// first and last five minutes when it ran over 15 minutes; zero, as
	// the ratios, when it had fewer than three samples.
	First soakWindow `json:"first"`
	Last  soakWindow `json:"last"`
	// The ratios are Last's over First's: peak RSS, records/s, records per
	// CPU second.
	RSSRatio           float64      `json:"rss_ratio"`
	ThroughputRatio    float64      `json:"throughput_ratio"`
	CPUThroughputRatio float64      `json:"cpu_throughput_ratio"`
	Samples            []soakSample `json:"samples"`
	// Checkpoints are the job's completed checkpoints, and the throughput
	// while one ran against the throughput while none did.
	Checkpoints soakCheckpoints `json:"checkpoints"`
	// Restore is --restore's: the job restored on a new server.
	Restore *soakRestore `json:"restore,omitempty"`
}

// soakCheckpoints sums up the completed checkpoints (savepoints left out)
// of a soak run from its job's checkpoint history (GET
// /api/v1/jobs/{id}/checkpoints, the newest 100): their count, their
// durations (trigger to completion, the asynchronous upload included),
// the last one's size, and the mean newly written and uploaded bytes.
// During and Outside split the run's polls of the job (every 250 ms) into
// the stretches between two polls inside a checkpoint (from its trigger to
// its completion or failure) and those outside every checkpoint; a
// stretch across a checkpoint's start or end is in neither. Synchronous
// and Upload are the stretches of During inside a completed checkpoint's
// synchronous part (to its last ack) and inside its asynchronous part
// (the upload and the metadata). The ratios are During's over Outside's:
// 1 when checkpoints cost the records nothing.
type soakCheckpoints struct {
	Completed            int         `json:"completed"`
	Failed               int         `json:"failed"`
	MeanSeconds          float64     `json:"mean_s"`
	MeanAckedSeconds     float64     `json:"mean_acked_s"`
	MaxSeconds           float64     `json:"max_s"`
	LastSeconds          float64     `json:"last_s"`
	LastSizeBytes        int64       `json:"last_size_bytes"`
	MeanIncrementalBytes float64     `json:"mean_incremental_bytes"`
	MeanUploadedBytes    float64     `json:"mean_uploaded_bytes"`
	LastUploadedBytes    int64       `json:"last_uploaded_bytes"`
	During               soakStretch `json:"during"`
	Synchronous          soakStretch `json:"synchronous"`
	Upload               soakStretch `json:"upload"`
	Outside              soakStretch `json:"outside"`
	ThroughputRatio      float64     `json:"throughput_ratio"`
	CPUThroughputRatio   float64     `json:"cpu_throughput_ratio"`
}

// soakStretch is the time, records and CPU time of a kind of stretch.
type soakStretch struct {
	Seconds             float64 `json:"s"`
	Records             int64   `json:"records"`
	CPUSeconds          float64 `json:"cpu_s"`
	RecordsPerSecond    float64 `json:"records_per_s"`
	RecordsPerCPUSecond float64 `json:"records_per_cpu_s"`
}

// soakRestore is the job restored by --restore: the checkpoint it
// restored (its id, and its size in the new data directory), the seconds
// the submission of the job took on the new server (planning, downloading
// the checkpoint's files, verifying them, opening the state: the job runs
// when it returns), and the new server's CPU seconds until then (its start
// included).
type soakRestore struct {
	Checkpoint int64   `json:"checkpoint"`
	SizeBytes  int64   `json:"size_bytes"`
	Seconds    float64 `json:"s"`
	CPUSeconds float64 `json:"cpu_s"`
	// SubmitSeconds is the first submission's, which restored nothing.
	SubmitSeconds float64 `json:"submit_s"`
}

// soakTick is a poll of the job: the time, its records in, the server's
// CPU time.
type soakTick struct {
	at      time.Time
	records int64
	cpu     time.Duration
}

// setList is a repeatable flag.
type setList []string

func (s *setList) String() string     { return strings.Join(*s, ", ") }
func (s *setList) Set(v string) error { *s = append(*s, v); return nil }

func newSoakFlags(c *soakConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("streamsql bench soak", flag.ContinueOnError)
	fs.StringVar(&c.query, "query", "", "the query of bench/nexmark to run (q5, q7, ...)")
	fs.BoolVar(&c.groupBy, "groupby", false, "run the group-by of bench groupby over --keys and --rows instead")
	fs.Int64Var(&c.events, "events", 0, "--query: the nexmark table's 'events.num' (0: unbounded, the run ends at --duration)")
	fs.Int64Var(&c.keys, "keys", 1_000_000, "--groupby: the distinct keys ('fields.k.min' 0, 'fields.k.max' keys-1)")
	fs.Int64Var(&c.rows, "rows", 0, "--groupby: the datagen table's 'number-of-rows' (0: unbounded, the run ends at --duration)")
	fs.StringVar(&c.backend, "backend", "pebble", "the state backend: pebble or hashmap")
	fs.IntVar(&c.parallelism, "parallelism", 1, "the parallelism of every operator")
	fs.Var((*setList)(&c.sets), "set", "set `KEY=VALUE` in the job after the benchmark's own settings (repeatable), e.g. --set state.backend.cache.max-entries=10000")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "the time between samples")
	fs.DurationVar(&c.duration, "duration", 30*time.Minute, "the longest the run takes: it ends then, or when its input ends")
	fs.StringVar(&c.out, "out", "", "write the samples to `FILE`, tab-separated, a header line first")
	fs.StringVar(&c.jsonFile, "json", "", "write the summary and the samples to `FILE` as JSON")
	fs.BoolVar(&c.pprof, "pprof", false, "the server serves Go's profiles under /debug/pprof/ (at the URL the first line prints), to profile the run at any point")
	fs.StringVar(&c.repo, "repo", "", "the repository root (default: found from the working directory)")
	fs.StringVar(&c.checkpointDir, "checkpoint-dir", "", "keep the job's checkpoints in a new folder of `URL` (s3://bucket/prefix, with --set s3.endpoint=... for a server of your own; or a path) rather than in the run's data directory; the server allows it (--allowed-paths), and takes the --set s3.* options from a configuration file, as a server takes them")
	fs.BoolVar(&c.restore, "restore", false, "after the run, kill the server, start a new one on an empty data directory and time the job's restore from --checkpoint-dir")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: streamsql bench soak (--query qN [--events N] | --groupby [--keys K] [--rows R]) [flags]

Runs one workload in a child `+"`streamsql server`"+` (a new temporary data
directory, 10 s checkpoints, the state backend of --backend, the mini-batch
settings of bench nexmark) until --duration or the end of its input. Every
--interval it samples the server's resident set (VmRSS), its CPU time and
the job's records in (the rows its sources read, from the REST API), and
prints a line: elapsed seconds, records in, records/s and records per CPU
second over the interval, RSS in MiB, CPU seconds. At the end it prints
the throughput and the RSS of the first and last thirds of the run (of
runs over 15 minutes, the first and last five minutes; of a bounded
input, until its last record) and their ratios; flat curves have ratios
near 1 (see bench/README.md). Then it sums up the job's checkpoints (their
durations, sizes and bytes uploaded to an object store) and compares the
records per second and per CPU second while a checkpoint ran with those
while none did (the job polled every 250 ms). --checkpoint-dir puts the
checkpoints in an object store; --restore then kills the server, starts
a new one on an empty data directory and times the job's submission,
which restores its latest checkpoint from there.

flags:
`)
		fs.PrintDefaults()
	}
	return fs
}

func runBenchSoak(args []string, stdout io.Writer) int {
	var c soakConfig
	fs := newSoakFlags(&c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.resolve(fs); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 2
	}
	sum, err := benchSoak(context.Background(), c, stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	return writeBenchJSON(c.jsonFile, sum)
}

var setKey = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func (c *soakConfig) resolve(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if (c.query == "") == !c.groupBy {
		return errors.New("give one workload: --query qN or --groupby")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if c.groupBy && given["events"] {
		return errors.New("--events is for --query; --groupby takes --keys and --rows")
	}
	if !c.groupBy && (given["keys"] || given["rows"]) {
		return errors.New("--keys and --rows are for --groupby; --query takes --events")
	}
	switch {
	case c.events < 0:
		return fmt.Errorf("--events must not be negative, got %d", c.events)
	case c.keys <= 0:
		return fmt.Errorf("--keys must be positive, got %d", c.keys)
	case c.rows < 0:
		return fmt.Errorf("--rows must not be negative, got %d", c.rows)
	case c.parallelism <= 0:
		return fmt.Errorf("--parallelism must be positive, got %d", c.parallelism)
	case c.interval <= 0:
		return fmt.Errorf("--interval must be positive, got %s", c.interval)
	case c.duration < c.interval:
		return fmt.Errorf("--duration (%s) must be at least --interval (%s)", c.duration, c.interval)
	}
	if c.backend != "pebble" && c.backend != "hashmap" {
		return fmt.Errorf("--backend: unknown backend %q (pebble, hashmap)", c.backend)
	}
	for _, s := range c.sets {
		k, _, ok := strings.Cut(s, "=")
		if !ok || !setKey.MatchString(strings.TrimSpace(k)) {
			return fmt.Errorf("--set: want KEY=VALUE, got %q", s)
		}
		if strings.TrimSpace(k) == "execution.checkpointing.dir" || strings.TrimSpace(k) == "state.checkpoints.dir" {
			return fmt.Errorf("--set: give the checkpoint directory as --checkpoint-dir (each run takes a new folder of it), not %q", s)
		}
	}
	if c.restore && c.checkpointDir == "" {
		return errors.New("--restore restores from --checkpoint-dir: give one")
	}
	if c.repo == "" {
		r, err := findRepo()
		if err != nil {
			return err
		}
		c.repo = r
	}
	if c.query != "" {
		all, err := nexmarkQueries(c.repo)
		if err != nil {
			return err
		}
		if !slices.Contains(all, c.query) {
			return fmt.Errorf("--query: no query %q in bench/nexmark (there: %s)", c.query, strings.Join(all, ", "))
		}
	}
	return nil
}

// name is the workload as the summary names it.
func (c soakConfig) name() string {
	var b strings.Builder
	if c.groupBy {
		fmt.Fprintf(&b, "group-by over %d keys, ", c.keys)
		if c.rows > 0 {
			fmt.Fprintf(&b, "%d rows", c.rows)
		} else {
			b.WriteString("unbounded")
		}
	} else {
		fmt.Fprintf(&b, "nexmark %s, ", c.query)
		if c.events > 0 {
			fmt.Fprintf(&b, "%d events", c.events)
		} else {
			b.WriteString("unbounded")
		}
	}
	fmt.Fprintf(&b, ", %s state, parallelism %d", c.backend, c.parallelism)
	if c.checkpointDir != "" {
		b.WriteString(", checkpoints in " + c.checkpointDir)
	}
	for _, s := range c.sets {
		b.WriteString(", " + s)
	}
	return b.String()
}

// job is the SQL the server runs: the tables, the settings and the
// INSERT, with the query's files pointed into work.
func (c soakConfig) job(work string) (string, error) {
	var ddl, query string
	if c.groupBy {
		ddl, query = groupByDDL(c.keys, c.rows, false), groupByQuery
	} else {
		var err error
		if ddl, err = nexmarkDDL(c.repo, c.events); err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(c.repo, "bench", "nexmark", c.query+".sql"))
		if err != nil {
			return "", err
		}
		if query, err = prepareNexmarkQuery(string(b), work, c.repo, engineStreamsql); err != nil {
			return "", err
		}
	}
	settings := benchSettings(c.parallelism, c.backend)
	if c.checkpointDir != "" {
		// A new folder for each run: a folder of an earlier run holds
		// its checkpoints, which the job would resume from.
		dir := strings.TrimSuffix(c.checkpointDir, "/") + "/" + filepath.Base(work)
		settings += fmt.Sprintf("SET 'execution.checkpointing.dir' = '%s';\n", strings.ReplaceAll(dir, "'", "''"))
	}
	for _, s := range c.sets {
		k, v, _ := strings.Cut(s, "=")
		if isS3Option(k) {
			continue // in the server's configuration file (serverArgs)
		}
		settings += fmt.Sprintf("SET '%s' = '%s';\n", strings.TrimSpace(k), strings.ReplaceAll(strings.TrimSpace(v), "'", "''"))
	}
	return ddl + settings + query, nil
}

// isS3Option says whether the --set key k says how to reach the object
// store: a server restricted to allowed paths takes those from its
// configuration file only.
func isS3Option(k string) bool { return strings.HasPrefix(strings.TrimSpace(k), "s3.") }

// serverArgs are the arguments of the soak's server on data, beyond its
// own: a configuration file (in work) of the --set s3.* options, if any;
// with --checkpoint-dir, the data directory and it as the allowed paths.
func (c soakConfig) serverArgs(work, data string) ([]string, error) {
	var args []string
	var yaml strings.Builder
	for _, s := range c.sets {
		if k, v, _ := strings.Cut(s, "="); isS3Option(k) {
			fmt.Fprintf(&yaml, "%s: %q\n", strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if yaml.Len() > 0 {
		file := filepath.Join(work, "config.yaml")
		if err := os.WriteFile(file, []byte(yaml.String()), 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--config", file)
	}
	if c.checkpointDir == "" {
		return args, nil
	}
	if !checkpoint.IsRemote(c.checkpointDir) {
		if err := os.MkdirAll(strings.TrimPrefix(c.checkpointDir, "file://"), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	return append(args, "--allowed-paths", data+","+c.checkpointDir), nil
}

// benchSoak runs the workload in a server of its own in a new temporary
// directory (removed afterwards), samples it, and prints the samples and
// the summary.
func benchSoak(ctx context.Context, c soakConfig, w io.Writer) (soakSummary, error) {
	sum := soakSummary{Workload: c.name()}
	work, err := os.MkdirTemp("", "streamsql-soak-")
	if err != nil {
		return sum, err
	}
	defer os.RemoveAll(work)
	job, err := c.job(work)
	if err != nil {
		return sum, err
	}
	var out *os.File
	if c.out != "" {
		if out, err = os.Create(c.out); err != nil {
			return sum, err
		}
		defer out.Close()
		if _, err := out.WriteString(soakHeader); err != nil {
			return sum, err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return sum, err
	}
	args, err := c.serverArgs(work, filepath.Join(work, "data"))
	if err != nil {
		return sum, err
	}
	srv, err := startSoakServer(ctx, self, filepath.Join(work, "data"), c.pprof, args...)
	if err != nil {
		return sum, err
	}
	defer srv.kill()
	fmt.Fprintf(w, "%s: server %s (pid %d), load average %.2f\n", sum.Workload, srv.url, srv.cmd.Process.Pid, loadAverage())
	submitted := time.Now()
	id, err := srv.submit(job)
	if err != nil {
		return sum, err
	}
	submitTook := time.Since(submitted)
	start := time.Now()
	var ticks []soakTick
	fmt.Fprint(w, soakHeader)
	var prev soakSample
	take := func(records int64) soakSample {
		s := soakSample{Elapsed: time.Since(start).Seconds(), RecordsIn: records,
			RSSMiB: float64(vmRSS(srv.pid())) / (1 << 20), CPUSeconds: procCPU(srv.pid()).Seconds()}
		if len(sum.Samples) > 0 {
			s.RecordsPerSecond, s.RecordsPerCPUSecond = rates(prev, s)
		}
		prev = s
		sum.Samples = append(sum.Samples, s)
		fmt.Fprint(w, s.tsv())
		if out != nil {
			out.WriteString(s.tsv())
		}
		return s
	}
	st, err := srv.status(id)
	if err != nil {
		return sum, err
	}
	take(st.RecordsIn)
	// The job's status is read every 250 ms (or every interval, when
	// shorter), so that the end of its input ends the run without waiting
	// for the next sample and the records in while a checkpoint runs are
	// told from those while none does; a sample is taken every interval and
	// at the end.
	poll := min(250*time.Millisecond, c.interval)
	next := c.interval
	for {
		select {
		case <-ctx.Done():
			return sum, ctx.Err()
		case <-srv.exited:
			return sum, fmt.Errorf("the server exited: %v; its log:\n%s", srv.err, lastLines(srv.log.String(), 40))
		case <-time.After(poll):
		}
		if st, err = srv.status(id); err != nil {
			return sum, err
		}
		ticks = append(ticks, soakTick{at: time.Now(), records: st.RecordsIn, cpu: procCPU(srv.pid())})
		sum.Restarts = st.Restarts
		elapsed := time.Since(start)
		switch st.Status {
		case "RUNNING", "RESTARTING":
		case "FINISHED":
			sum.Ended = "input ended"
		default:
			return sum, fmt.Errorf("job %s %s: %s; the server's log:\n%s", id, st.Status, st.Error, lastLines(srv.log.String(), 40))
		}
		if elapsed >= c.duration && sum.Ended == "" {
			sum.Ended = "duration"
		}
		if sum.Ended != "" || elapsed >= next {
			take(st.RecordsIn)
			for next <= elapsed {
				next += c.interval
			}
		}
		if sum.Ended != "" {
			break
		}
	}
	sum.PeakRSSMiB = float64(vmHWM(srv.pid())) / (1 << 20)
	last := sum.Samples[len(sum.Samples)-1]
	sum.ElapsedSeconds, sum.RecordsIn, sum.CPUSeconds = last.Elapsed, last.RecordsIn, last.CPUSeconds
	history, err := srv.checkpoints(id)
	if err != nil {
		return sum, err
	}
	sum.Checkpoints = summarizeCheckpoints(history, ticks)
	fmt.Fprint(w, sum.Checkpoints.report())
	if c.restore {
		srv.kill()
		r, err := restoreSoak(ctx, c, self, work, job)
		if err != nil {
			return sum, err
		}
		r.SubmitSeconds = submitTook.Seconds()
		sum.Restore = &r
		fmt.Fprintf(w, "restored checkpoint %d (%s) on a new server with an empty data directory in %.2f s, %.2f CPU s since its start (the first submission: %.2f s)\n",
			r.Checkpoint, byteSize(r.SizeBytes), r.Seconds, r.CPUSeconds, r.SubmitSeconds)
	}
	if len(sum.Samples) < 3 {
		fmt.Fprintf(w, "\n%s: %s after %.1f s, %d records in: %d samples are too few to compare the start and the end (a longer run, or a shorter --interval)\n",
			sum.Workload, sum.Ended, last.Elapsed, last.RecordsIn, len(sum.Samples))
		return sum, nil
	}
	sum.First, sum.Last = soakWindows(sum.Samples)
	sum.RSSRatio = ratio(sum.Last.PeakRSSMiB, sum.First.PeakRSSMiB)
	sum.ThroughputRatio = ratio(sum.Last.RecordsPerSecond, sum.First.RecordsPerSecond)
	sum.CPUThroughputRatio = ratio(sum.Last.RecordsPerCPUSecond, sum.First.RecordsPerCPUSecond)
	fmt.Fprint(w, sum.report())
	return sum, nil
}

// rates are the records per second and per CPU second from a to b (0 for
// an interval with no time).
func rates(a, b soakSample) (perSecond, perCPUSecond float64) {
	n := float64(b.RecordsIn - a.RecordsIn)
	if dt := b.Elapsed - a.Elapsed; dt > 0 {
		perSecond = n / dt
	}
	if dc := b.CPUSeconds - a.CPUSeconds; dc > 0 {
		perCPUSecond = n / dc
	}
	return perSecond, perCPUSecond
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// soakWindows are the first and last stretches of a run's samples (at
// least three, the first at 0 s): each a third of the run, or five
// minutes of a run over 15 minutes. The first runs from the first sample
// to the last one at or before its end, the last from the first sample at
// or after its start to the last sample; each spans one interval at
// least. The samples after the one at which the records in reached their
// last count are left out: once a bounded input ended, the job only
// fires what it holds (its windows, at the end of input), which is no
// part of the curve.
func soakWindows(samples []soakSample) (first, last soakWindow) {
	n := len(samples)
	for n > 3 && samples[n-2].RecordsIn == samples[n-1].RecordsIn {
		n--
	}
	samples = samples[:n]
	total := samples[n-1].Elapsed
	span := total / 3
	if total > 15*60 {
		span = 5 * 60
	}
	end := 1
	for end+1 < n-1 && samples[end+1].Elapsed <= span {
		end++
	}
	begin := n - 2
	for begin-1 > 0 && samples[begin-1].Elapsed >= total-span {
		begin--
	}
	return window(samples[:end+1]), window(samples[begin:])
}

// window is the stretch from the first of samples to the last.
func window(samples []soakSample) soakWindow {
	a, b := samples[0], samples[len(samples)-1]
	w := soakWindow{From: a.Elapsed, To: b.Elapsed}
	w.RecordsPerSecond, w.RecordsPerCPUSecond = rates(a, b)
	for _, s := range samples {
		w.PeakRSSMiB = max(w.PeakRSSMiB, s.RSSMiB)
		w.MeanRSSMiB += s.RSSMiB / float64(len(samples))
	}
	return w
}

func (s soakSummary) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s: %s after %.0f s, %d records in, %.1f CPU s, %d restarts, peak RSS %.0f MiB\n",
		s.Workload, s.Ended, s.ElapsedSeconds, s.RecordsIn, s.CPUSeconds, s.Restarts, s.PeakRSSMiB)
	b.WriteString("| stretch | from s | to s | records/s | records per CPU second | peak RSS MiB | mean RSS MiB |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range []struct {
		name string
		w    soakWindow
	}{{"first", s.First}, {"last", s.Last}} {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %s | %s | %.0f | %.0f |\n", r.name, r.w.From, r.w.To,
			rate(r.w.RecordsPerSecond), rate(r.w.RecordsPerCPUSecond), r.w.PeakRSSMiB, r.w.MeanRSSMiB)
	}
	fmt.Fprintf(&b, "| last / first | | | %.2f | %.2f | %.2f | %.2f |\n", s.ThroughputRatio, s.CPUThroughputRatio,
		s.RSSRatio, ratio(s.Last.MeanRSSMiB, s.First.MeanRSSMiB))
	return b.String()
}

// soakServer is the `streamsql server` child of a soak run.
type soakServer struct {
	cmd    *exec.Cmd
	url    string
	log    *syncBuffer
	exited chan struct{} // closed when the process ended, err then set
	err    error
}

// serverStarted finds the URL in the server's "server started" log line
// (--log-format json).
var serverStarted = regexp.MustCompile(`"msg":"server started"[^\n]*"url":"([^"]+)"`)

// startSoakServer starts `streamsql server` on data with a port of its
// choosing, which its log names, and waits until it serves. The server
// is killed when this process dies (Pdeathsig).
func startSoakServer(ctx context.Context, self, data string, pprof bool, extra ...string) (*soakServer, error) {
	s := &soakServer{log: &syncBuffer{}, exited: make(chan struct{})}
	args := append([]string{"server", "--data-dir", data, "--http", "127.0.0.1:0", "--log-format", "json"}, extra...)
	if pprof {
		args = append(args, "--pprof")
	}
	s.cmd = exec.Command(self, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.err = s.cmd.Wait(); close(s.exited) }()
	deadline := time.After(time.Minute)
	for {
		if m := serverStarted.FindStringSubmatch(s.log.String()); m != nil {
			s.url = m[1]
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("streamsql server exited: %v; its log:\n%s", s.err, lastLines(s.log.String(), 40))
		case <-deadline:
			s.kill()
			return nil, fmt.Errorf("streamsql server did not start in a minute; its log:\n%s", lastLines(s.log.String(), 40))
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *soakServer) pid() int { return s.cmd.Process.Pid }

// kill ends the server at once: its data directory goes with the run,
// so it need not stop its jobs with a checkpoint.
func (s *soakServer) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// submit sends the job's statements (POST /api/v1/statements) and returns
// the id of the job they started.
func (s *soakServer) submit(job string) (string, error) {
	r, err := postStatements(s.url, job, "")
	if err != nil {
		return "", err
	}
	if r.Error != "" {
		return "", fmt.Errorf("the job's SQL: %s", r.Error)
	}
	for _, res := range r.Results {
		if res.JobID != "" {
			return res.JobID, nil
		}
	}
	return "", errors.New("the job's SQL started no job")
}

// soakJob is a job as GET /api/v1/jobs/{id} has it.
type soakJob struct {
	Status    string `json:"status"`
	RecordsIn int64  `json:"records_in"`
	Restarts  int    `json:"restarts"`
	Error     string `json:"error"`
}

func (s *soakServer) status(id string) (soakJob, error) {
	resp, err := http.Get(s.url + "/api/v1/jobs/" + id)
	if err != nil {
		return soakJob{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Job soakJob `json:"job"`
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return soakJob{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return soakJob{}, fmt.Errorf("GET /api/v1/jobs/%s: %s: %s", id, resp.Status, body)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return soakJob{}, fmt.Errorf("GET /api/v1/jobs/%s: %v: %s", id, err, body)
	}
	return r.Job, nil
}
