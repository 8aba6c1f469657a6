package crash

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The savepoint runs: spRows ids at spRate rows per second take 3 seconds;
// the first run is stopped with a savepoint once it committed some rows.
const (
	spRows = 600_000
	spRate = 200_000
)

var savepointRE = regexp.MustCompile(`\[INFO\] Savepoint written: (\S+)`)

// savepointFile is a job file reading the same datagen table as every run
// of TestSavepointChangeQuery, with one INSERT into a new debezium-json
// table of the given columns (all BIGINT) under dir.
func savepointFile(t *testing.T, dir, name, table string, cols []string, insert string, ignoreUnclaimed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d');
`, spRows, spRate, spRows)
	fmt.Fprintf(&b, "CREATE TABLE %s (%s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');\n",
		table, strings.Join(cols, " BIGINT, "), filepath.Join(dir, table))
	b.WriteString("SET 'execution.checkpointing.interval' = '200ms';\n")
	b.WriteString("SET 'pipeline.name' = 'counts';\n")
	if ignoreUnclaimed {
		b.WriteString("SET 'execution.state-recovery.ignore-unclaimed-state' = 'true';\n")
	}
	b.WriteString(insert + "\n")
	return writeFile(t, dir, name, b.String())
}

// sumCounts is the sum of the second column (the count) over the keys.
func sumCounts(m map[int64]row) int64 {
	var n int64
	for _, r := range m {
		n += r[1]
	}
	return n
}

// TestSavepointChangeQuery stops a streaming aggregate with a savepoint
// (SIGTERM with --savepoint-on-stop), restores the savepoint into a changed
// query that adds a column computed after the aggregate, and checks that
// the counts continued from where they stopped. Then it restores the same
// savepoint into a query whose aggregate changed: that is refused, naming
// the state no operator claims, unless
// 'execution.state-recovery.ignore-unclaimed-state' is set.
func TestSavepointChangeQuery(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	perKey := int64(spRows / 10)

	// 1. The original query, stopped with a savepoint.
	a := savepointFile(t, dir, "a.sql", "counts", []string{"k", "c"},
		"INSERT INTO counts SELECT id % 10 AS k, COUNT(*) FROM gen GROUP BY id % 10;", false)
	p := startRun(t, data, a, nil, "--savepoint-on-stop")
	// Stop once the sink committed a checkpoint's rows, however long the
	// machine took to get there: the savepoint then holds some rows, and
	// the source, throttled to spRate, has not reached the end.
	tick := time.NewTicker(10 * time.Millisecond)
	for committed := false; !committed; {
		select {
		case <-p.Done():
			t.Fatalf("the streaming run ended by itself (%v) before it was stopped; output:\n%s", p.Err, p.Output())
		case <-tick.C:
		}
		parts, err := committedParts(filepath.Join(dir, "counts"), ".json")
		if err != nil {
			t.Fatal(err)
		}
		committed = len(parts) > 0
	}
	tick.Stop()
	stopAfter := time.Since(p.Start).Round(time.Millisecond)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := p.mustSucceed()
	m := savepointRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"[INFO] Savepoint written: <path>\" after SIGTERM with --savepoint-on-stop; output:\n%s", out)
	}
	sp := m[1]
	t.Logf("SIGTERM after %v, once rows were committed: savepoint %s", stopAfter, sp)
	before, err := replayKeyed(filepath.Join(dir, "counts"), []string{"k", "c"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := sumCounts(before.last)
	t.Logf("the stopped query had committed counts for %d of %d rows", stopped, spRows)

	// 2. The query with a column added after the aggregate, restored from
	// the savepoint. Its sink is a new table, so the old sink's state is
	// unclaimed: if the engine refuses that, the refusal must name only
	// the old sink, the aggregate being claimed by the changed query.
	insert2 := "INSERT INTO counts2 SELECT k, c, c * 2 FROM (SELECT id % 10 AS k, COUNT(*) AS c FROM gen GROUP BY id % 10);"
	b := savepointFile(t, dir, "b.sql", "counts2", []string{"k", "c", "c2"}, insert2, false)
	q := startRun(t, data, b, nil, "-s", sp)
	if err := q.Wait(); err != nil {
		out := q.Output()
		t.Logf("restoring into the query with an added column without 'ignore-unclaimed-state': %v\n%s", err, out)
		if !strings.Contains(out, "no operator of the new plan claims") {
			t.Fatalf("the restore failed, but not for unclaimed state: %v; output:\n%s", err, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "GroupAggregate") && !strings.Contains(l, "restored into") {
				t.Errorf("the changed query does not claim the aggregate's state (operator ids must not depend on what follows an operator): %s", l)
			}
		}
		b = savepointFile(t, dir, "b2.sql", "counts2", []string{"k", "c", "c2"}, insert2, true)
		out = runToEnd(t, data, b, nil, "-s", sp)
		t.Logf("with 'ignore-unclaimed-state': %s", restoredLines(out))
	}
	after, err := replayKeyed(filepath.Join(dir, "counts2"), []string{"k", "c", "c2"})
	if err != nil {
		t.Fatal(err)
	}
	var resumed int64 // the count of the restored aggregate: the savepoint's position
	for k := int64(0); k < 10; k++ {
		if got, want := after.last[k], (row{k, perKey, 2 * perKey}); got != want {
			t.Errorf("counts2: final row of key %d is %s, want %s: the restored query did not continue from the savepoint",
				k, fmtRow(got, []string{"k", "c", "c2"}), fmtRow(want, []string{"k", "c", "c2"}))
		}
		f, ok := after.first[k]
		if !ok || f.op != 'd' || f.before == nil {
			t.Errorf("counts2: the first change of key %d is %+v, want the retraction of the count restored from the savepoint", k, f)
			continue
		}
		resumed += f.before[1]
		if f.before[1] != before.last[k][1] {
			t.Errorf("key %d: the stopped query committed the count %d, the restored query resumed from %d (stop with savepoint should commit exactly what the savepoint holds)",
				k, before.last[k][1], f.before[1])
		}
	}
	t.Logf("the changed query resumed from counts for %d rows", resumed)
	if resumed <= 0 || resumed >= spRows {
		t.Errorf("the savepoint holds counts for %d rows; want some but not all of the %d", resumed, spRows)
	}

	// 3. A changed aggregate (GROUP BY id % 7): its operator has a new id,
	// so the savepoint's aggregate state is unclaimed.
	insert7 := "INSERT INTO counts7 SELECT id % 7 AS k, COUNT(*) FROM gen GROUP BY id % 7;"
	c := savepointFile(t, dir, "c.sql", "counts7", []string{"k", "c"}, insert7, false)
	out = runFails(t, data, c, nil, "-s", sp)
	if !strings.Contains(out, "no operator of the new plan claims") {
		t.Errorf("restoring into a changed aggregate: want an error saying \"no operator of the new plan claims\" the state; output:\n%s", out)
	}
	listed := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "GroupAggregate") && strings.Contains(l, "has state") {
			listed = true
		}
	}
	if !listed {
		t.Errorf("the error does not list the old aggregate as the operator whose state is unclaimed; output:\n%s", out)
	}
	t.Logf("restoring into GROUP BY id %% 7 is refused:\n%s", out)

	c = savepointFile(t, dir, "c2.sql", "counts7", []string{"k", "c"}, insert7, true)
	runToEnd(t, data, c, nil, "-s", sp)
	seven, err := replayKeyed(filepath.Join(dir, "counts7"), []string{"k", "c"})
	if err != nil {
		t.Fatal(err)
	}
	// The source continued from the savepoint; the new aggregate started
	// empty.
	if got := sumCounts(seven.last); got != spRows-resumed {
		t.Errorf("counts7: counts for %d rows, want the %d rows after the savepoint", got, spRows-resumed)
	}
}
