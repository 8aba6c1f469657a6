package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// soakSettings are the settings of the short soak: a state memory far
// smaller than the group-by's groups (64 MiB, of which 32 for the
// operators' state: about a third of the 200,000 groups), so that groups
// are evicted to Pebble and read again all the run long. They are --set
// flags of `bench soak`.
var soakSettings = []string{"taskmanager.memory.managed.size=64mb"}

// The short soak's workload and length: about three times more groups
// than its memory holds, sampled every 5 s for 150 s.
const (
	soakKeys     = 200_000
	soakDuration = 150 * time.Second
	soakInterval = 5 * time.Second
)

// runSoak runs `streamsql bench soak` with args and returns its summary
// (--json) and its samples file (--out).
func runSoak(t *testing.T, args ...string) (soakSummary, string) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, js := filepath.Join(dir, "samples.tsv"), filepath.Join(dir, "summary.json")
	args = append([]string{"bench", "soak", "--repo", repo, "--out", out, "--json", js}, args...)
	// The bound only keeps a hung run from holding the test binary
	// until go test's own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("streamsql %v: %v\n%s", args, err, output)
	}
	t.Logf("streamsql %s:\n%s", strings.Join(args, " "), output)
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var sum soakSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	tsv, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return sum, string(tsv)
}

// checkSamples: the samples file has the header and a line per sample of
// the summary, and the records in never go down.
func checkSamples(t *testing.T, sum soakSummary, tsv string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(tsv, "\n"), "\n")
	if lines[0]+"\n" != soakHeader || len(lines) != len(sum.Samples)+1 {
		t.Fatalf("samples file: %d lines, want the header and %d samples:\n%s", len(lines), len(sum.Samples), tsv)
	}
	for i, s := range sum.Samples {
		if got := s.tsv(); lines[i+1]+"\n" != got {
			t.Errorf("line %d: %q, want %q", i+1, lines[i+1], got)
		}
		if s.RSSMiB <= 0 || (i > 0 && (s.RecordsIn < sum.Samples[i-1].RecordsIn || s.Elapsed <= sum.Samples[i-1].Elapsed)) {
			t.Errorf("sample %d: %+v after %+v", i, s, sum.Samples[max(i-1, 0)])
		}
	}
}

// TestBenchSoakGroupByFlat is the short soak: the group-by over more keys
// than its memory holds, for 150 s. The last third of the run must hold no
// more memory than the first third's peak by half plus 64 MiB, and must
// do at least half the first third's records per CPU second: its state
// grew without bound or slowed it down otherwise. Both are ratios of the
// same run and per CPU second, so a busy machine does not change them
// much (the long runs are bench/README.md's "Soak").
func TestBenchSoakGroupByFlat(t *testing.T) {
	args := []string{"--groupby", "--keys", fmt.Sprint(soakKeys), "--duration", soakDuration.String(), "--interval", soakInterval.String()}
	for _, s := range soakSettings {
		args = append(args, "--set", s)
	}
	sum, tsv := runSoak(t, args...)
	checkSamples(t, sum, tsv)
	if sum.Ended != "duration" || sum.Restarts != 0 || len(sum.Samples) < 10 {
		t.Fatalf("ended %q with %d restarts and %d samples, want the duration, none and at least 10", sum.Ended, sum.Restarts, len(sum.Samples))
	}
	if sum.First.RecordsPerCPUSecond <= 0 || sum.Last.RecordsPerCPUSecond <= 0 {
		t.Fatalf("no throughput: first %+v, last %+v", sum.First, sum.Last)
	}
	if limit := 1.5*sum.First.PeakRSSMiB + 64; sum.Last.PeakRSSMiB > limit {
		t.Errorf("RSS grew: the last third's peak is %.0f MiB, over 1.5 x the first third's %.0f MiB + 64 MiB (%.0f MiB)",
			sum.Last.PeakRSSMiB, sum.First.PeakRSSMiB, limit)
	}
	if sum.CPUThroughputRatio < 0.5 {
		t.Errorf("throughput fell: the last third did %.0f records per CPU second, under half the first third's %.0f",
			sum.Last.RecordsPerCPUSecond, sum.First.RecordsPerCPUSecond)
	}
}

// TestBenchSoakInputEnds: a soak of a bounded Nexmark query ends when its
// input ends, its last sample counting every event.
func TestBenchSoakInputEnds(t *testing.T) {
	sum, tsv := runSoak(t, "--query", "q1", "--events", "50000", "--interval", "100ms", "--duration", "10m")
	checkSamples(t, sum, tsv)
	if sum.Ended != "input ended" || sum.RecordsIn != 50000 || sum.Samples[len(sum.Samples)-1].RecordsIn != 50000 {
		t.Fatalf("ended %q with %d records in, want the input's end with 50000:\n%+v", sum.Ended, sum.RecordsIn, sum.Samples)
	}
}

