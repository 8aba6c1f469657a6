package kafka

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// The columns of the clicks topic's JSON records.
const clickColumns = `click_id BIGINT,
  app_id   STRING,
  user_id  BIGINT,
  ts       TIMESTAMP(3)`

// sourceDDL is the kafka source table clicks on topic, read from the
// earliest offset to the end offsets at the job's start, as JSON.
func sourceDDL(b *broker, topic, group string, extra ...string) string {
	opts := []string{
		"'connector' = 'kafka'",
		fmt.Sprintf("'topic' = '%s'", topic),
		fmt.Sprintf("'properties.bootstrap.servers' = '%s'", b.addr),
		fmt.Sprintf("'properties.group.id' = '%s'", group),
		"'scan.startup.mode' = 'earliest-offset'",
		"'scan.bounded.mode' = 'latest-offset'",
		"'format' = 'json'",
	}
	opts = append(opts, extra...)
	return fmt.Sprintf("CREATE TABLE clicks (\n  %s\n) WITH (\n  %s\n);\n", clickColumns, strings.Join(opts, ",\n  "))
}

// jobKind is the statement a job file runs.
type jobKind int

const (
	// upsertCounts: INSERT INTO pv SELECT app_id, COUNT(*) FROM clicks
	// GROUP BY app_id, pv an upsert-kafka table keyed by app_id.
	upsertCounts jobKind = iota
	// passThrough: INSERT INTO out SELECT * FROM clicks, out a kafka json
	// table.
	passThrough
	// joinRegions: clicks JOIN apps (a kafka table of app_id -> region)
	// into two sinks of one statement set: region_pv, an upsert-kafka
	// count of clicks per region, and joined, a kafka json stream of the
	// joined rows (click_id, app_id, region).
	joinRegions
	// temporalRegions: clicks (with a watermark on ts) JOIN the versioned
	// table app_regions (upsert-kafka, a watermark on its ts) FOR
	// SYSTEM_TIME AS OF the click's ts, into joined (click_id, app_id,
	// region), a kafka json stream.
	temporalRegions
	// intervalImps: clicks LEFT JOIN imps (a kafka json stream of
	// impressions, click_id and ts, both with watermarks) ON the click id
	// and the click within 10 s after its impression, into joined
	// (click_id, imp_id), a kafka json stream.
	intervalImps
	// jdbcCounts: upsertCounts into pv, a jdbc table of a PostgreSQL
	// server keyed by app_id (table j.out of jobSpec.pg).
	jdbcCounts
)

// jobSpec is a job file reading the clicks topic of a broker.
type jobSpec struct {
	name string // 'pipeline.name', also the consumer group
	kind jobKind
	// guarantee is the sink's 'sink.delivery-guarantee'.
	guarantee string
	// out is the sink topic.
	out string
	// sets are more SET statements ("'k' = 'v'").
	sets []string
	// pg is the PostgreSQL server of jdbcCounts.
	pg *testenv.Postgres
}

