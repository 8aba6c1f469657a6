package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// postgresRows are the clicks of the PostgreSQL test.
const postgresRows = 1_000_000

// postgresKills is how many random kills the PostgreSQL job gets, after
// the failpoints.
const postgresKills = 5

// TestPostgresUpsertCounts counts clicks per app from kafka-dev into an
// exactly-once jdbc table of a PostgreSQL server (scripts/postgres.sh)
// while the engine is killed at every failpoint of the two-phase commit
// (after a subtask prepared its transaction; after the checkpoint is
// durable and before any COMMIT PREPARED; between the commits of the two
// sink subtasks; while a restore reads the checkpoint; after a restored
// sink committed the restored checkpoint's transactions, before it rolls
// back the others) and at random moments. Read with
// psql, the table holds the true count of every app, and no transaction
// is left prepared.
func TestPostgresUpsertCounts(t *testing.T) {
	pg := testenv.PG(t)
	b := startBroker(t, partitions, false, "clicks")
	rng := testenv.NewRand(t, seed, seedEnv)
	c := writeClicks(t, t.TempDir(), postgresRows, apps)
	produceFile(t, b, "clicks", c.file, true, -1)
	pg.MustPsql(t, "CREATE TABLE pg_pv (app_id text PRIMARY KEY, pv bigint NOT NULL)")
	r := newJobRun(t, b, jobSpec{name: "pgpv", kind: jdbcCounts, guarantee: "exactly-once", out: "pg_pv", sets: []string{parallel2}, pg: pg})
	start := time.Now()
	for _, fp := range failpoints {
		r.failpointKill(fp)
	}
	if r.latest() == 0 {
		t.Fatalf("no completed checkpoint after the failpoint runs: the during-restore kill needs one")
	}
	r.failpointKill("during-restore")
	r.failpointKill("after-restore-commit")
	for i := 0; i < postgresKills; i++ {
		r.randomKill(r.killDelay(rng))
	}
	r.finish()
	t.Logf("%d runs (%d random kills) took %v", r.runs, postgresKills, time.Since(start).Round(time.Millisecond))
	// A barrier must not wait for rows the prepared transaction of the
	// checkpoint before it holds: the sink pre-commits only once that one
	// is committed (exec.OrderedCommitter), so no run fails on a lock.
	for i, out := range r.outputs {
		if strings.Contains(out, "lock timeout") || strings.Contains(out, "restarting in") {
			t.Errorf("run %d failed and restarted in process:\n%s", i+1, out)
		}
	}
	checkTableCounts(t, pg, "pg_pv", c)
	if left := pg.MustPsql(t, "SELECT gid FROM pg_prepared_xacts ORDER BY gid"); left != "" {
		t.Errorf("prepared transactions left on the server:\n%s", left)
	}
}

// checkTableCounts compares the rows (app_id, pv) of a PostgreSQL table,
// read with psql, with the true counts.
func checkTableCounts(t *testing.T, pg *testenv.Postgres, table string, c *clicks) {
	t.Helper()
	got := map[string]int64{}
	var problems []string
	for _, l := range strings.Split(strings.TrimSpace(pg.MustPsql(t, "SELECT app_id, pv FROM "+table)), "\n") {
		app, n, ok := strings.Cut(l, "|")
		v, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil {
			problems = append(problems, fmt.Sprintf("row %q is not app_id|pv", l))
			continue
		}
		got[app] = v
	}
	good := 0
	for a, want := range c.counts {
		if want == 0 {
			continue
		}
		app := appName(a)
		switch v, ok := got[app]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no row, want pv %d", app, want))
		case v != want:
			problems = append(problems, fmt.Sprintf("%s: pv %d, want %d", app, v, want))
		default:
			good++
		}
		delete(got, app)
	}
	for app, v := range got {
		problems = append(problems, fmt.Sprintf("%s: pv %d, but the input has no such app", app, v))
	}
	if len(problems) > 0 {
		t.Fatalf("table %s: %d apps right, %d problems:\n%s", table, good, len(problems), testenv.Problems(problems, 20))
	}
	t.Logf("table %s: the true count of each of the %d apps", table, good)
}
