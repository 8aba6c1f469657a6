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

// formatTable prints the measurements as a markdown table (the median of
// the rounds, and the range) with the ratios the project sets targets
// for.
func formatTable(c config, in *input, rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clicks, %d keys, %d partitions; Kafka -> COUNT(*) by key -> Kafka; records/s of input consumed until the committed output was complete; median of %d rounds (each round runs every contender once, in turn).\n\n",
		c.records, c.keys, c.partitions, c.rounds)
	b.WriteString("| contender | records/s (median) | range over the rounds | seconds (median) | output records read | notes |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|\n")
	med, best := map[string]float64{}, map[string]float64{}
	for _, s := range summarize(c, rs) {
		if len(s.ok) == 0 {
			fmt.Fprintf(&b, "| %s | failed | | | | %s |\n", s.name, firstLine(s.failed[0].err.Error()))
			continue
		}
		m := s.median()
		med[s.name] = m.rate(c.records)
		best[s.name] = s.ok[len(s.ok)-1].rate(c.records)
		note := m.note
		if len(s.failed) > 0 {
			note += fmt.Sprintf("; %d of %d rounds FAILED: %s", len(s.failed), len(s.failed)+len(s.ok), firstLine(s.failed[0].err.Error()))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f - %.0f | %.2f | %d | %s |\n", s.name, m.rate(c.records),
			s.ok[0].rate(c.records), s.ok[len(s.ok)-1].rate(c.records), m.elapsed.Seconds(), m.outRecs, note)
	}
	b.WriteString("\n")
	eo, okEO := med["streamsql exactly-once"]
	eoBest, _ := best["streamsql exactly-once"]
	ratio := func(label, other string, target float64, pct bool) {
		o, ok := med[other]
		if !okEO || !ok {
			fmt.Fprintf(&b, "- %s: not measured\n", label)
			return
		}
		x, xb := eo/o, eoBest/best[other]
		met := "met"
		if x < target {
			met = "NOT met"
		}
		if pct {
			fmt.Fprintf(&b, "- %s: %.0f%% of the medians (target >= %.0f%%: %s); %.0f%% of the best rounds\n", label, 100*x, 100*target, met, 100*xb)
		} else {
			fmt.Fprintf(&b, "- %s: %.2fx of the medians (target >= %.0fx: %s); %.2fx of the best rounds\n", label, x, target, met, xb)
		}
	}
	ratio("streamsql exactly-once / goka", "goka v1.1.16", 4, false)
	ratio("streamsql exactly-once / bare franz-go loop", "bare franz-go loop", 0.40, true)
	if alo, ok := med["streamsql at-least-once"]; ok && okEO {
		fmt.Fprintf(&b, "- streamsql exactly-once / at-least-once: %.0f%% of the medians, %.0f%% of the best rounds\n", 100*eo/alo, 100*eoBest/best["streamsql at-least-once"])
	}
	fmt.Fprintf(&b, "- input produced with franz-go in %.2f s (%.0f records/s)\n", in.took.Seconds(), float64(c.records)/in.took.Seconds())
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "/")
}

// writeResults writes the table with the command and the machine to
// c.results.
func writeResults(c config, b *broker, table string) error {
	var s strings.Builder
	s.WriteString("# Kafka benchmark results\n\n")
	s.WriteString("Written by `kafkabench` (see README.md); each run overwrites this file.\n\n")
	fmt.Fprintf(&s, "Run %s on %s/%s, %d CPUs, %s; kafka-dev (%s), all processes on this machine.\n\n",
		time.Now().Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), b.mode())
	if v, err := exec.Command(c.streamsql, "version").Output(); err == nil {
		fmt.Fprintf(&s, "streamsql: `%s`", strings.TrimSpace(string(v)))
		if rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
			fmt.Fprintf(&s, " (repository at commit %s)", strings.TrimSpace(string(rev)))
		}
		s.WriteString("\n\n")
	}
	if startLoad != "" {
		fmt.Fprintf(&s, "Load average (1, 5, 15 min) before the run: %s; other processes on the machine widen the ranges.\n\n", startLoad)
	}
	s.WriteString("Command (in `bench/`):\n\n```sh\n" + commandLine() + "\n```\n\n")
	s.WriteString(table)
	return os.WriteFile(c.results, []byte(s.String()), 0o644)
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
