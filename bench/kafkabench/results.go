package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

// summary is a contender's measurements over the rounds.
type summary struct {
	name   string
	ok     []result // sorted by rate
	failed []result
}

// median is the middle measurement (the slower of the two middle ones for
// an even count).
func (s summary) median() result { return s.ok[(len(s.ok)-1)/2] }

// summarize groups the results by contender, in first-seen order.
func summarize(c config, rs []result) []summary {
	var out []summary
	idx := map[string]int{}
	for _, r := range rs {
		i, ok := idx[r.name]
		if !ok {
			i = len(out)
			idx[r.name] = i
			out = append(out, summary{name: r.name})
		}
		if r.err != nil {
			out[i].failed = append(out[i].failed, r)
		} else {
			out[i].ok = append(out[i].ok, r)
		}
	}
	for _, s := range out {
		sort.Slice(s.ok, func(a, b int) bool { return s.ok[a].rate(c.records) < s.ok[b].rate(c.records) })
	}
	return out
}

// medianOf is the median of f over the rounds (the lower middle value for
// an even count, as median).
func (s summary) medianOf(f func(result) float64) float64 {
	v := make([]float64, len(s.ok))
	for i, r := range s.ok {
		v[i] = f(r)
	}
	sort.Float64s(v)
	return v[(len(v)-1)/2]
}