// sql is the job file.
func (j jobSpec) sql(b *broker) string {
	var s strings.Builder
	if j.kind == temporalRegions || j.kind == intervalImps {
		s.WriteString(strings.Replace(sourceDDL(b, "clicks", j.name), "ts       TIMESTAMP(3)",
			"ts       TIMESTAMP(3),\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND", 1))
	} else {
		s.WriteString(sourceDDL(b, "clicks", j.name))
	}
	sinkOpts := func(connector string, more ...string) string { return j.sinkOpts(b, connector, more...) }
	switch j.kind {
	case upsertCounts:
		fmt.Fprintf(&s, "CREATE TABLE pv (\n  app_id STRING,\n  pv BIGINT,\n  PRIMARY KEY (app_id) NOT ENFORCED\n) WITH (\n  %s\n);\n",
			sinkOpts("upsert-kafka", "'key.format' = 'json'", "'value.format' = 'json'"))
	case passThrough:
		fmt.Fprintf(&s, "CREATE TABLE out (\n  %s\n) WITH (\n  %s\n);\n", clickColumns, sinkOpts("kafka", "'format' = 'json'"))
	case jdbcCounts:
		fmt.Fprintf(&s, "CREATE TABLE pv (\n  app_id STRING,\n  pv BIGINT,\n  PRIMARY KEY (app_id) NOT ENFORCED\n) WITH (\n  %s\n);\n",
			strings.Join([]string{"'connector' = 'jdbc'", fmt.Sprintf("'url' = '%s'", j.pg.JDBCURL()), fmt.Sprintf("'table-name' = '%s'", j.out),
				fmt.Sprintf("'username' = '%s'", j.pg.Var("PGUSER")), fmt.Sprintf("'password' = '%s'", j.pg.Var("PGPASSWORD")),
				fmt.Sprintf("'sink.delivery-guarantee' = '%s'", j.guarantee)}, ",\n  "))
	case joinRegions:
		fmt.Fprintf(&s, "CREATE TABLE apps (app_id STRING, region STRING) WITH (\n  %s\n);\n",
			strings.Join([]string{"'connector' = 'kafka'", "'topic' = 'apps'", fmt.Sprintf("'properties.bootstrap.servers' = '%s'", b.addr),
				fmt.Sprintf("'properties.group.id' = '%s-apps'", j.name), "'scan.startup.mode' = 'earliest-offset'",
				"'scan.bounded.mode' = 'latest-offset'", "'format' = 'json'"}, ",\n  "))
		regions := j
		regions.out = "region_pv"
		regions.name = j.name + "-regions"
		fmt.Fprintf(&s, "CREATE TABLE region_pv (\n  region STRING,\n  pv BIGINT,\n  PRIMARY KEY (region) NOT ENFORCED\n) WITH (\n  %s\n);\n",
			regions.sinkOpts(b, "upsert-kafka", "'key.format' = 'json'", "'value.format' = 'json'"))
		rows := j
		rows.out = "joined"
		fmt.Fprintf(&s, "CREATE TABLE joined (click_id BIGINT, app_id STRING, region STRING) WITH (\n  %s\n);\n",
			rows.sinkOpts(b, "kafka", "'format' = 'json'"))
	case intervalImps:
		fmt.Fprintf(&s, "CREATE TABLE imps (\n  click_id BIGINT,\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n) WITH (\n  %s\n);\n",
			strings.Join([]string{"'connector' = 'kafka'", "'topic' = 'imps'", fmt.Sprintf("'properties.bootstrap.servers' = '%s'", b.addr),
				fmt.Sprintf("'properties.group.id' = '%s-imps'", j.name), "'scan.startup.mode' = 'earliest-offset'",
				"'scan.bounded.mode' = 'latest-offset'", "'format' = 'json'"}, ",\n  "))
		fmt.Fprintf(&s, "CREATE TABLE joined (click_id BIGINT, imp_id BIGINT) WITH (\n  %s\n);\n",
			j.sinkOpts(b, "kafka", "'format' = 'json'"))
	case temporalRegions:
		fmt.Fprintf(&s, "CREATE TABLE app_regions (\n  app_id STRING,\n  region STRING,\n  ts TIMESTAMP(3),\n  PRIMARY KEY (app_id) NOT ENFORCED,\n  WATERMARK FOR ts AS ts\n) WITH (\n  %s\n);\n",
			strings.Join([]string{"'connector' = 'upsert-kafka'", "'topic' = 'app_regions'", fmt.Sprintf("'properties.bootstrap.servers' = '%s'", b.addr),
				fmt.Sprintf("'properties.group.id' = '%s-regions'", j.name), "'scan.bounded.mode' = 'latest-offset'",
				"'key.format' = 'raw'", "'value.format' = 'json'"}, ",\n  "))
		fmt.Fprintf(&s, "CREATE TABLE joined (click_id BIGINT, app_id STRING, region STRING) WITH (\n  %s\n);\n",
			j.sinkOpts(b, "kafka", "'format' = 'json'"))
	}
	s.WriteString("SET 'execution.checkpointing.interval' = '200ms';\n")
	s.WriteString("SET 'state.backend' = 'pebble';\n")
	fmt.Fprintf(&s, "SET 'pipeline.name' = '%s';\n", j.name)
	for _, o := range j.sets {
		fmt.Fprintf(&s, "SET %s;\n", o)
	}
	switch j.kind {
	case upsertCounts, jdbcCounts:
		s.WriteString("INSERT INTO pv SELECT app_id, COUNT(*) FROM clicks GROUP BY app_id;\n")
	case passThrough:
		s.WriteString("INSERT INTO out SELECT * FROM clicks;\n")
	case joinRegions:
		s.WriteString("EXECUTE STATEMENT SET BEGIN\n" +
			"INSERT INTO region_pv SELECT a.region, COUNT(*) FROM clicks c JOIN apps a ON c.app_id = a.app_id GROUP BY a.region;\n" +
			"INSERT INTO joined SELECT c.click_id, c.app_id, a.region FROM clicks c JOIN apps a ON c.app_id = a.app_id;\n" +
			"END;\n")
	case temporalRegions:
		s.WriteString("INSERT INTO joined SELECT c.click_id, c.app_id, r.region FROM clicks c JOIN app_regions FOR SYSTEM_TIME AS OF c.ts AS r ON c.app_id = r.app_id;\n")
	case intervalImps:
		s.WriteString("INSERT INTO joined SELECT c.click_id, i.click_id FROM clicks c LEFT JOIN imps i\n" +
			"  ON c.click_id = i.click_id AND c.ts BETWEEN i.ts AND i.ts + INTERVAL '10' SECOND;\n")
	}
	return s.String()
}

