package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowedPaths: with SetAllowedPaths, a filesystem table or a restore
// or savepoint path outside the allowed directories is refused, naming the
// path and the directories; inside is accepted; neither a symlink nor ".."
// leads out.
func TestAllowedPaths(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "allowed")
	outside := filepath.Join(root, "outside")
	os.MkdirAll(filepath.Join(allowed, "in"), 0o755)
	os.MkdirAll(outside, 0o755)
	// A symlink inside the allowed directory to a directory outside it.
	if err := os.Symlink(outside, filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	// Without SetAllowedPaths, any path.
	if _, err := s.Execute(ctx, "CREATE TABLE free (n BIGINT) WITH ('connector'='filesystem', 'path'='"+outside+"', 'format'='csv')"); err != nil {
		t.Fatalf("a path outside, before SetAllowedPaths: %v", err)
	}
	if err := s.SetAllowedPaths([]string{filepath.Join(root, "missing")}); err == nil {
		t.Fatal("SetAllowedPaths of a missing directory was accepted")
	}
	if err := s.SetAllowedPaths([]string{allowed}); err != nil {
		t.Fatal(err)
	}

	refused := []struct{ name, stmt string }{
		{"outside", "CREATE TABLE t1 (n BIGINT) WITH ('connector'='filesystem', 'path'='" + outside + "/x', 'format'='csv')"},
		{"/etc/passwd", "CREATE TABLE t2 (line STRING) WITH ('connector'='filesystem', 'path'='file:///etc/passwd', 'format'='raw')"},
		{"a symlink out", "CREATE TABLE t3 (n BIGINT) WITH ('connector'='filesystem', 'path'='" + allowed + "/escape/new/file', 'format'='csv')"},
		{"..", "CREATE TABLE t4 (n BIGINT) WITH ('connector'='filesystem', 'path'='" + allowed + "/in/../../outside', 'format'='csv')"},
		{"a relative path", "CREATE TABLE t5 (n BIGINT) WITH ('connector'='filesystem', 'path'='relative/dir', 'format'='csv')"},
		{"'PATH'", "CREATE TABLE t6 (n BIGINT) WITH ('connector'='filesystem', 'PATH'='" + outside + "', 'format'='csv')"},
		{"a restore path", "SET 'execution.state-recovery.path' = '" + outside + "/sp'"},
		{"a restore path by its Flink name", "SET 'execution.savepoint.path' = '/tmp/sp'"},
		{"a savepoints dir", "SET 'state.savepoints.dir' = '" + outside + "'"},
	}
	for _, c := range refused {
		_, err := s.Execute(ctx, c.stmt)
		if err == nil || !strings.Contains(err.Error(), "path not allowed: ") || !strings.Contains(err.Error(), "only read and write files under "+allowed) {
			t.Errorf("%s: %v, want a path not allowed, naming %s", c.name, err, allowed)
		}
	}
	if _, err := s.Execute(ctx, "CREATE TABLE t1 (n BIGINT) WITH ('connector'='filesystem', 'path'='"+outside+"/x', 'format'='csv')"); err == nil ||
		!strings.Contains(err.Error(), "'path' = '"+outside+"/x'") || !strings.HasPrefix(err.Error(), "line 1:60: ") {
		t.Errorf("the error does not name the path at its place: %v", err)
	}
	if opts := s.SetOptions(); len(opts) != 0 {
		t.Errorf("a refused SET changed the options: %v", opts)
	}

	accepted := []string{
		"CREATE TABLE in1 (n BIGINT) WITH ('connector'='filesystem', 'path'='" + allowed + "/in', 'format'='csv')",
		"CREATE TABLE in2 (n BIGINT) WITH ('connector'='filesystem', 'path'='file://" + allowed + "/new/dir', 'format'='csv')",
		"CREATE TABLE in3 (n BIGINT) WITH ('connector'='filesystem', 'path'='" + allowed + "', 'format'='csv')",
		"SET 'state.savepoints.dir' = '" + allowed + "/savepoints'",
		"CREATE TABLE gen (n BIGINT) WITH ('connector'='datagen', 'number-of-rows'='1')",
	}
	for _, stmt := range accepted {
		if _, err := s.Execute(ctx, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	// An allowed directory reached through a symlink is allowed.
	if err := os.Symlink(allowed, filepath.Join(root, "link-to-allowed")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(ctx, "CREATE TABLE in4 (n BIGINT) WITH ('connector'='filesystem', 'path'='"+root+"/link-to-allowed/in', 'format'='csv')"); err != nil {
		t.Errorf("a path through a symlink into the allowed directory: %v", err)
	}
}

// TestAllowedObjectStore: an object store location among the allowed paths
// allows the locations under it (its bucket, its prefix's elements) as
// checkpoint, savepoint and restore paths, and no other; without one,
// every object store location is refused; the options that choose the
// object store and its credentials cannot be SET; a local checkpoint
// directory outside the allowed directories is refused as a savepoint
// directory is.
func TestAllowedObjectStore(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "allowed")
	os.MkdirAll(allowed, 0o755)
	ctx := context.Background()
	open := func(dirs ...string) *Session {
		s, err := Open(filepath.Join(t.TempDir(), "data"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.SetAllowedPaths(dirs); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, bad := range []string{"s3://", "s3://bucket/a/../b", "gs://bucket/x"} {
		s, err := Open(filepath.Join(t.TempDir(), "data"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetAllowedPaths([]string{allowed, bad}); err == nil || !strings.Contains(err.Error(), "s3://bucket[/prefix]") {
			t.Errorf("SetAllowedPaths(%q): %v, want it refused", bad, err)
		}
		s.Close()
	}

	s := open(allowed, "s3://streamsql/jobs/")
	if got := strings.Join(s.AllowedPaths(), ", "); !strings.HasSuffix(got, ", s3://streamsql/jobs") {
		t.Errorf("AllowedPaths: %s", got)
	}
	for _, stmt := range []string{
		"SET 'execution.checkpointing.dir' = 's3://streamsql/jobs'",
		"SET 'state.checkpoints.dir' = 's3://streamsql/jobs/team-a'",
		"SET 'state.savepoints.dir' = 's3://streamsql/jobs/savepoints/'",
		"SET 'execution.state-recovery.path' = 's3a://streamsql/jobs/agg/chk-4'",
		"SET 'execution.checkpointing.dir' = '" + allowed + "/checkpoints'",
	} {
		if _, err := s.Execute(ctx, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	if _, err := s.Execute(ctx, "RESET;"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ stmt, want string }{
		{"SET 'state.savepoints.dir' = 's3://streamsql/jobs-old'", "path not allowed: 'state.savepoints.dir' = 's3://streamsql/jobs-old': this session may only read and write under " + allowed + ", s3://streamsql/jobs"},
		{"SET 'execution.state-recovery.path' = 's3://other/jobs/agg/chk-4'", "path not allowed: 'execution.state-recovery.path' = 's3://other/jobs/agg/chk-4'"},
		{"SET 'execution.checkpointing.dir' = 's3://streamsql/other'", "path not allowed: 'execution.checkpointing.dir' = 's3://streamsql/other'"},
		{"SET 'execution.checkpointing.dir' = '" + root + "/outside'", "path not allowed: 'execution.checkpointing.dir' = '" + root + "/outside'"},
		{"SET 's3.endpoint' = 'http://attacker.example:9000'", "'s3.endpoint' may not be SET in this session"},
		{"SET 's3.secret-key' = 'x'", "'s3.secret-key' may not be SET in this session"},
	} {
		_, err := s.Execute(ctx, c.stmt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.stmt, err, c.want)
		}
	}

	// Local directories only: no object store location.
	s = open(allowed)
	_, err := s.Execute(ctx, "SET 'state.savepoints.dir' = 's3://streamsql/jobs'")
	if want := "path not allowed: 'state.savepoints.dir' = 's3://streamsql/jobs': this session may only read and write files under " + allowed + ", and no object store location"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an object store location without one allowed: %v, want %q", err, want)
	}
}