// TestBenchSoakFlags: bad flags are refused before anything runs.
func TestBenchSoakFlags(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	for _, args := range [][]string{
		{},
		{"--query", "q1", "--groupby"},
		{"--query", "q99"},
		{"--query", "q1", "--keys", "10"},
		{"--groupby", "--events", "10"},
		{"--groupby", "--backend", "rocksdb"},
		{"--groupby", "--set", "no-value"},
		{"--groupby", "--interval", "1m", "--duration", "30s"},
		{"--groupby", "--restore"},
		{"--groupby", "--set", "execution.checkpointing.dir=/tmp/elsewhere"},
	} {
		r := runBinary(t, t.TempDir(), "", append([]string{"bench", "soak", "--repo", repo}, args...)...)
		if r.code != 2 {
			t.Errorf("%v: exit status %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// TestSoakWindows: the first and last thirds of a run (five minutes of a
// run over 15), each from sample to sample, with rates over the records,
// the wall time and the CPU time between its ends.
func TestSoakWindows(t *testing.T) {
	var samples []soakSample
	for i := range 10 {
		// 1000 records a second, 500 per CPU second until 4.5 s, 250
		// after; RSS 100 MiB, 300 from 7 s.
		s := soakSample{Elapsed: float64(i), RecordsIn: int64(1000 * i), CPUSeconds: float64(2 * i), RSSMiB: 100}
		if i >= 5 {
			s.CPUSeconds = 8 + float64(4*(i-4))
		}
		if i >= 7 {
			s.RSSMiB = 300
		}
		samples = append(samples, s)
	}
	first, last := soakWindows(samples)
	want := soakWindow{From: 0, To: 3, RecordsPerSecond: 1000, RecordsPerCPUSecond: 500, PeakRSSMiB: 100, MeanRSSMiB: 100}
	if first != want {
		t.Errorf("first: %+v, want %+v", first, want)
	}
	want = soakWindow{From: 6, To: 9, RecordsPerSecond: 1000, RecordsPerCPUSecond: 250, PeakRSSMiB: 300, MeanRSSMiB: 250}
	if last != want {
		t.Errorf("last: %+v, want %+v", last, want)
	}

	// Samples after the input ended (no more records in) are left out.
	ended := append([]soakSample(nil), samples...)
	for i := range 5 {
		s := samples[9]
		s.Elapsed, s.CPUSeconds, s.RSSMiB = float64(10+i), s.CPUSeconds+float64(i+1), 900
		ended = append(ended, s)
	}
	if f, l := soakWindows(ended); f != first || l != last {
		t.Errorf("with samples after the input's end: first %+v, last %+v; want %+v, %+v", f, l, first, last)
	}

	// Three samples: each stretch is one interval.
	first, last = soakWindows(samples[:3])
	if first.From != 0 || first.To != 1 || last.From != 1 || last.To != 2 {
		t.Errorf("three samples: first %+v, last %+v", first, last)
	}

	// An hour sampled every 30 s: the first and last five minutes.
	samples = samples[:0]
	for i := range 121 {
		samples = append(samples, soakSample{Elapsed: float64(30 * i), RecordsIn: int64(30 * i), CPUSeconds: float64(30 * i), RSSMiB: 1})
	}
	first, last = soakWindows(samples)
	if first.From != 0 || first.To != 300 || last.From != 3300 || last.To != 3600 || first.RecordsPerCPUSecond != 1 {
		t.Errorf("an hour: first %+v, last %+v", first, last)
	}
}

// TestSoakJob: the job is the tables, the benchmark's settings, the --set
// ones after them (quotes doubled) and the INSERT.
func TestSoakJob(t *testing.T) {
	c := soakConfig{groupBy: true, keys: 500, backend: "hashmap", parallelism: 2, sets: []string{"pipeline.name = x'y"}}
	job, err := c.job(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "job", job, "'fields.k.max' = '499'", "SET 'state.backend' = 'hashmap';", "SET 'parallelism.default' = '2';", "SET 'pipeline.name' = 'x''y';\n"+groupByQuery)
	if strings.Contains(job, "number-of-rows") {
		t.Errorf("an unbounded run has a 'number-of-rows':\n%s", job)
	}
}

// TestBenchGroupByJSON runs `streamsql bench groupby` over a few keys on
// both backends and checks the runs it writes with --json.
func TestBenchGroupByJSON(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "runs.json")
	r := runBinary(t, t.TempDir(), "", "bench", "groupby", "--repo", repo, "--keys", "1000,5000",
		"--rows", "30000", "--backend", "pebble,hashmap", "--json", file, "--markdown", "-")
	if r.code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "| 1K | 30K | 1 | streamsql | pebble |", "| 5K | 30K | 1 | streamsql | hashmap |")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []groupByRun `json:"runs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	want := []struct {
		keys    int64
		backend string
	}{{1000, "pebble"}, {1000, "hashmap"}, {5000, "pebble"}, {5000, "hashmap"}}
	if len(got.Runs) != len(want) {
		t.Fatalf("%d runs, want %d:\n%s", len(got.Runs), len(want), b)
	}
	for i, w := range want {
		run := got.Runs[i]
		if run.Keys != w.keys || run.Backend != w.backend || run.Engine != "streamsql" || run.Rows != 30000 || !run.Checkpointed {
			t.Errorf("run %d: %+v, want %d keys on %s, 30000 rows, a checkpoint at the end", i, run, w.keys, w.backend)
		}
		if run.RowsPerCPUSecond <= 0 || run.PeakRSSBytes < 4<<20 || run.StateBytes <= 0 {
			t.Errorf("run %d: implausible figures %+v", i, run)
		}
	}
}

// TestBenchGroupByFlags: bad flags are refused before anything runs.
func TestBenchGroupByFlags(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	for _, args := range [][]string{
		{"--keys", "10,x"},
		{"--keys", "0"},
		{"--rows", "0"},
		{"--backend", "rocksdb"},
	} {
		r := runBinary(t, t.TempDir(), "", append([]string{"bench", "groupby", "--repo", repo}, args...)...)
		if r.code != 2 {
			t.Errorf("%v: exit status %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// TestBenchUsage: `streamsql bench -h` names every suite; no suite is an
// error that shows the same.
func TestBenchUsage(t *testing.T) {
	r := runBinary(t, t.TempDir(), "", "bench", "-h")
	if r.code != 0 {
		t.Fatalf("exit status %d\n%s", r.code, r.stderr)
	}
	mustContain(t, "usage", r.stdout, "nexmark ", "groupby ", "soak ")
	r = runBinary(t, t.TempDir(), "", "bench", "tpch")
	if r.code != 2 || !strings.Contains(r.stderr, "groupby ") {
		t.Fatalf("exit status %d, want 2 and the usage\n%s", r.code, r.stderr)
	}
}

// TestBenchSoakBadSetting: a --set the engine refuses ends the run before
// it starts, with the engine's message.
func TestBenchSoakBadSetting(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	r := runBinary(t, t.TempDir(), "", "bench", "soak", "--repo", repo, "--groupby", "--set", "no.such.key=1", "--duration", "1m")
	if r.code != 1 || !strings.Contains(r.stderr, "no.such.key") {
		t.Fatalf("exit status %d, want 1 and an error naming the key\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestSoakServerArgs: the --set s3.* options go to the server's
// configuration file, not into the job (a server restricted to allowed
// paths refuses them as SET), with or without --checkpoint-dir; with one,
// the job's checkpoint directory is a new folder of it, which the server
// allows beside its data directory.
func TestSoakServerArgs(t *testing.T) {
	for _, dir := range []string{"", "s3://streamsql/bench/"} {
		work := t.TempDir()
		c := soakConfig{groupBy: true, keys: 500, backend: "pebble", parallelism: 1, checkpointDir: dir,
			sets: []string{"s3.endpoint=http://127.0.0.1:9000", "s3.path.style.access = true", "table.exec.batch-size=64"}}
		job, err := c.job(work)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(job, "'s3.") {
			t.Errorf("checkpoint dir %q: the job:\n%s", dir, job)
		}
		mustContain(t, "job", job, "SET 'table.exec.batch-size' = '64';")
		data := filepath.Join(work, "data")
		args, err := c.serverArgs(work, data)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"--config", filepath.Join(work, "config.yaml")}
		if dir != "" {
			mustContain(t, "job", job, "SET 'execution.checkpointing.dir' = 's3://streamsql/bench/"+filepath.Base(work)+"';")
			want = append(want, "--allowed-paths", data+","+dir)
		}
		if fmt.Sprint(args) != fmt.Sprint(want) {
			t.Errorf("checkpoint dir %q: server arguments %q, want %q", dir, args, want)
		}
		b, err := os.ReadFile(filepath.Join(work, "config.yaml"))
		if got := string(b); err != nil || got != "s3.endpoint: \"http://127.0.0.1:9000\"\ns3.path.style.access: \"true\"\n" {
			t.Errorf("the configuration file: %q (%v)", got, err)
		}
	}
}
