package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBenchNexmarkJSON runs `streamsql bench nexmark` over a few thousand
// events for two queries and checks the runs it writes with --json.
func TestBenchNexmarkJSON(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "runs.json")
	r := runBinary(t, t.TempDir(), "", "bench", "nexmark", "--repo", repo, "--queries", "q0,q1",
		"--events", "3000", "--parallelism", "2", "--json", file)
	if r.code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "| q0 | 2 | streamsql |", "| q1 | 2 | streamsql |")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []nexmarkRun `json:"runs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if len(got.Runs) != 2 {
		t.Fatalf("%d runs, want 2:\n%s", len(got.Runs), b)
	}
	for i, q := range []string{"q0", "q1"} {
		run := got.Runs[i]
		if run.Query != q || run.Engine != "streamsql" || run.Events != 3000 || run.Parallelism != 2 || !run.Checkpointed {
			t.Errorf("run %d: %+v, want query %s on streamsql, 3000 events, parallelism 2, a checkpoint at the end", i, run, q)
		}
		// The figures are of a real process: it took time and CPU, and
		// its resident set was more than a few pages.
		if run.EventsPerSecond <= 0 || run.EventsPerCPUSecond < run.EventsPerSecond/4 || run.PeakRSSBytes < 4<<20 {
			t.Errorf("run %d: implausible figures %+v", i, run)
		}
	}
	// The keys the issue names, spelled as it spells them.
	var raw struct {
		Runs []map[string]any `json:"runs"`
	}
	json.Unmarshal(b, &raw)
	for _, k := range []string{"query", "engine", "events", "parallelism", "events_per_second", "events_per_cpu_second", "peak_rss_bytes"} {
		if _, ok := raw.Runs[0][k]; !ok {
			t.Errorf("no %q in %v", k, raw.Runs[0])
		}
	}
}

// TestBenchNexmarkFlags: bad flags are refused before anything runs.
func TestBenchNexmarkFlags(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	for _, args := range [][]string{
		{"--queries", "q99"},
		{"--events", "0"},
		{"--parallelism", "1,0"},
		{"--engines", "spark"},
	} {
		r := runBinary(t, t.TempDir(), "", append([]string{"bench", "nexmark", "--repo", repo}, args...)...)
		if r.code != 2 {
			t.Errorf("%v: exit status %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// TestNexmarkTableRatios: with both engines, the second table divides
// streamsql's figures by Flink's of the same query and parallelism, and a
// run without a checkpoint shows its state as none.
func TestNexmarkTableRatios(t *testing.T) {
	runs := []nexmarkRun{
		{Query: "q5", Engine: "streamsql", Parallelism: 1, EventsPerSecond: 300_000, EventsPerCPUSecond: 400_000, EventsPerJobCPUSecond: 400_000, Checkpointed: true, StateBytes: 4 << 20},
		{Query: "q5", Engine: "flink", Parallelism: 1, EventsPerSecond: 50_000, EventsPerCPUSecond: 80_000, EventsPerJobCPUSecond: 100_000},
		{Query: "q5", Engine: "streamsql", Parallelism: 2, EventsPerSecond: 600_000, EventsPerCPUSecond: 300_000, EventsPerJobCPUSecond: 300_000, Checkpointed: true},
		{Query: "q5", Engine: "flink", Parallelism: 2, EventsPerSecond: 100_000, EventsPerCPUSecond: 60_000, EventsPerJobCPUSecond: 75_000, Checkpointed: true},
	}
	got := nexmarkTable(runs, []string{"streamsql", "flink"})
	mustContain(t, "table", got,
		"| q5 | 1 | streamsql | 300K | 400K | 400K | 0 | 4 MiB |",
		"| q5 | 1 | flink | 50K | 80K | 100K | 0 | none |",
		"| q5 | 1 | 400K | 80K | 5.00x | 100K | 4.00x | 300K | 50K | 6.00x |",
		"| q5 | 2 | 300K | 60K | 5.00x | 75K | 4.00x | 600K | 100K | 6.00x |")
}

// TestNexmarkDefaultQueries: without --queries, every query of
// bench/nexmark runs but those that do not plan yet.
func TestNexmarkDefaultQueries(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	var c nexmarkConfig
	var queries, engines, parallelisms string
	var flinkToo bool
	fs := newNexmarkFlags(&c, &queries, &engines, &parallelisms, &flinkToo)
	if err := fs.Parse([]string{"--repo", repo}); err != nil {
		t.Fatal(err)
	}
	if err := c.resolve(fs, queries, engines, parallelisms, flinkToo); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q0", "q3", "q9", "q10", "q12", "q13", "q14", "q23"} {
		if !slices.Contains(c.queries, q) {
			t.Errorf("%s not in the default queries %v", q, c.queries)
		}
	}
	for q := range nexmarkUnplanned {
		if slices.Contains(c.queries, q) {
			t.Errorf("%s, which does not plan, in the default queries %v", q, c.queries)
		}
	}
}

// TestBenchNexmarkFiles runs the queries that read and write files, q10
// and q13, and q12 and q14: each ends, and what it wrote is gone with its
// run's directory (no /tmp/nexmark_q10 left behind).
func TestBenchNexmarkFiles(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "streamsql-nexmark-q1*"))
	r := runBinary(t, t.TempDir(), "", "bench", "nexmark", "--repo", repo, "--queries", "q10,q12,q13,q14",
		"--events", "3000", "--parallelism", "1")
	if r.code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "| q10 | 1 | streamsql |", "| q12 | 1 | streamsql |", "| q13 | 1 | streamsql |", "| q14 | 1 | streamsql |")
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "streamsql-nexmark-q1*"))
	if len(after) > len(before) {
		t.Errorf("run directories left behind: %v", after)
	}
}

// q14's count_char is the module of examples/udf on streamsql, built into
// the run's directory, and Flink nexmark's Java class on Flink.
func TestPrepareNexmarkUDF(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const q = "CREATE FUNCTION count_char AS '/tmp/nexmark_udf/count_char.wasm' LANGUAGE WASM;"
	work := t.TempDir()
	got, err := prepareNexmarkQuery(q, work, repo, engineStreamsql)
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(work, "udf", "count_char.wasm")
	if want := "CREATE FUNCTION count_char AS '" + module + "' LANGUAGE WASM;"; got != want {
		t.Errorf("streamsql: %q, want %q", got, want)
	}
	if _, err := os.Stat(module); err != nil {
		t.Error(err)
	}
	got, err = prepareNexmarkQuery(q, t.TempDir(), repo, engineFlink)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CREATE FUNCTION count_char AS 'io.streamsql.bench.nexmark.CountChar';"; got != want {
		t.Errorf("flink: %q, want %q", got, want)
	}
}

// The side input q13 reads is Flink nexmark's, in the run's directory,
// and q10 writes into it too.
func TestPrepareNexmarkQuery(t *testing.T) {
	work := t.TempDir()
	q, err := prepareNexmarkQuery("'path' = 'file:///tmp/nexmark_side_input.txt' 'path' = 'file:///tmp/nexmark_q10/bid/'", work, "", engineStreamsql)
	if err != nil {
		t.Fatal(err)
	}
	want := "'path' = 'file://" + work + "/side_input.txt' 'path' = 'file://" + work + "/nexmark_q10/bid/'"
	if q != want {
		t.Fatalf("query %q, want %q", q, want)
	}
	b, err := os.ReadFile(filepath.Join(work, "side_input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 10000 || lines[0] != "0,0" || lines[9999] != "9999,9999" {
		t.Fatalf("side input: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
