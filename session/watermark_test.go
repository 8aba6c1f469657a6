package session

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
)

// TestShowJobsWatermark: SHOW JOBS shows how far in event time a job's
// output has come. A running datagen job (its TIMESTAMP field is the wall
// clock, the watermark one second behind) shows a time close to now and
// moving; a job without event time shows NULL; a bounded job that ended
// shows "end of input".
func TestShowJobsWatermark(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, `CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
		WITH ('connector' = 'datagen', 'rows-per-second' = '1000')`,
		`CREATE TABLE plain (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000')`,
		`CREATE TABLE out1 (id BIGINT) WITH ('connector' = 'blackhole')`,
		`CREATE TABLE out2 (id BIGINT) WITH ('connector' = 'blackhole')`,
		`CREATE TABLE src (x INT)`, `CREATE TABLE done (n BIGINT)`)
	start := time.Now()
	execAll(t, s, "INSERT INTO out1 SELECT id FROM gen", "INSERT INTO out2 SELECT id FROM plain")

	// column returns the watermark field of DESCRIBE JOB of the job into
	// sink table name (named insert-into_<name>-<hash>).
	column := func(name string) any {
		for _, j := range s.Jobs() {
			if strings.HasPrefix(j.Name, "insert-into_"+name+"-") {
				return describeJob(t, s, j.ID)["watermark"]
			}
		}
		t.Fatalf("no job into %s: %v", name, s.Jobs())
		return nil
	}
	var first time.Time
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, ok := column("out1").(string); ok {
			wm, err := time.Parse("2006-01-02 15:04:05.000", v)
			if err != nil {
				t.Fatalf("watermark %q: %v", v, err)
			}
			if first.IsZero() {
				first = wm
			} else if wm.After(first) {
				break
			}
			if wm.Before(start.Add(-3*time.Second)) || wm.After(time.Now()) {
				t.Fatalf("watermark %s, want about a second before now (%s)", wm, time.Now().UTC())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watermark did not move in 10 s (first %s, now %v)", first, column("out1"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v := column("out2"); v != nil {
		t.Errorf("a job without event time shows watermark %v, want NULL", v)
	}
	if got := s.Jobs()[0].Watermark; got == exec.NoWatermark {
		t.Errorf("JobInfo.Watermark is NoWatermark for a job with event time")
	}

	execAll(t, s, "SET 'table.dml-sync' = 'true'", "INSERT INTO src VALUES (1), (2)",
		"INSERT INTO done SELECT COUNT(*) FROM src")
	if v := column("done"); v != "end of input" {
		t.Errorf("a finished bounded job shows watermark %v, want \"end of input\"", v)
	}
}
