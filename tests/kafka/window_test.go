package kafka

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// The window crash test's input: winRows clicks whose event time advances
// evenly over winSpan, winApps app ids, each click up to winJitter earlier
// than its place in the sequence (out of order, but by less than the
// watermark delay winDelay, so no click is late).
const (
	winRows   = 4_000_000
	winApps   = 20
	winSpan   = 60 * time.Second
	winJitter = 500 * time.Millisecond
	winDelay  = 1 // second, the WATERMARK's delay
	// winPartitions is the number of partitions of the clicks topic: two
	// per source subtask (parallelism 2), each with its own watermark.
	winPartitions = 4
)

// winKey is one window of one app.
type winKey struct {
	start int64 // window_start, milliseconds since the epoch
	app   string
}

// winClicks is a generated window input file of n clicks and its true
// counts per 1-second window.
type winClicks struct {
	file   string
	n      int
	counts map[winKey]int64
}

// winTime is the event time of click id (1..n), in milliseconds since
// baseTime.
func winTime(id, n int) int64 {
	base := int64(id) * winSpan.Milliseconds() / int64(n)
	j := int64(mix(uint64(id)<<2) % uint64(winJitter.Milliseconds()))
	return max(base-j, 0)
}

// clickUser is the user_id of click id.
func clickUser(id int) int { return int(mix(uint64(id)<<1) % 100000) }

