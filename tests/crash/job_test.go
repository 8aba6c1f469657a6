package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobSpec describes the job file most tests run: a datagen table of ids
// 1..rows, and one or both of the jobs
//
//	agg: INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id) FROM gen GROUP BY id % 1000
//	ids: INSERT INTO ids_out SELECT id FROM gen
//
// into filesystem tables under the test's directory (agg_out as
// debezium-json in <dir>/agg, ids_out as csv in <dir>/ids), with
// checkpoints every 200ms.
type jobSpec struct {
	rows int64
	// rate is 'rows-per-second' (0: as fast as possible).
	rate int64
	// backend is 'state.backend': pebble or hashmap.
	backend string
	// noAgg and noIDs leave a job out.
	noAgg, noIDs bool
	// extra are more SET statements, e.g. "'parallelism.default' = '2'".
	extra []string
}

// sql is the job file for the tables under dir.
func (j jobSpec) sql(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d');
`, j.rows, j.rate, j.rows)
	if !j.noAgg {
		fmt.Fprintf(&b, "CREATE TABLE agg_out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');\n", filepath.Join(dir, "agg"))
	}
	if !j.noIDs {
		fmt.Fprintf(&b, "CREATE TABLE ids_out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');\n", filepath.Join(dir, "ids"))
	}
	b.WriteString("SET 'execution.checkpointing.interval' = '200ms';\n")
	backend := j.backend
	if backend == "" {
		backend = "pebble"
	}
	fmt.Fprintf(&b, "SET 'state.backend' = '%s';\n", backend)
	for _, s := range j.extra {
		fmt.Fprintf(&b, "SET %s;\n", s)
	}
	if !j.noAgg {
		b.WriteString("SET 'pipeline.name' = 'agg';\n")
		b.WriteString("INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id) FROM gen GROUP BY id % 1000;\n")
	}
	if !j.noIDs {
		b.WriteString("SET 'pipeline.name' = 'ids';\n")
		b.WriteString("INSERT INTO ids_out SELECT id FROM gen;\n")
	}
	return b.String()
}

// jobs are the names of the jobs in the file.
func (j jobSpec) jobs() []string {
	var out []string
	if !j.noAgg {
		out = append(out, "agg")
	}
	if !j.noIDs {
		out = append(out, "ids")
	}
	return out
}

// jobRun is one test's job file in its own directory, with the data dir
// every run of it uses.
type jobRun struct {
	t       *testing.T
	spec    jobSpec
	dir     string // outputs: dir/agg, dir/ids
	dataDir string
	file    string
	// jobs are the 'pipeline.name's of the file's INSERTs, in file order.
	jobs []string
}

// newJobRun writes the job file of spec into a new temporary directory.
func newJobRun(t *testing.T, spec jobSpec) *jobRun {
	dir := t.TempDir()
	r := &jobRun{t: t, spec: spec, dir: dir, dataDir: filepath.Join(dir, "data"), jobs: spec.jobs()}
	r.file = writeFile(t, dir, "job.sql", spec.sql(dir))
	return r
}

// latest is the newest completed checkpoint of each job of the file.
func (r *jobRun) latest() map[string]int64 {
	m := map[string]int64{}
	for _, j := range r.jobs {
		m[j] = latestCheckpoint(r.t, r.dataDir, j)
	}
	return m
}

// start starts a run of the job file.
func (r *jobRun) start(env []string, args ...string) *proc {
	return startRun(r.t, r.dataDir, r.file, env, args...)
}

// submitted are the jobs whose INSERT was answered in out (the jobs are
// submitted in file order; each answer ends with "Job ID: ...").
func (r *jobRun) submitted(out string) []string {
	n := strings.Count(out, "Job ID:")
	return r.jobs[:min(n, len(r.jobs))]
}

// expectResumed checks that every job a run submitted was restored from
// want[job], the newest completed checkpoint of the job before the run (0:
// no restore).
func (r *jobRun) expectResumed(out string, want map[string]int64) {
	r.t.Helper()
	sub := map[string]int64{}
	for _, j := range r.submitted(out) {
		sub[j] = want[j]
	}
	expectRestored(r.t, out, sub)
}

// hiddenFiles lists the uncommitted (hidden) files in the sink
// directories, for the log.
func (r *jobRun) hiddenFiles() []string {
	var out []string
	for _, sub := range []string{"agg", "ids"} {
		ents, _ := os.ReadDir(filepath.Join(r.dir, sub))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				out = append(out, sub+"/"+e.Name())
			}
		}
	}
	return out
}

// checkExact checks both outputs: agg_out's changelog replays to the
// aggregate of every id, and ids_out holds every id exactly once.
func (r *jobRun) checkExact() {
	r.t.Helper()
	if !r.spec.noAgg {
		if err := checkAgg(filepath.Join(r.dir, "agg"), r.spec.rows); err != nil {
			r.t.Error(err)
		}
	}
	if !r.spec.noIDs {
		if err := checkIDs(filepath.Join(r.dir, "ids"), r.spec.rows, false); err != nil {
			r.t.Error(err)
		}
	}
}