// sinkOpts are the WITH options of a sink table on topic j.out, with the
// job's guarantee and, exactly-once, a transactional id prefix of j.name.
func (j jobSpec) sinkOpts(b *broker, connector string, more ...string) string {
	o := []string{
		fmt.Sprintf("'connector' = '%s'", connector),
		fmt.Sprintf("'topic' = '%s'", j.out),
		fmt.Sprintf("'properties.bootstrap.servers' = '%s'", b.addr),
		fmt.Sprintf("'sink.delivery-guarantee' = '%s'", j.guarantee),
	}
	if j.guarantee == "exactly-once" {
		o = append(o, fmt.Sprintf("'sink.transactional-id-prefix' = '%s-tx'", j.name))
	}
	o = append(o, more...)
	return strings.Join(o, ",\n  ")
}

// jobRun is a job file in its own directory with the data directory every
// run of it uses.
type jobRun struct {
	t       *testing.T
	b       *broker
	spec    jobSpec
	dataDir string
	file    string
	runs    int
	// ends are the end offsets of the input topic (the job's bound).
	ends []int64
	// firsts are the times from a run's start to its first completed
	// checkpoint, of the runs that got there.
	firsts []time.Duration
	// s3, when set, is the S3 server whose bucket holds the job's
	// checkpoints under s3Prefix (the job file sets
	// 'execution.checkpointing.dir'): every run starts on a new, empty
	// data directory, as on a new machine.
	s3       *testenv.S3Server
	s3Prefix string
	// outputs are what the runs of failpointKill, killAt and finish
	// printed, in order.
	outputs []string
}

func newJobRun(t *testing.T, b *broker, spec jobSpec) *jobRun {
	dir := t.TempDir()
	r := &jobRun{t: t, b: b, spec: spec, dataDir: filepath.Join(dir, "data")}
	r.file = writeFile(t, dir, "job.sql", spec.sql(b))
	r.ends = endOffsets(t, b, "clicks")
	return r
}

