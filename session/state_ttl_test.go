package session

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestShowJobsStateExpired: DESCRIBE JOB's 'state expired' field counts the
// entries a job's state TTL dropped, each once. Two unbounded streams pass
// only their first rows (k <= 20 and k <= 30, keys k % 10) to a join
// feeding a group aggregation, so the job holds exactly 20 + 30 join rows
// and 10 groups, which nothing writes again: with 'table.exec.state.ttl'
// = '300 ms' and checkpoints (which sweep the state) every 100 ms, all 60
// expire and the column must reach 60 and stay there while the job runs
// on. The same job without a TTL, run beside it, must show 0.
func TestShowJobsStateExpired(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gen := func(name string) string {
		return fmt.Sprintf(`CREATE TABLE %s (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500',
			'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '1000000000')`, name)
	}
	const query = `SELECT l.k % 10, COUNT(*) FROM l JOIN r ON l.k % 10 = r.k % 10
		WHERE l.k <= 20 AND r.k <= 30 GROUP BY l.k % 10`
	execAll(t, s, gen("l"), gen("r"),
		`CREATE TABLE with_ttl (g BIGINT, n BIGINT) WITH ('connector' = 'blackhole')`,
		`CREATE TABLE without_ttl (g BIGINT, n BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'execution.checkpointing.interval' = '100 ms'",
		"SET 'pipeline.name' = 'ttl'", "SET 'table.exec.state.ttl' = '300 ms'",
		"INSERT INTO with_ttl "+query,
		"SET 'pipeline.name' = 'no-ttl'", "RESET 'table.exec.state.ttl'",
		"INSERT INTO without_ttl "+query)

	// expired returns the 'state expired' field of DESCRIBE JOB for each
	// job, by name, and the last checkpoint of each.
	expired := func() (map[string]int64, map[string]int64) {
		n, cps := map[string]int64{}, map[string]int64{}
		for _, j := range s.Jobs() {
			v, err := strconv.ParseInt(describeJob(t, s, j.ID)["state expired"].(string), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			n[j.Name] = v
		}
		for _, j := range s.Jobs() {
			if j.Status != "RUNNING" {
				t.Fatalf("job %s is %s: %v", j.Name, j.Status, j.Err)
			}
			cps[j.Name] = j.Checkpoints.LastID
		}
		return n, cps
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, _ := expired()
		if n["ttl"] > 60 {
			t.Fatalf("state expired %d, want 60: 20 + 30 join rows and 10 groups", n["ttl"])
		}
		if n["ttl"] == 60 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state expired %d after 30 s, want 60: 20 + 30 join rows and 10 groups", n["ttl"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Five more checkpoints of each job: nothing more expires (every entry
	// was counted once), and nothing ever does without a TTL.
	_, from := expired()
	for {
		n, cps := expired()
		if n["ttl"] != 60 || n["no-ttl"] != 0 {
			t.Fatalf("state expired: %d with a TTL (want 60), %d without (want 0)", n["ttl"], n["no-ttl"])
		}
		if cps["ttl"] >= from["ttl"]+5 && cps["no-ttl"] >= from["no-ttl"]+5 {
			break
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("checkpoints did not go on: %v, then %v", from, cps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, j := range s.Jobs() {
		if j.RecordsIn < 2*50 {
			t.Errorf("job %s read %d rows: the streams should have gone past the rows joined", j.Name, j.RecordsIn)
		}
	}
}
