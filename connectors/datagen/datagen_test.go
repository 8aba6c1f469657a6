package datagen_test

import (
	"context"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/datagen"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// benchSpec is the benchmark table: a BIGINT sequence, a random INT and a
// random STRING (100 hex characters, Flink's default length).
func benchSpec(rows string) exec.TableSpec {
	return exec.TableSpec{
		Table: "bench",
		Schema: types.Schema{
			{Name: "id", Type: types.BigIntType},
			{Name: "v", Type: types.IntType},
			{Name: "s", Type: types.StringType},
		},
		Options: map[string]string{
			"rows-per-second": "0",
			"number-of-rows":  rows,
			"fields.id.kind":  "sequence",
			"fields.id.start": "1",
			"fields.id.end":   "1000000000000",
			"fields.v.min":    "0",
			"fields.v.max":    "1000",
		},
		Parallelism: 1,
		BatchSize:   exec.DefaultBatchSize,
		Mem:         memory.DefaultAllocator,
	}
}

func drain(tb testing.TB, spec exec.TableSpec) int {
	ctx := context.Background()
	src, err := registry.Source(datagen.Name, spec)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	if err := src.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for {
		b, err := src.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n += b.Len()
		b.Rec.Release()
	}
}

// BenchmarkDatagen generates 1M rows of three columns per iteration.
func BenchmarkDatagen(b *testing.B) {
	spec := benchSpec("1000000")
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		rows += drain(b, spec)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func TestRowCountExact(t *testing.T) {
	for _, p := range []int{1, 3, 7} {
		total := 0
		for i := range p {
			spec := benchSpec("100001")
			spec.Parallelism, spec.Subtask, spec.BatchSize = p, i, 1000
			total += drain(t, spec)
		}
		if total != 100001 {
			t.Errorf("parallelism %d: %d rows, want 100001", p, total)
		}
	}
}

// eventSpec is a table of event time advancing by step per row, lagging by
// up to maxPast, with the row index beside it.
func eventSpec(rows int, step, maxPast string) exec.TableSpec {
	return exec.TableSpec{
		Table: "events",
		Schema: types.Schema{
			{Name: "g", Type: types.BigIntType},
			{Name: "ts", Type: types.TimestampOf(3)},
		},
		Options: map[string]string{
			"rows-per-second":    "0",
			"number-of-rows":     strconv.Itoa(rows),
			"fields.g.kind":      "sequence",
			"fields.g.start":     "0",
			"fields.g.end":       "1000000000",
			"fields.ts.kind":     "sequence",
			"fields.ts.start":    "2024-01-01 00:00:00",
			"fields.ts.step":     step,
			"fields.ts.max-past": maxPast,
		},
		Parallelism: 1,
		BatchSize:   1000,
		Mem:         memory.DefaultAllocator,
	}
}

// readEvents reads (g, ts) of every row of src, taking a snapshot after
// snapAfter batches (when >= 0) and stopping there.
func readEvents(tb testing.TB, src exec.Source, into map[int64]int64, snapAfter int) []byte {
	ctx := context.Background()
	if err := src.Open(ctx); err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	for batches := 0; ; batches++ {
		if batches == snapAfter {
			st, err := src.Snapshot()
			if err != nil {
				tb.Fatal(err)
			}
			return st
		}
		b, err := src.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			tb.Fatal(err)
		}
		gs := b.Rec.Column(0).(*array.Int64)
		ts := b.Rec.Column(1).(*array.Timestamp)
		for i := 0; i < b.Len(); i++ {
			if _, dup := into[gs.Value(i)]; dup {
				tb.Fatalf("row %d emitted twice", gs.Value(i))
			}
			into[gs.Value(i)] = int64(ts.Value(i))
		}
		b.Rec.Release()
	}
}

// TestEventTimeSequence: row g's event time is start + g·step minus a lag
// in [0, max-past]; the lags are spread over that range; the values are
// the same at parallelism 1 and after a snapshot at parallelism 2 restored
// into parallelism 3; and every row is at most max-past behind the largest
// event time before it, so a watermark of ts - max-past finds no row late.
func TestEventTimeSequence(t *testing.T) {
	const rows, stepUS, pastUS = 100_000, 1000, 5_000_000
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	want := map[int64]int64{}
	spec := eventSpec(rows, "1 ms", "5 s")
	src, err := registry.Source(datagen.Name, spec)
	if err != nil {
		t.Fatal(err)
	}
	readEvents(t, src, want, -1)
	if len(want) != rows {
		t.Fatalf("%d rows, want %d", len(want), rows)
	}
	var lagSum, maxSeen int64
	maxSeen = math.MinInt64
	for g := int64(0); g < rows; g++ {
		ts := want[g]
		lag := start + g*stepUS - ts
		if lag < 0 || lag > pastUS || ts%1000 != 0 {
			t.Fatalf("row %d: ts %d lags %d us, want a whole ms in [0, %d]", g, ts, lag, pastUS)
		}
		lagSum += lag
		maxSeen = max(maxSeen, ts)
		if ts < maxSeen-pastUS {
			t.Fatalf("row %d: ts %d is more than max-past behind %d", g, ts, maxSeen)
		}
	}
	if mean := lagSum / rows; mean < pastUS*4/10 || mean > pastUS*6/10 {
		t.Errorf("mean lag %d us, want about %d", mean, pastUS/2)
	}

	// Snapshot each of 2 subtasks after 7 batches, restore into 3.
	got := map[int64]int64{}
	var states [][]byte
	for i := 0; i < 2; i++ {
		s := spec
		s.Parallelism, s.Subtask = 2, i
		src, err := registry.Source(datagen.Name, s)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, readEvents(t, src, got, 7))
	}
	for i := 0; i < 3; i++ {
		s := spec
		s.Parallelism, s.Subtask = 3, i
		src, err := registry.Source(datagen.Name, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.(exec.Rescalable).RestoreRescaled(states); err != nil {
			t.Fatal(err)
		}
		readEvents(t, src, got, -1)
	}
	if len(got) != rows {
		t.Fatalf("rescaled: %d rows, want %d", len(got), rows)
	}
	for g, ts := range want {
		if got[g] != ts {
			t.Fatalf("rescaled: row %d has ts %d, want %d", g, got[g], ts)
		}
	}
}

// TestEventTimeOptions: the options of a TIMESTAMP sequence, as a table.
func TestEventTimeOptions(t *testing.T) {
	for _, tc := range []struct {
		step, past string
		rows       int
		last       string // the event time of the last row (no lag when past is 0)
		err        string
	}{
		{step: "1 ms", past: "0", rows: 60_001, last: "2024-01-01 00:01:00.000"},
		{step: "500us", past: "0", rows: 3, last: "2024-01-01 00:00:00.001"},
		{step: "2 s", past: "0", rows: 1801, last: "2024-01-01 01:00:00.000"},
		{step: "-1 ms", past: "0", err: "option 'fields.ts.step' must be a duration of at least 1 microsecond such as '1 s' or '500 ms', got '-1 ms'"},
		{step: "1 ms", past: "soon", err: "option 'fields.ts.max-past' must be a non-negative duration such as '30 s' or '500 ms', got 'soon'"},
	} {
		spec := eventSpec(tc.rows, tc.step, tc.past)
		spec.Schema[1].Type = types.TimestampOf(6)
		src, err := registry.Source(datagen.Name, spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("step %s, max-past %s: error %v, want %q", tc.step, tc.past, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]int64{}
		readEvents(t, src, got, -1)
		last := types.FormatTimestamp(got[int64(tc.rows-1)], 3)
		if last != tc.last {
			t.Errorf("step %s: last row at %s, want %s", tc.step, last, tc.last)
		}
	}
}

// TestRescaledSplitsTakeTurns: after a restore from parallelism 2 into 1,
// the subtask's two splits of a (practically) endless sequence both
// advance: batches come from them in turns, so neither waits for the other
// to end, and each is its own watermark split.
func TestRescaledSplitsTakeTurns(t *testing.T) {
	ctx := context.Background()
	spec := benchSpec("1000000000000")
	spec.BatchSize = 10
	spec.Parallelism = 2
	var states [][]byte
	for st := 0; st < 2; st++ {
		spec.Subtask = st
		src, err := registry.Source("datagen", spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Open(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		state, err := src.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, state)
		src.Close()
	}
	spec.Parallelism, spec.Subtask = 1, 0
	src, err := registry.Source("datagen", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.(exec.Rescalable).RestoreRescaled(states); err != nil {
		t.Fatal(err)
	}
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	ss := src.(exec.SplitSource)
	if got := ss.Splits(); len(got) != 2 {
		t.Fatalf("splits %v, want the two of the old subtasks", got)
	}
	var odd, even int
	seen := map[string]bool{}
	for i := 0; i < 6; i++ {
		b, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		runs := ss.BatchSplits()
		if len(runs) != 1 || runs[0].End != b.Len() {
			t.Fatalf("batch of %d rows has runs %v", b.Len(), runs)
		}
		seen[runs[0].Split] = true
		ids := b.Rec.Column(0).(*array.Int64)
		for j := 0; j < ids.Len(); j++ {
			if ids.Value(j)%2 == 0 {
				even++
			} else {
				odd++
			}
		}
		b.Rec.Release()
	}
	if odd != 30 || even != 30 || len(seen) != 2 {
		t.Fatalf("6 batches gave %d odd and %d even ids from splits %v, want 30 of each from both", odd, even, seen)
	}
}