// rangeOf is the smallest and the largest f over the rounds.
func (s summary) rangeOf(f func(result) float64) (lo, hi float64) {
	lo, hi = f(s.ok[0]), f(s.ok[0])
	for _, r := range s.ok[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return lo, hi
}

// Contender names, as the tables show them.
const (
	nameEO       = "streamsql exactly-once"
	nameEOServer = "streamsql exactly-once, server"
	nameALO      = "streamsql at-least-once"
	nameBare     = "bare franz-go loop"
	nameGoka     = "goka v1.1.16"
	nameKStreams = "Kafka Streams 4.4.0"
	nameFlink    = "Flink 2.2.1 SQL"
)

// serverTarget is the least share of the in-process job's throughput the
// same job reaches in `streamsql server` with its metrics read.
const serverTarget = 0.97

// formatTable prints the measurements as a markdown table (the medians of
// the rounds, and the ranges) with the ratios the project sets targets
// for.
func formatTable(c config, in *input, rs []result) string {
	var b strings.Builder
	n := c.records
	fmt.Fprintf(&b, "%d clicks, %d keys, %d partitions; Kafka -> COUNT(*) by key -> Kafka; records/s of input consumed until the committed output was complete; median of %d rounds (each round runs every contender once, in turn; each column's median is taken on its own).\n\n",
		n, c.keys, c.partitions, c.rounds)
	b.WriteString("| contender | records/s (median) | range over the rounds | seconds (median) | CPU s per 1M records (median) | range | peak RSS MiB (median) | broker CPU s per 1M records (median) | output records read | notes |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	type meds struct{ rate, cpu, bestRate, bestCPU float64 }
	med := map[string]meds{}
	rate := func(r result) float64 { return r.rate(n) }
	cpu := func(r result) float64 { return r.cpuPerM(n) }
	rss := func(r result) float64 { return float64(r.usage.maxRSS) / (1 << 20) }
	brokerCPU := func(r result) float64 { return r.brokerCPU.Seconds() * 1e6 / float64(n) }
	inProc := false
	for _, s := range summarize(c, rs) {
		if len(s.ok) == 0 {
			fmt.Fprintf(&b, "| %s | failed | | | | | | | | %s |\n", s.name, firstLine(s.failed[0].err.Error()))
			continue
		}
		m := s.median()
		rlo, rhi := s.rangeOf(rate)
		clo, chi := s.rangeOf(cpu)
		med[s.name] = meds{rate: s.medianOf(rate), cpu: s.medianOf(cpu), bestRate: rhi, bestCPU: clo}
		note := m.note
		rssCell := fmt.Sprintf("%.0f", s.medianOf(rss))
		if s.medianOf(rss) == 0 {
			rssCell = "n/a"
		}
		if m.usage.inProcess {
			note += "; CPU and RSS of the benchmark process (see below)"
			rssCell += " *"
			inProc = true
		}
		if len(s.failed) > 0 {
			note += fmt.Sprintf("; %d of %d rounds FAILED: %s", len(s.failed), len(s.failed)+len(s.ok), firstLine(s.failed[0].err.Error()))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f - %.0f | %.2f | %.2f | %.2f - %.2f | %s | %.2f | %d | %s |\n", s.name, s.medianOf(rate),
			rlo, rhi, m.elapsed.Seconds(), s.medianOf(cpu), clo, chi, rssCell, s.medianOf(brokerCPU), m.outRecs, note)
	}
	b.WriteString("\n")
	b.WriteString("CPU is user+sys time. For a contender in a process of its own (streamsql, Kafka Streams, Flink) it is that process's rusage from its start until it exited by itself (streamsql, Flink) or was killed once its output was complete (Kafka Streams, `streamsql server`), and the peak RSS is its own high-water mark (VmHWM of /proc/PID/status, read every 100ms while it runs: not ru_maxrss, which for a child started with vfork, as Go starts one, includes the benchmark process's peak): the whole process, the JVM's heap and RocksDB's native memory included. The broker's and the checker's CPU are not in it; the broker's CPU over each contender's run (its JVM or kafka-dev process, from /proc; the checker's fetches included) is the column of its own.")
	if inProc {
		b.WriteString(" Contenders marked * run inside the benchmark process (bare loop, goka): their CPU is the delta of the benchmark process's own rusage over the contender's run, so it includes the checker reading the output topic (for goka one record per input record), and their peak RSS is the benchmark process's high-water mark (VmHWM, reset before the contender), which includes the checker and the benchmark's own memory.")
	}
	b.WriteString("\n\n")
	eo, okEO := med[nameEO]
	ratio := func(other string, rateTarget, cpuTarget float64) {
		o, ok := med[other]
		if !okEO || !ok {
			fmt.Fprintf(&b, "- %s / %s: not measured\n", nameEO, other)
			return
		}
		// records/s per CPU second is n / CPU seconds, so its ratio is the
		// inverse ratio of CPU per record.
		eff, effBest := o.cpu/eo.cpu, o.bestCPU/eo.bestCPU
		x, xb := eo.rate/o.rate, eo.bestRate/o.bestRate
		goal := func(v, target float64) string {
			if target == 0 {
				return ""
			}
			met := "met"
			if v < target {
				met = "NOT met"
			}
			if target < 1 {
				return fmt.Sprintf(" (target >= %.0f%%: %s)", 100*target, met)
			}
			return fmt.Sprintf(" (target >= %.0fx: %s)", target, met)
		}
		f := func(v float64) string {
			if v < 1 {
				return fmt.Sprintf("%.0f%%", 100*v)
			}
			return fmt.Sprintf("%.2fx", v)
		}
		fmt.Fprintf(&b, "- %s / %s: records/s per CPU second %s of the medians%s, %s of the best rounds; records/s %s of the medians%s, %s of the best rounds\n",
			nameEO, other, f(eff), goal(eff, cpuTarget), f(effBest), f(x), goal(x, rateTarget), f(xb))
	}
	ratio(nameKStreams, 0, 3)
	ratio(nameFlink, 0, 3)
	ratio(nameGoka, 4, 0)
	ratio(nameBare, 0.40, 0)
	if srv, ok := med[nameEOServer]; ok && okEO {
		x := srv.rate / eo.rate
		met := "met"
		if x < serverTarget {
			met = "NOT met"
		}
		fmt.Fprintf(&b, "- %s / %s (`streamsql -f`): records/s %.1f%% of the medians (target >= %.0f%%: %s), %.1f%% of the best rounds\n",
			nameEOServer, nameEO, 100*x, 100*serverTarget, met, 100*srv.bestRate/eo.bestRate)
	}
	if alo, ok := med[nameALO]; ok && okEO {
		fmt.Fprintf(&b, "- %s / at-least-once: records/s %.0f%% of the medians, %.0f%% of the best rounds\n", nameEO, 100*eo.rate/alo.rate, 100*eo.bestRate/alo.bestRate)
	}
	fmt.Fprintf(&b, "- input produced with franz-go in %.2f s (%.0f records/s)\n", in.took.Seconds(), float64(n)/in.took.Seconds())
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "/")
}

// writeResults writes the tables with the command and the machine to
// c.results.
func writeResults(c config, sections []section, peers map[string]*javaPeer) error {
	var s strings.Builder
	s.WriteString("# Kafka benchmark results\n\n")
	s.WriteString("Written by `kafkabench` (see README.md); each run overwrites this file.\n\n")
	var names []string
	for _, sec := range sections {
		names = append(names, sec.broker.desc)
	}
	fmt.Fprintf(&s, "Run %s on %s/%s, %d CPUs, %s; broker: %s; all processes on this machine.\n\n",
		time.Now().Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), strings.Join(names, ", then "))
	if v, err := exec.Command(c.streamsql, "version").Output(); err == nil {
		fmt.Fprintf(&s, "streamsql: `%s`", strings.TrimSpace(string(v)))
		if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
			fmt.Fprintf(&s, " (repository at commit %s)", strings.TrimSpace(string(rev)))
		}
		s.WriteString("\n\n")
	}
	if v, err := exec.Command("java", "-version").CombinedOutput(); err == nil && len(peers) > 0 {
		fmt.Fprintf(&s, "Java peers on `%s`, each JVM with -Xmx%s; ", firstLine(strings.TrimSpace(string(v))), c.javaHeap)
		var built []string
		for _, k := range []string{"kstreams", "flink"} {
			if p := peers[k]; p != nil {
				built = append(built, p.String())
			}
		}
		s.WriteString(strings.Join(built, ", ") + ".\n\n")
	}
	if startLoad != "" {
		fmt.Fprintf(&s, "Load average (1, 5, 15 min) before the run: %s; other processes on the machine widen the ranges.\n\n", startLoad)
	}
	s.WriteString("Command (in `bench/`):\n\n```sh\n" + commandLine() + "\n```\n\n")
	for _, sec := range sections {
		if len(sections) > 1 {
			s.WriteString("## " + sec.broker.desc + "\n\n")
		} else {
			fmt.Fprintf(&s, "Broker: %s.\n\n", sec.broker.desc)
		}
		s.WriteString(sec.table + "\n")
	}
	out := strings.TrimRight(s.String(), "\n") + "\n"
	if _, lat := splitResults(c.results); lat != "" {
		out += "\n" + lat
	}
	return os.WriteFile(c.results, []byte(out), 0o644)
}

// loadAverage is the 1, 5 and 15 minute load averages ("" if unknown).
func loadAverage() string {
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(la))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// startLoad is loadAverage when the program started.
var startLoad = loadAverage()

// commandLine is how this program was run, as `go run ./kafkabench ...`.
func commandLine() string {
	return strings.Join(append([]string{"go run ./kafkabench"}, os.Args[1:]...), " ")
}