// writeWindowClicks writes n clicks as "app_id:json" lines (kcat -K:)
// into dir/clicks.txt and counts them per 1-second window and app.
func writeWindowClicks(t *testing.T, dir string, n int) *winClicks {
	t.Helper()
	c := &winClicks{file: filepath.Join(dir, "clicks.txt"), n: n, counts: map[winKey]int64{}}
	f, err := os.Create(c.file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	base := baseTime.UnixMilli()
	var line []byte
	for id := 1; id <= n; id++ {
		a := appOf(id, winApps)
		ms := winTime(id, n)
		c.counts[winKey{base + ms - ms%1000, appName(a)}]++
		line = append(line[:0], "app-"...)
		line = strconv.AppendInt(line, int64(a), 10)
		line = append(line, `:{"click_id":`...)
		line = strconv.AppendInt(line, int64(id), 10)
		line = append(line, `,"app_id":"app-`...)
		line = strconv.AppendInt(line, int64(a), 10)
		line = append(line, `","user_id":`...)
		line = strconv.AppendInt(line, int64(clickUser(id)), 10)
		line = append(line, `,"ts":"`...)
		line = baseTime.Add(time.Duration(ms)*time.Millisecond).AppendFormat(line, "2006-01-02 15:04:05.000")
		line = append(line, "\"}\n"...)
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return c
}

// windowJobSQL is the job: 1-second TUMBLE counts by app_id from the
// clicks topic into the exactly-once kafka json table win_out.
func windowJobSQL(b *broker, name string) string {
	var s strings.Builder
	fmt.Fprintf(&s, `CREATE TABLE clicks (
  %s,
  WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '%s',
  'properties.group.id' = '%s',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);
`, clickColumns, winDelay, b.addr, name)
	fmt.Fprintf(&s, `CREATE TABLE win_out (
  window_start TIMESTAMP(3),
  window_end   TIMESTAMP(3),
  app_id       STRING,
  cnt          BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = 'win_out',
  'properties.bootstrap.servers' = '%s',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '%s-tx',
  'properties.transaction.timeout.ms' = '900000',
  'format' = 'json'
);
`, b.addr, name)
	s.WriteString("SET 'execution.checkpointing.interval' = '200ms';\n")
	s.WriteString("SET 'state.backend' = 'pebble';\n")
	fmt.Fprintf(&s, "SET 'pipeline.name' = '%s';\n", name)
	fmt.Fprintf(&s, "SET %s;\n", parallel2)
	s.WriteString(`INSERT INTO win_out
SELECT window_start, window_end, app_id, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end, app_id;
`)
	return s.String()
}

// TestWindowCrash counts clicks per 1-second TUMBLE window and app into an
// exactly-once kafka table while the engine is killed at every failpoint of
// the checkpoint protocol and at ten random moments; a read_committed
// consumer must see exactly one row per (window, app) with its true count.
func TestWindowCrash(t *testing.T) {
	forEachProtocol(t, winPartitions, []string{"clicks", "win_out"}, func(t *testing.T, b *broker) {
		rng := testenv.NewRand(t, seed, seedEnv)
		dir := t.TempDir()
		c := writeWindowClicks(t, dir, winRows)
		produceFile(t, b, "clicks", c.file, true, -1)
		const name = "win"
		r := &jobRun{t: t, b: b, spec: jobSpec{name: name, guarantee: "exactly-once", out: "win_out"},
			dataDir: filepath.Join(dir, "data")}
		r.file = writeFile(t, dir, "job.sql", windowJobSQL(b, name))
		r.ends = endOffsets(t, b, "clicks")
		r.killEverywhere(rng)
		checkWindowCounts(t, b, "win_out", c)
	})
}

// checkWindowCounts reads the committed rows of topic and compares them
// with the true counts: one row per (window_start, app_id), window_end one
// second after window_start, cnt the number of clicks.
func checkWindowCounts(t *testing.T, b *broker, topic string, c *winClicks) {
	t.Helper()
	type row struct {
		WindowStart string `json:"window_start"`
		WindowEnd   string `json:"window_end"`
		AppID       string `json:"app_id"`
		Cnt         int64  `json:"cnt"`
	}
	const layout = "2006-01-02 15:04:05" // parsing accepts a fraction
	got := map[winKey][]int64{}
	var problems []string
	n := consumeCommitted(t, b, topic, func(r record) error {
		var w row
		if err := json.Unmarshal(r.value, &w); err != nil {
			return fmt.Errorf("value is not a window row: %v", err)
		}
		ws, err1 := time.Parse(layout, w.WindowStart)
		we, err2 := time.Parse(layout, w.WindowEnd)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("bad window_start or window_end: %v %v", err1, err2)
		}
		if we.Sub(ws) != time.Second {
			problems = append(problems, fmt.Sprintf("partition %d offset %d: window [%s, %s) is not one second", r.partition, r.offset, w.WindowStart, w.WindowEnd))
		}
		k := winKey{ws.UnixMilli(), w.AppID}
		got[k] = append(got[k], w.Cnt)
		return nil
	})
	good := 0
	for k, want := range c.counts {
		cs := got[k]
		delete(got, k)
		ws := time.UnixMilli(k.start).UTC().Format(layout)
		switch {
		case len(cs) == 0:
			problems = append(problems, fmt.Sprintf("window %s %s: no committed row, want count %d", ws, k.app, want))
		case len(cs) > 1:
			problems = append(problems, fmt.Sprintf("window %s %s: %d committed rows (counts %v), want one with count %d", ws, k.app, len(cs), cs, want))
		case cs[0] != want:
			problems = append(problems, fmt.Sprintf("window %s %s: committed count %d, want %d", ws, k.app, cs[0], want))
		default:
			good++
		}
	}
	for k, cs := range got {
		problems = append(problems, fmt.Sprintf("window %s %s: %d committed rows (counts %v) of a window without clicks",
			time.UnixMilli(k.start).UTC().Format(layout), k.app, len(cs), cs))
	}
	if total := len(problems); total > 0 {
		t.Errorf("%s: %d problems (%d of %d (window, app) rows right; %d committed records read):\n  %s",
			topic, total, good, len(c.counts), n, testenv.Problems(problems, 20))
		return
	}
	t.Logf("%s: exactly one committed row for each of the %d (window, app) pairs, each with its true count", topic, good)
}
