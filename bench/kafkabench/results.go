package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// formatTable prints the measurements as a markdown table with the
// ratios the issue sets targets for.
func formatTable(c config, in *input, rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clicks, %d keys, %d partitions; Kafka -> COUNT(*) by key -> Kafka; records/s of input consumed until the committed output was complete.\n\n",
		c.records, c.keys, c.partitions)
	b.WriteString("| contender | records/s | seconds | output records read | notes |\n")
	b.WriteString("|---|---:|---:|---:|---|\n")
	byName := map[string]result{}
	for _, r := range rs {
		if r.err != nil {
			fmt.Fprintf(&b, "| %s | failed | | | %s |\n", r.name, firstLine(r.err.Error()))
			continue
		}
		byName[r.name] = r
		fmt.Fprintf(&b, "| %s | %.0f | %.2f | %d | %s |\n", r.name, r.rate(c.records), r.elapsed.Seconds(), r.outRecs, r.note)
	}
	b.WriteString("\n")
	eo, okEO := byName["streamsql exactly-once"]
	ratio := func(label, other string, target float64, pct bool) {
		o, ok := byName[other]
		if !okEO || !ok {
			fmt.Fprintf(&b, "- %s: not measured\n", label)
			return
		}
		x := eo.rate(c.records) / o.rate(c.records)
		met := "met"
		if x < target {
			met = "NOT met"
		}
		if pct {
			fmt.Fprintf(&b, "- %s: %.0f%% (target >= %.0f%%: %s)\n", label, 100*x, 100*target, met)
		} else {
			fmt.Fprintf(&b, "- %s: %.2fx (target >= %.0fx: %s)\n", label, x, target, met)
		}
	}
	ratio("streamsql exactly-once / goka", "goka v1.1.16", 4, false)
	ratio("streamsql exactly-once / bare franz-go loop", "bare franz-go loop", 0.40, true)
	if alo, ok := byName["streamsql at-least-once"]; ok && okEO {
		fmt.Fprintf(&b, "- streamsql exactly-once / at-least-once: %.0f%%\n", 100*eo.rate(c.records)/alo.rate(c.records))
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
	s.WriteString("Command (in `bench/`):\n\n```sh\n" + commandLine() + "\n```\n\n")
	s.WriteString(table)
	return os.WriteFile(c.results, []byte(s.String()), 0o644)
}

// commandLine is how this program was run, as `go run ./kafkabench ...`.
func commandLine() string {
	return strings.Join(append([]string{"go run ./kafkabench"}, os.Args[1:]...), " ")
}
