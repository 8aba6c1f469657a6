package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopS3()           // if a test started it
	testenv.RemoveUDFModules() // if a test built them
	os.Exit(code)
}

// bucketFiles lists the objects under prefix of the S3 server's bucket,
// read from the server's files (its POSIX backend keeps each object as a
// file).
func bucketFiles(t *testing.T, srv *testenv.S3Server, prefix string) []string {
	t.Helper()
	root := filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckpointsOnS3: a job checkpointing to the S3 server (credentials
// given as 's3.access-key' and 's3.secret-key') is stopped, its folder in
// the data directory deleted, and submitted again: it restores the newest
// checkpoint from the bucket and the final table is exact. Stopped with
// 'execution.checkpointing.externalized-checkpoint-retention' =
// 'DELETE_ON_CANCELLATION', its objects are deleted from the bucket.
func TestCheckpointsOnS3(t *testing.T) {
	srv := testenv.S3(t)
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("session-%d", time.Now().UnixNano())
	execAll(t, s, ckptDDL,
		"SET 'execution.checkpointing.dir' = 's3://"+testenv.S3Bucket+"/"+prefix+"'",
		"SET 's3.endpoint' = '"+srv.Endpoint+"'", "SET 's3.path.style.access' = 'true'",
		"SET 's3.access-key' = '"+srv.Var("AWS_ACCESS_KEY_ID")+"'", "SET 's3.secret-key' = '"+srv.Var("AWS_SECRET_ACCESS_KEY")+"'")
	insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "3 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 3 })
	execAll(t, s, "STOP JOB '"+id+"'")
	name := s.Jobs()[0].Name
	if files := bucketFiles(t, srv, prefix+"/"+name); !strings.Contains(strings.Join(files, " "), "/_metadata") {
		t.Fatalf("no checkpoint of job %s in the bucket: %v", name, files)
	}
	// The machine's copy is lost.
	if err := os.RemoveAll(filepath.Join(dir, "jobs", name)); err != nil {
		t.Fatal(err)
	}
	execAll(t, s, "SET 'table.dml-sync' = 'true'")
	rs := execAll(t, s, insert)
	if !strings.Contains(rs[0].Message, "restored job "+name+" from checkpoint") {
		t.Fatalf("the rerun did not restore from the bucket: %q", rs[0].Message)
	}
	got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
	if got[0] != int64(7) || got[1] != int64(20000) || got[2] != int64(20000*20001/2) {
		t.Fatalf("after the restore: groups, rows, sum = %v, want 7, 20000, %d", got, 20000*20001/2)
	}

	// DELETE_ON_CANCELLATION: a stopped job's checkpoints leave the bucket.
	execAll(t, s, "SET 'table.dml-sync' = 'false'", "SET 'pipeline.name' = 'deleted'",
		"SET 'execution.checkpointing.externalized-checkpoint-retention' = 'DELETE_ON_CANCELLATION'")
	id = execAll(t, s, "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k")[0].JobID
	deadline := time.Now().Add(20 * time.Second)
	for len(bucketFiles(t, srv, prefix+"/deleted")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint of job deleted in the bucket after 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	execAll(t, s, "STOP JOB '"+id+"'")
	deadline = time.Now().Add(20 * time.Second)
	for files := bucketFiles(t, srv, prefix+"/deleted"); len(files) > 0; files = bucketFiles(t, srv, prefix+"/deleted") {
		if time.Now().After(deadline) {
			t.Fatalf("objects of job deleted still in the bucket 20 s after STOP JOB: %v", files)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFencedOwner: two sessions on two data directories run the same job
// with its checkpoints in one place of the bucket, as two machines would.
// The second claims owner epoch 2 and restores the first's newest
// checkpoint; the first's job fails at once with checkpoint.ErrFenced
// naming the second's claim, is not restarted by its strategy, and says so
// in DESCRIBE JOB; the second's job shows owner epoch 2 and completes
// checkpoints.
func TestFencedOwner(t *testing.T) {
	srv := testenv.S3(t)
	prefix := fmt.Sprintf("fenced-%d", time.Now().UnixNano())
	open := func() *Session {
		s, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		execAll(t, s, ckptDDL,
			"SET 'execution.checkpointing.dir' = 's3://"+testenv.S3Bucket+"/"+prefix+"'",
			"SET 's3.endpoint' = '"+srv.Endpoint+"'", "SET 's3.path.style.access' = 'true'",
			"SET 's3.access-key' = '"+srv.Var("AWS_ACCESS_KEY_ID")+"'", "SET 's3.secret-key' = '"+srv.Var("AWS_SECRET_ACCESS_KEY")+"'",
			"SET 'pipeline.name' = 'fenced'", "SET 'restart-strategy.type' = 'fixed-delay'",
			"SET 'restart-strategy.fixed-delay.attempts' = '100'", "SET 'restart-strategy.fixed-delay.delay' = '10ms'")
		return s
	}
	const insert = "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	a := open()
	execAll(t, a, insert)
	waitRunning(t, a, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.LastID >= 2 })
	if ja := a.Jobs()[0]; ja.OwnerEpoch != 1 {
		t.Fatalf("the first owner's job: owner epoch %d, want 1", ja.OwnerEpoch)
	}
	b := open()
	rs := execAll(t, b, insert)
	if !strings.Contains(rs[0].Message, "restored job fenced from checkpoint") {
		t.Fatalf("the second owner did not restore from the bucket: %q", rs[0].Message)
	}
	deadline := time.Now().Add(20 * time.Second)
	var ja JobInfo
	for ja = a.Jobs()[0]; ja.Status == "RUNNING" || ja.Status == "RESTARTING"; ja = a.Jobs()[0] {
		if time.Now().After(deadline) {
			t.Fatalf("the first owner's job still %s 20 s after the second claimed it", ja.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ja.Status != "FAILED" || !errors.Is(ja.Err, checkpoint.ErrFenced) || ja.Restarts != 0 ||
		!strings.Contains(ja.Err.Error(), fmt.Sprintf("owner epoch 2 (host %s, pid %d", host(t), os.Getpid())) {
		t.Fatalf("the first owner's job: %s after %d restarts, %v; want FAILED with ErrFenced naming owner epoch 2, not restarted", ja.Status, ja.Restarts, ja.Err)
	}
	if d := describeJob(t, a, "fenced"); d["owner epoch"] != "1" || !strings.Contains(fmt.Sprint(d["error"]), "fenced") {
		t.Errorf("DESCRIBE JOB of the fenced job: %v", d)
	}
	waitRunning(t, b, "a checkpoint of the second owner", func(j JobInfo) bool { return j.Checkpoints.Completed > 0 })
	if jb := b.Jobs()[0]; jb.OwnerEpoch != 2 {
		t.Errorf("the second owner's job: owner epoch %d, want 2", jb.OwnerEpoch)
	}
}

func host(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
