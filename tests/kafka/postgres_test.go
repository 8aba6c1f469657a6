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

// walRows are the clicks of the write-ahead test: each one is also a row
// inserted into the log table.
const walRows = 300_000

// walFailpoints are the places of the write-ahead path the write-ahead
// test crashes at (internal/failpoint), in the order of one checkpoint's
// write: before its transaction begins, after its rows and before the
// commit table's row, before COMMIT, after COMMIT. Each fires on a later
// hit than the first, so that some checkpoints are written before it.
var walFailpoints = []string{
	"jdbc-wal-before-write@3",
	"jdbc-wal-after-write-before-commit-row@3",
	"jdbc-wal-before-commit@4",
	"jdbc-wal-after-commit@3",
}

// TestPostgresWriteAhead runs, on a PostgreSQL server without prepared
// transactions (max_prepared_transactions = 0), the count per app into
// a jdbc table keyed by app (upserts) and every click into a jdbc table
// without a key (inserts, which a second write of a checkpoint would
// duplicate), both 'sink.exactly-once.mode' = 'write-ahead', with two
// subtasks each, killed at every failpoint of the checkpoint protocol
// and of the write-ahead path, while a restore reads the checkpoint,
// after a restored sink wrote the restored checkpoint's rows, and at
// random moments. Read with psql: the true count of every app, and every
// click exactly once.
func TestPostgresWriteAhead(t *testing.T) {
	writeAheadRun(t, "wa", nil)
}

// TestPostgresWriteAheadNewMachines is TestPostgresWriteAhead with the
// job's checkpoints in the bucket of the S3 server (scripts/s3-server.sh)
// and every run on a new, empty data directory, as on a new machine: the
// rows of the completed checkpoints that a restore writes come from the
// bucket, not from the sink's working directory.
func TestPostgresWriteAheadNewMachines(t *testing.T) {
	writeAheadRun(t, "wa_s3", testenv.S3(t))
}

// writeAheadRun runs the write-ahead test into the tables <name>_pv and
// <name>_pv_log, checkpointing to srv's bucket when srv is set.
func writeAheadRun(t *testing.T, name string, srv *testenv.S3Server) {
	pg := testenv.PGNoPrepare(t)
	b := startBroker(t, partitions, false, "clicks")
	rng := testenv.NewRand(t, seed, seedEnv)
	c := writeClicks(t, t.TempDir(), walRows, apps)
	produceFile(t, b, "clicks", c.file, true, -1)
	pv := name + "_pv"
	pg.MustPsql(t, "CREATE TABLE "+pv+" (app_id text PRIMARY KEY, pv bigint NOT NULL); CREATE TABLE "+pv+"_log (click_id bigint NOT NULL, app_id text)")
	job := "pg" + strings.ReplaceAll(name, "_", "")
	spec := jobSpec{name: job, kind: jdbcCountsAndLog, guarantee: "exactly-once", out: pv, sets: []string{parallel2}, pg: pg,
		jdbcOpts: []string{"'sink.exactly-once.mode' = 'write-ahead'", "'sink.buffer-flush.max-rows' = '1000'"}}
	prefix := fmt.Sprintf("wal-%d", time.Now().UnixNano())
	if srv != nil {
		spec.sets = append(spec.sets, fmt.Sprintf("'execution.checkpointing.dir' = 's3://%s/%s'", testenv.S3Bucket, prefix),
			fmt.Sprintf("'s3.endpoint' = '%s'", srv.Endpoint), "'s3.path.style.access' = 'true'")
	}
	r := newJobRun(t, b, spec)
	if srv != nil {
		r.s3, r.s3Prefix = srv, prefix
	}
	start := time.Now()
	for _, fp := range append(append([]string(nil), failpoints...), walFailpoints...) {
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
	for i, out := range r.outputs {
		if strings.Contains(out, "restarting in") {
			t.Errorf("run %d failed and restarted in process:\n%s", i+1, out)
		}
	}
	checkTableCounts(t, pg, pv, c)
	want := fmt.Sprintf("%d|%d|1|%d", walRows, walRows, walRows)
	if got := strings.TrimSpace(pg.MustPsql(t, "SELECT count(*), count(DISTINCT click_id), min(click_id), max(click_id) FROM "+pv+"_log")); got != want {
		dups := pg.MustPsql(t, "SELECT click_id, count(*) FROM "+pv+"_log GROUP BY click_id HAVING count(*) > 1 ORDER BY click_id LIMIT 10")
		t.Errorf("%s_log: count, distinct ids, min, max = %s, want %s (every click once); duplicated ids:\n%s", pv, got, want, dups)
	}
	t.Logf("the commit table after the last run:\n%s", pg.MustPsql(t,
		"SELECT operator, subtask, count(*), max(checkpoint_id), count(DISTINCT run) FROM streamsql_sink_commits WHERE job = '"+job+"' GROUP BY 1, 2 ORDER BY 1, 2"))
	if left := pg.MustPsql(t, "SELECT gid FROM pg_prepared_xacts"); left != "" {
		t.Errorf("prepared transactions on a server without them:\n%s", left)
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
