package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
)

// TestRestoreFlagIsOneShot: `-s PATH` restores the first job the shell
// submits; the next job, another statement, starts on its own (before, it
// restored the other job's savepoint too).
func TestRestoreFlagIsOneShot(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s, err := session.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []string{`CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000',
	'rows-per-second' = '1000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2000')`,
		"CREATE TABLE a (n BIGINT)", "CREATE TABLE b (n BIGINT)",
		"SET 'execution.checkpointing.interval' = '50ms'"} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rs, err := s.Execute(ctx, "INSERT INTO a SELECT COUNT(*) FROM gen")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for j := s.Jobs()[0]; j.Checkpoints.LastID < 1; j = s.Jobs()[0] {
		if j.Status != "RUNNING" || time.Now().After(deadline) {
			t.Fatalf("waiting for a checkpoint: %+v", j)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sp, err := s.StopWithSavepoint(ctx, rs[0].JobID, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	r := runBinary(t, dir, "SET 'execution.checkpointing.interval' = '50ms';\nINSERT INTO a SELECT COUNT(*) FROM gen;\nINSERT INTO b SELECT COUNT(*) FROM gen;\n",
		"--data-dir", data, "--sync", "-s", sp)
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stdout, "restored job"); n != 1 || !strings.Contains(r.stdout, "restored job insert-into_a-") ||
		!strings.Contains(r.stdout, "from "+sp) {
		t.Fatalf("want the first job (into a) restored from %s, and only it:\n%s", sp, r.stdout)
	}
}
