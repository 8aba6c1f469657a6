package kafka

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// objectStoreRows are the clicks of TestUpsertCountsNewMachines.
const objectStoreRows = 2_000_000

// TestUpsertCountsNewMachines is TestUpsertCounts with the job's
// checkpoints in the bucket of a real S3-compatible server
// (scripts/s3-server.sh) and every run on a new, empty data directory, as
// on a new machine: killed at every failpoint of the checkpoint protocol
// and at random moments, each run must restore the newest checkpoint in
// the bucket, and a read_committed reader must see the true count of each
// app as its last value.
func TestUpsertCountsNewMachines(t *testing.T) {
	srv := testenv.S3(t)
	forKafkaDev(t, partitions, []string{"clicks", "pv"}, func(t *testing.T, b *broker) {
		rng := testenv.NewRand(t, seed, seedEnv)
		c := writeClicks(t, t.TempDir(), objectStoreRows, apps)
		produceFile(t, b, "clicks", c.file, true, -1)
		prefix := fmt.Sprintf("kafka-%d", time.Now().UnixNano())
		r := newJobRun(t, b, jobSpec{name: "pv", kind: upsertCounts, guarantee: "exactly-once", out: "pv", sets: []string{parallel2,
			fmt.Sprintf("'execution.checkpointing.dir' = 's3://%s/%s'", testenv.S3Bucket, prefix),
			fmt.Sprintf("'s3.endpoint' = '%s'", srv.Endpoint), "'s3.path.style.access' = 'true'"}})
		r.s3, r.s3Prefix = srv, prefix
		r.killEverywhere(rng)
		checkCounts(t, b, "pv", c)
	})
}

// latestInBucket is the newest checkpoint of job whose _metadata is in the
// bucket of srv under prefix (0: none), read from the server's files (its
// POSIX backend keeps each object as a file).
func latestInBucket(t *testing.T, srv *testenv.S3Server, prefix, job string) int64 {
	t.Helper()
	dir := filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job)
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var newest int64
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), "chk-")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= newest {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata")); err == nil {
			newest = id
		}
	}
	return newest
}

// fenceRows are the clicks of TestFencedOwnerTakeover.
const fenceRows = 600_000

