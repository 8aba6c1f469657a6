package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A child's usage is its own: a process that burns CPU reports it, and
// its peak resident set is its own too, not the high-water mark of this
// (larger) process that started it, which ru_maxrss would report.
func TestChildUsage(t *testing.T) {
	ballast := make([]byte, 256<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rss := startRSSSampler(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	u := childUsage(cmd, rss.finish())
	if u.cpu < 10*time.Millisecond {
		t.Errorf("cpu = %v, want the loop's CPU time (at least 10ms)", u.cpu)
	}
	if u.maxRSS <= 0 || u.maxRSS > 64<<20 || u.inProcess {
		t.Errorf("maxRSS = %d, inProcess = %v; want the shell's own peak RSS (above 0, far below the parent's 256 MiB)", u.maxRSS, u.inProcess)
	}
	_ = ballast[len(ballast)-1]
}

// The self meter sees CPU burnt in this process, and a peak RSS at least
// as large as memory touched while it ran.
func TestSelfMeter(t *testing.T) {
	m := startSelfMeter()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	u := m.stop()
	if u.cpu < 20*time.Millisecond {
		t.Errorf("cpu = %v, want at least the 50ms spun", u.cpu)
	}
	if !u.inProcess {
		t.Error("inProcess = false")
	}
	if m.hwmReset && u.maxRSS < 64<<20 {
		t.Errorf("maxRSS = %d, want at least the 64 MiB touched", u.maxRSS)
	}
	_ = buf[x%len(buf)]
}

// The table's efficiency ratios are the inverse ratios of CPU per record,
// and each target says whether it was met.
func TestFormatTableRatios(t *testing.T) {
	c := config{records: 1_000_000, keys: 10, partitions: 4, rounds: 1}
	res := func(name string, secs, cpu float64, inProcess bool) result {
		return result{name: name, elapsed: time.Duration(secs * float64(time.Second)),
			usage: usage{cpu: time.Duration(cpu * float64(time.Second)), maxRSS: 100 << 20, inProcess: inProcess}, round: 1}
	}
	rs := []result{
		res(nameEO, 2, 2, false),
		res(nameEOServer, 2.5, 2, false),
		res(nameBare, 1, 1, true),
		res(nameKStreams, 4, 7, false),
		res(nameFlink, 8, 4, false),
	}
	got := formatTable(c, &input{took: time.Second}, rs)
	for _, want := range []string{
		"| streamsql exactly-once | 500000 | 500000 - 500000 | 2.00 | 2.00 | 2.00 - 2.00 | 100 | 0.00 | 0 |",
		"| bare franz-go loop | 1000000 | 1000000 - 1000000 | 1.00 | 1.00 | 1.00 - 1.00 | 100 * |",
		"streamsql exactly-once / Kafka Streams 4.4.0: records/s per CPU second 3.50x of the medians (target >= 3x: met)",
		"streamsql exactly-once / Flink 2.2.1 SQL: records/s per CPU second 2.00x of the medians (target >= 3x: NOT met)",
		"streamsql exactly-once / bare franz-go loop: records/s per CPU second 50% of the medians, 50% of the best rounds; records/s 50% of the medians (target >= 40%: met)",
		"streamsql exactly-once / goka v1.1.16: not measured",
		"streamsql exactly-once, server / streamsql exactly-once (`streamsql -f`): records/s 80.0% of the medians (target >= 97%: NOT met), 80.0% of the best rounds",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// Medians and ranges are taken per column, over the rounds.
func TestSummaryMedians(t *testing.T) {
	c := config{records: 100}
	var rs []result
	for i, cpu := range []float64{3, 1, 2} {
		rs = append(rs, result{name: "x", elapsed: time.Duration(i+1) * time.Second, usage: usage{cpu: time.Duration(cpu * float64(time.Second))}})
	}
	s := summarize(c, rs)[0]
	cpu := func(r result) float64 { return r.cpuPerM(c.records) }
	if got := s.medianOf(cpu); got != 2e4 {
		t.Errorf("median CPU per 1M = %v, want 20000", got)
	}
	if lo, hi := s.rangeOf(cpu); lo != 1e4 || hi != 3e4 {
		t.Errorf("range = %v - %v, want 10000 - 30000", lo, hi)
	}
	if got := s.median().elapsed; got != 2*time.Second {
		t.Errorf("median round by rate took %v, want 2s", got)
	}
}

// TestParseRates: --rate takes records/s and shares of the maximum, and
// refuses anything else.
func TestParseRates(t *testing.T) {
	got, err := parseRates("10000, 50%")
	if err != nil || len(got) != 2 || got[0].perSec != 10000 || got[1].share != 0.5 {
		t.Fatalf("parseRates(10000, 50%%) = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "fast", "0%", "150%"} {
		if _, err := parseRates(bad); err == nil {
			t.Errorf("parseRates(%q): no error", bad)
		}
	}
}

// TestParsePT: the produce time is read from the output of every
// contender (streamsql's and Flink's {"click_id","pt"}, Kafka Streams' input
// value passed through).
func TestParsePT(t *testing.T) {
	in := clickWithPT(nil, 7, []byte("app-3"), 1765000000123456)
	for _, v := range []string{string(in), `{"click_id":7,"pt":1765000000123456}`} {
		pt, err := parsePT([]byte(v))
		if err != nil || pt != 1765000000123456 {
			t.Errorf("parsePT(%s) = %d, %v", v, pt, err)
		}
	}
	if _, err := parsePT([]byte(`{"click_id":7}`)); err == nil {
		t.Errorf("parsePT without pt: no error")
	}
}

// TestLatencyContenders: every --only key of the latency mode names one
// engine, guarantee and interval.
func TestLatencyContenders(t *testing.T) {
	var labels []string
	for _, lc := range latencyContenderList() {
		labels = append(labels, lc.key+": "+lc.label())
	}
	want := []string{
		"alo: streamsql at-least-once",
		"eo-1s: streamsql exactly-once, 1s checkpoints",
		"eo-200ms: streamsql exactly-once, 200ms checkpoints",
		"kstreams-alo: Kafka Streams 4.4.0 at-least-once",
		"kstreams-eo-1s: Kafka Streams 4.4.0 exactly_once_v2, 1s commits",
		"kstreams-eo-200ms: Kafka Streams 4.4.0 exactly_once_v2, 200ms commits",
		"flink-alo: Flink 2.2.1 SQL at-least-once",
		"flink-eo-1s: Flink 2.2.1 SQL exactly-once, 1s checkpoints",
		"flink-eo-200ms: Flink 2.2.1 SQL exactly-once, 200ms checkpoints",
	}
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Errorf("contenders:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
}