func (r *jobRun) latest() int64 {
	if r.s3 != nil {
		return latestInBucket(r.t, r.s3, r.s3Prefix, r.spec.name)
	}
	return latestCheckpoint(r.t, r.dataDir, r.spec.name)
}

// progress is the share of the input the job has committed.
func (r *jobRun) progress() float64 {
	return committedProgress(r.t, r.b, r.spec.name, "clicks", r.ends)
}

// start starts a run of the job file with the extra environment env and
// command-line arguments args.
func (r *jobRun) start(env []string, args ...string) *proc {
	r.runs++
	r.b.alive(r.t)
	if r.s3 != nil {
		if err := os.RemoveAll(r.dataDir); err != nil {
			r.t.Fatal(err)
		}
		env = append(append([]string(nil), env...), r.s3.Env...)
	}
	p := startEngine(r.t, r.dataDir, r.file, env, args...)
	p.watchCheckpoints(r.dataDir, r.spec.name, r.latest())
	return p
}

// ended records what a run tells about the time to a first checkpoint
// and describes it for the log.
func (r *jobRun) ended(p *proc) string {
	if f := time.Duration(p.firstCheckpoint.Load()); f > 0 {
		r.firsts = append(r.firsts, f)
		return fmt.Sprintf("first checkpoint at %v", f.Round(time.Millisecond))
	}
	return "no checkpoint completed"
}

// expectResumed checks that a run that submitted its job restored it from
// want, the newest completed checkpoint before the run (0: none).
func (r *jobRun) expectResumed(out string, want int64) {
	r.t.Helper()
	if !strings.Contains(out, "Job ID:") {
		return // killed before the job was submitted
	}
	if got := restoredFrom(out, r.spec.name); got != want {
		r.t.Errorf("run %d: want the job restored from checkpoint %d (the newest completed one), got %d; output:\n%s", r.runs, want, got, out)
	}
}

// failpointKill runs the job file with a failpoint armed
// (STREAMSQL_FAILPOINT=spec) and checks that the failpoint killed the
// process.
func (r *jobRun) failpointKill(spec string) {
	r.t.Helper()
	want := r.latest()
	p := r.start([]string{"STREAMSQL_FAILPOINT=" + spec + "," + holdAtEnd})
	err := p.Wait()
	out := p.Output()
	r.outputs = append(r.outputs, out)
	name, _, _ := strings.Cut(spec, "@")
	if !testenv.KilledBySignal(err, syscall.SIGKILL) || !strings.Contains(out, "failpoint "+name+": killing the process") {
		r.t.Fatalf("run %d with STREAMSQL_FAILPOINT=%s: want the failpoint to kill the process, got %v; output:\n%s", r.runs, spec, err, out)
	}
	r.expectResumed(out, want)
	r.t.Logf("run %d: %s; killed by failpoint %s after %v (%s); newest checkpoint now %d, %.0f%% of the input committed",
		r.runs, restoredLine(out), spec, p.Took(), r.ended(p), r.latest(), 100*r.progress())
}

// holdAtEnd is the failpoint the kill runs arm (internal/failpoint): a job
// at the end of its input goes on taking checkpoints instead of
// finishing, so a kill always lands in a running job, however fast the
// machine gets through the rest of the input; only the last run, without
// it, finishes.
const holdAtEnd = "hold-at-end"

// randomKill runs the job file, held at its end, and kills it d after its
// start.
func (r *jobRun) randomKill(d time.Duration) {
	r.t.Helper()
	want := r.latest()
	if r.killAt(r.start([]string{"STREAMSQL_FAILPOINT=" + holdAtEnd}), want, d) {
		r.t.Errorf("run %d finished though held at the end of its input (%s)", r.runs, holdAtEnd)
	}
}

