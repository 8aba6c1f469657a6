package exec_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// latencyGraph plans a job of a datagen source, a filter, a hash exchange
// into a group-by and a collecting sink, at parallelism 2.
func latencyGraph(t *testing.T) *planner.Graph {
	t.Helper()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE clicks (app_id INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000', 'fields.app_id.min' = '0', 'fields.app_id.max' = '99')",
		"SET 'parallelism.default' = '2'",
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sts, err := sql.Parse("SELECT app_id, COUNT(*) FROM clicks WHERE v <> 0 GROUP BY app_id")
	if err != nil {
		t.Fatal(err)
	}
	jo, err := planner.ParseJobOptions(s.Options())
	if err != nil {
		t.Fatal(err)
	}
	p := &planner.Planner{Catalog: s.Catalog(), Options: jo}
	sink, err := p.Query(sts[0], sts[0].(*sql.Select).Query)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Physical([]*planner.Sink{sink})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLatencyMarkers: with a latency interval, every source subtask sends a
// marker with its first batch, and a marker goes on from each operator to
// one receiver of its output, so every operator downstream of the source
// (the sink included) records at least one marker per source subtask, with
// a positive age, in the histogram of that source. The source itself
// records none.
func TestLatencyMarkers(t *testing.T) {
	g := latencyGraph(t)
	j, err := exec.Start(context.Background(), g, exec.Options{Collect: func(exec.Batch) error { return nil },
		LatencyInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	var source *planner.Operator
	for _, op := range g.Operators {
		if len(op.Inputs) == 0 {
			source = op
		}
	}
	byOp := map[string]exec.LatencyHistogram{}
	for _, m := range j.SubtaskMetrics() {
		for _, h := range m.Latency {
			if h.Source != source.ID {
				t.Errorf("%s (%d): markers of %q, want only the source %q's", m.Name, m.Subtask, h.Source, source.ID)
			}
			if h.Count > 0 && (h.Max <= 0 || h.Sum <= 0) {
				t.Errorf("%s (%d): %d markers with ages summing to %v, oldest %v: want positive ages", m.Name, m.Subtask, h.Count, h.Sum, h.Max)
			}
			var inBuckets uint64
			for _, n := range h.Buckets {
				inBuckets += n
			}
			if inBuckets != h.Count {
				t.Errorf("%s (%d): %d markers but %d in the buckets", m.Name, m.Subtask, h.Count, inBuckets)
			}
			byOp[m.Operator] = byOp[m.Operator].Add(h)
		}
	}
	for _, op := range g.Operators {
		h := byOp[op.ID]
		switch {
		case op == source && h.Count != 0:
			t.Errorf("source %s recorded %d markers, want none", op.Name(), h.Count)
		case op != source && h.Count < uint64(source.Parallelism):
			t.Errorf("%s recorded %d markers, want at least one per source subtask (%d)", op.Name(), h.Count, source.Parallelism)
		case op != source && (h.Quantile(0.5) <= 0 || h.Quantile(0.99) > h.Max):
			t.Errorf("%s: median %v, p99 %v, max %v: want 0 < median and p99 <= max", op.Name(), h.Quantile(0.5), h.Quantile(0.99), h.Max)
		}
	}
	if len(g.Operators) < 4 {
		t.Fatalf("want a plan of at least 4 operators (source, filter, group-by, sink), got %d", len(g.Operators))
	}
}

// TestLatencyMarkersOff: without the option no marker is sent and no
// subtask has a histogram.
func TestLatencyMarkersOff(t *testing.T) {
	g := latencyGraph(t)
	j, err := exec.Start(context.Background(), g, exec.Options{Collect: func(exec.Batch) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, m := range j.SubtaskMetrics() {
		if m.Latency != nil {
			t.Errorf("%s (%d): latency histograms %v with markers off", m.Name, m.Subtask, m.Latency)
		}
	}
}

// TestLatencyHistogramQuantile: quantiles interpolate inside the bucket
// they fall in and never exceed the oldest age.
func TestLatencyHistogramQuantile(t *testing.T) {
	h := exec.LatencyHistogram{Count: 100, Max: 8 * time.Millisecond, Buckets: make([]uint64, len(exec.LatencyBuckets)+1)}
	// 50 ages in (1 ms, 2.5 ms], 50 in (5 ms, 10 ms] with the oldest 8 ms.
	h.Buckets[4], h.Buckets[6] = 50, 50
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 2500 * time.Microsecond},
		{0.25, 1750 * time.Microsecond},
		{0.75, 6500 * time.Microsecond},
		{1, 8 * time.Millisecond},
	} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (exec.LatencyHistogram{}).Quantile(0.99); got != 0 {
		t.Errorf("empty histogram: Quantile(0.99) = %v, want 0", got)
	}
}
