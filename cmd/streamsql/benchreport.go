package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// rate prints events per second: 1.23M, 456K, 789.
func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// byteSize prints a size in MiB (KiB below one).
func byteSize(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// nexmarkTable is the Markdown table of the runs: a row per query and
// engine, and with two engines a row per query with streamsql's figures
// over Flink's.
func nexmarkTable(runs []nexmarkRun, engines []string) string {
	var b strings.Builder
	b.WriteString("| query | P | engine | events/s | events per CPU second | after start-up | peak RSS | state | wall s | CPU s | start-up CPU s | load |\n")
	b.WriteString("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range runs {
		state := byteSize(r.StateBytes)
		if !r.Checkpointed {
			state = "none"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f |\n", r.Query, r.Parallelism, r.Engine,
			rate(r.EventsPerSecond), rate(r.EventsPerCPUSecond), rate(r.EventsPerJobCPUSecond),
			byteSize(r.PeakRSSBytes), state, r.WallSeconds, r.CPUSeconds, r.StartupCPUSeconds, r.LoadAverage)
	}
	if len(engines) < 2 {
		return b.String()
	}
	b.WriteString("\n| query | P | streamsql events per CPU second | Flink events per CPU second | ratio | Flink after start-up | ratio | streamsql events/s | Flink events/s | ratio |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	type key struct {
		query       string
		parallelism int
	}
	streamsql, flink := map[key]nexmarkRun{}, map[key]nexmarkRun{}
	var order []key
	for _, r := range runs {
		k := key{r.Query, r.Parallelism}
		switch r.Engine {
		case engineStreamsql:
			streamsql[k] = r
			order = append(order, k)
		case engineFlink:
			flink[k] = r
		}
	}
	for _, k := range order {
		s, f := streamsql[k], flink[k]
		if f.Query == "" {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.2fx | %s | %.2fx | %s | %s | %.2fx |\n", k.query, k.parallelism,
			rate(s.EventsPerCPUSecond), rate(f.EventsPerCPUSecond), s.EventsPerCPUSecond/f.EventsPerCPUSecond,
			rate(f.EventsPerJobCPUSecond), s.EventsPerCPUSecond/f.EventsPerJobCPUSecond,
			rate(s.EventsPerSecond), rate(f.EventsPerSecond), s.EventsPerSecond/f.EventsPerSecond)
	}
	return b.String()
}

// nexmarkReport is bench/NEXMARK.md: the command, the machine, the load
// and the table.
func nexmarkReport(c nexmarkConfig, peer *nexmarkPeer, runs []nexmarkRun, table string, load0, load1 float64, took time.Duration) string {
	var b strings.Builder
	b.WriteString("# Nexmark: streamsql and Flink on the same machine\n\n")
	b.WriteString("Written by `streamsql bench nexmark` (bench/nexmark/README.md says what it runs and measures). The run:\n\n")
	fmt.Fprintf(&b, "```sh\nstreamsql bench nexmark %s\n```\n\n", strings.Join(c.args, " "))
	fmt.Fprintf(&b, "- when: %s, %s in all\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	fmt.Fprintf(&b, "- machine: %s, %d cores (`nproc`), %s; %s/%s\n", cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- load average (1 min): %.2f at the start, %.2f at the end; each run's is in the table. The machine is shared with other work, so compare events per CPU second rather than events/s\n", load0, load1)
	fmt.Fprintf(&b, "- streamsql: %s (%s), built with %s\n", version, buildCommit(c.repo), runtime.Version())
	if peer != nil {
		fmt.Fprintf(&b, "- Flink: 2.2.1 (bench/peers), %s, JVM -Xmx%s; %s\n", javaVersion(), c.javaHeap, peer)
	}
	var ps []string
	for _, p := range c.parallelisms {
		ps = append(ps, fmt.Sprint(p))
	}
	fmt.Fprintf(&b, "- %d events per run, parallelism (P) %s, 10 s checkpoints, mini-batches of 2 s / 50,000 rows; streamsql: Pebble state; Flink: RocksDB state\n\n", c.events, strings.Join(ps, " and "))
	b.WriteString("Each figure is of one run, from the start of the engine's process to its exit (start-up included: a JVM's and Flink's planning weigh more on short runs). Events per CPU second is the events over the process's user+sys CPU time; peak RSS its VmHWM; state the size of the latest checkpoint at the end: streamsql takes one when its input ends, Flink keeps its latest periodic one (\"none\": the job ended before its first, 10 s after its start). \"After start-up\" counts only the CPU time after the job was submitted: for Flink, the CPU its JVM, planner and MiniCluster had used by then (the start-up CPU s column) is left out; streamsql's start-up (under 0.1 CPU s) is not measured and stays in, so its figure is the same in both columns. The ratios are streamsql's events per CPU second over Flink's, whole process and after start-up.\n\n")
	b.WriteString(table)
	if slices.Contains(c.engines, engineFlink) {
		for _, q := range c.queries {
			if why := flinkRefuses[q]; why != "" {
				fmt.Fprintf(&b, "\n%s ran on streamsql only: %s.\n", q, why)
			}
		}
	}
	return b.String()
}

// buildCommit names the commit the running binary was built from (Go's
// VCS stamp), " with changes" after it when its work tree had changes;
// without a stamp (go build -buildvcs=false), the repository's commit now.
func buildCommit(repo string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			c := "commit " + rev[:min(len(rev), 7)]
			if modified == "true" {
				c += " with changes"
			}
			return c
		}
	}
	return gitCommit(repo)
}

// gitCommit names the repository's commit, " with changes" after it when
// the work tree has changes.
func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "commit unknown"
	}
	c := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " with changes"
	}
	return c
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown memory"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f GiB of memory", float64(kb)/(1<<20))
		}
	}
	return "unknown memory"
}

func javaVersion() string {
	out, err := exec.Command("java", "-version").CombinedOutput()
	if err != nil {
		return "java (version unknown)"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first)
}