// TestFencedOwnerTakeover: process A runs clicks -> GROUP BY app -> an
// exactly-once upsert-kafka count, and clicks -> an exactly-once kafka
// pass-through, in one statement set, checkpointing to the S3 server. A
// is stopped with SIGSTOP after some checkpoints; process B takes the job
// over from the bucket (same job name and checkpoint directory, a new
// empty data directory), restores A's newest checkpoint and completes
// checkpoints of its own; then A is continued with SIGCONT. A must fail
// at once with the fenced error naming B's pid, not restart, and B must
// run to the end: a read_committed reader sees every click exactly once
// in the pass-through topic and the true count of each app as its last
// value.
func TestFencedOwnerTakeover(t *testing.T) {
	srv := testenv.S3(t)
	forKafkaDev(t, partitions, []string{"clicks", "pv", "out"}, func(t *testing.T, b *broker) {
		dir := t.TempDir()
		c := writeClicks(t, dir, fenceRows, apps)
		produceFile(t, b, "clicks", c.file, true, -1)
		prefix := fmt.Sprintf("fence-%d", time.Now().UnixNano())
		const job = "fence"
		spec := jobSpec{name: job, kind: upsertCounts, guarantee: "exactly-once", out: "pv", sets: []string{parallel2,
			fmt.Sprintf("'execution.checkpointing.dir' = 's3://%s/%s'", testenv.S3Bucket, prefix),
			fmt.Sprintf("'s3.endpoint' = '%s'", srv.Endpoint), "'s3.path.style.access' = 'true'",
			"'restart-strategy.type' = 'fixed-delay'", "'restart-strategy.fixed-delay.attempts' = '100'",
			"'restart-strategy.fixed-delay.delay' = '10ms'"}}
		rows := spec
		rows.name, rows.out = job+"-rows", "out"
		sql := strings.Replace(spec.sql(b), "INSERT INTO pv SELECT app_id, COUNT(*) FROM clicks GROUP BY app_id;\n",
			"EXECUTE STATEMENT SET BEGIN\n"+
				"INSERT INTO pv SELECT app_id, COUNT(*) FROM clicks GROUP BY app_id;\n"+
				"INSERT INTO out SELECT * FROM clicks;\n"+
				"END;\n", 1)
		sql = strings.Replace(sql, "SET 'execution.checkpointing.interval'",
			fmt.Sprintf("CREATE TABLE out (\n  %s\n) WITH (\n  %s\n);\nSET 'execution.checkpointing.interval'",
				clickColumns, rows.sinkOpts(b, "kafka", "'format' = 'json'")), 1)
		file := writeFile(t, dir, "job.sql", sql)
		env := append([]string{"STREAMSQL_FAILPOINT=" + holdAtEnd}, srv.Env...)

		// A: held at the end of its input, so that it is still running
		// when continued, whatever the machine's speed.
		a := startEngine(t, filepath.Join(dir, "a"), file, env)
		deadline := time.Now().Add(60 * time.Second)
		for latestInBucket(t, srv, prefix, job) < 3 {
			if time.Now().After(deadline) || isDone(a.Done()) {
				a.Signal(syscall.SIGKILL)
				a.Wait()
				t.Fatalf("A completed no 3 checkpoints in the bucket in 60 s; output:\n%s", a.Output())
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := a.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stoppedAt := latestInBucket(t, srv, prefix, job)
		t.Logf("A (pid %d) stopped with SIGSTOP; newest checkpoint in the bucket %d", a.Pid(), stoppedAt)

		// B: a new machine; runs to the end of the input.
		bp := startEngine(t, filepath.Join(dir, "b"), file, srv.Env)
		deadline = time.Now().Add(60 * time.Second)
		for !strings.Contains(bp.Output(), "Job ID:") || latestInBucket(t, srv, prefix, job) <= stoppedAt {
			if time.Now().After(deadline) || isDone(bp.Done()) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if got := restoredFrom(bp.Output(), job); got < stoppedAt {
			t.Errorf("B restored from checkpoint %d, want A's newest, %d or later; output:\n%s", got, stoppedAt, bp.Output())
		}
		t.Logf("B (pid %d) took over; newest checkpoint in the bucket %d; A continued with SIGCONT", bp.Pid(), latestInBucket(t, srv, prefix, job))
		if err := a.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		aerr := a.Wait()
		aout := a.Output()
		if isDone(bp.Done()) {
			t.Errorf("B finished before A failed: the run does not show B's sink aborting what A opened after the takeover")
		}
		wantFenced := fmt.Sprintf("owner epoch 2 (host %s, pid %d,", hostname(t), bp.Pid())
		if exitCode(aerr) <= 0 || !strings.Contains(aout, "fenced: another process took over the job") || !strings.Contains(aout, wantFenced) {
			t.Errorf("A after SIGCONT: %v; want it to fail with the fenced error naming %q; output:\n%s", aerr, wantFenced, aout)
		}
		if strings.Contains(aout, "restarting in") || strings.Count(aout, "Job ID:") != 1 {
			t.Errorf("A restarted its job after it was fenced; output:\n%s", aout)
		}
		t.Logf("A ended after %v: %s", a.Took(), lastLines(aout, 2))
		if err := bp.Wait(); err != nil {
			t.Fatalf("B: %v; output:\n%s", err, bp.Output())
		}
		t.Logf("B finished in %v", bp.Took())
		checkCounts(t, b, "pv", c)
		if err := idProblems(idCounts(t, b, "out", fenceRows), false); err != nil {
			t.Errorf("the pass-through topic out: %v", err)
		}
	})
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