// killAt kills run p at d after its start, checks that it resumed from
// checkpoint want, and reports whether it ended by itself first.
func (r *jobRun) killAt(p *proc, want int64, d time.Duration) (finished bool) {
	r.t.Helper()
	killed := p.KillAfter(d)
	out := p.Output()
	r.outputs = append(r.outputs, out)
	r.expectResumed(out, want)
	if !killed {
		if p.Err != nil {
			r.t.Fatalf("run %d ended by itself before the kill at %v: %v; output:\n%s", r.runs, d, p.Err, out)
		}
		r.t.Logf("run %d: %s; finished in %v, before the kill at %v", r.runs, restoredLine(out), p.Took(), d.Round(time.Millisecond))
		return true
	}
	r.t.Logf("run %d: %s; SIGKILL at %v (%s); newest checkpoint now %d, %.0f%% of the input committed",
		r.runs, restoredLine(out), d.Round(time.Millisecond), r.ended(p), r.latest(), 100*r.progress())
	return false
}

// finish runs the job file once more to the end (exit status 0).
func (r *jobRun) finish() {
	r.t.Helper()
	want := r.latest()
	p := r.start(nil)
	if err := p.Wait(); err != nil {
		r.t.Fatalf("last run %d: %v; output:\n%s", r.runs, err, p.Output())
	}
	r.outputs = append(r.outputs, p.Output())
	r.expectResumed(p.Output(), want)
	r.t.Logf("run %d: %s; finished in %v", r.runs, restoredLine(p.Output()), p.Took())
}

// failpoints are the places of the checkpoint protocol the kill tests crash
// at (see internal/failpoint); between-sink-commits needs two sink
// subtasks, so the jobs run with parallelism 2.
var failpoints = []string{
	"after-sink-precommit@2",
	"after-metadata-before-commit@1",
	"between-sink-commits@1",
}

// randomKills is how many random kills a job gets.
const randomKills = 10

// The random kill moments. The job is fast: the whole input is a few
// checkpoint intervals of work, fewer than the kills. So a kill lands
// uniformly in [minKill, wide*t1) after the start of a run (t1: the median
// time from a run's start to its first completed checkpoint) while less
// than keepShare of the input is committed: through start-up, restore,
// the first transactions and checkpoints. After that, in [minKill,
// narrow*t1): mostly before the run's first checkpoint completes
// (start-up, restore, records read and written into a transaction that
// must be aborted), so that most kills land while the job has work, not in
// the idle tail of a run held at its end (holdAtEnd).
const (
	minKill   = 20 * time.Millisecond
	wide      = 2.0
	narrow    = 0.9
	keepShare = 0.75
	// t1Guess is t1 before any run has reached a checkpoint.
	t1Guess = 300 * time.Millisecond
)

// killDelay picks the moment of the next random kill.
func (r *jobRun) killDelay(rng *rand.Rand) time.Duration {
	t1 := t1Guess
	if len(r.firsts) > 0 {
		t1 = median(r.firsts)
	}
	f := wide
	if r.progress() >= keepShare {
		f = narrow
	}
	hi := time.Duration(float64(t1) * f)
	if hi <= minKill {
		hi = minKill + time.Millisecond
	}
	return minKill + time.Duration(rng.Int64N(int64(hi-minKill)))
}

// killEverywhere runs the job to its end through the kills: each failpoint
// of the checkpoint protocol once, a kill during a restore, and randomKills
// SIGKILLs at random moments, restarting with the same command each time;
// then a last run to the end. The failpoints come first, while the job
// surely has work left.
func (r *jobRun) killEverywhere(rng *rand.Rand) {
	r.t.Helper()
	start := time.Now()
	for _, fp := range failpoints {
		r.failpointKill(fp)
	}
	if r.latest() == 0 {
		r.t.Fatalf("no completed checkpoint after the failpoint runs: the during-restore kill needs one")
	}
	r.failpointKill("during-restore")
	for i := 0; i < randomKills; i++ {
		r.randomKill(r.killDelay(rng))
	}
	r.finish()
	r.t.Logf("%d runs (%d random kills) took %v", r.runs, randomKills, time.Since(start).Round(time.Millisecond))
}
