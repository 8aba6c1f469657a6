package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name -> text under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listed is the value and source SET printed for key in out, as
// "value | source" ("" when it is not there).
func listed(out, key string) string {
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 5 && strings.TrimSpace(cells[1]) == key {
			return strings.TrimSpace(cells[2]) + " | " + strings.TrimSpace(cells[3])
		}
	}
	return ""
}

// TestConfigFile: `streamsql --config f.yaml -f job.sql` runs the job with
// the file's options (a bounded SELECT may return 2 rows), which SET
// lists with their file and line; a SET overrides one, and RESET returns
// to it.
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"f.yaml":   "sql-client:\n  execution:\n    max-table-result.rows: 2\nexecution.checkpointing.interval: 10 s\n",
		"over.sql": "SET;\nSELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3;\n",
		"set.sql": "SET 'sql-client.execution.max-table-result.rows' = '5';\nSELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3;\n" +
			"RESET 'sql-client.execution.max-table-result.rows';\nSELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3;\n",
	})
	file := filepath.Join(dir, "f.yaml")
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "--config", "f.yaml", "-f", "over.sql")
	if r.code == 0 {
		t.Fatalf("3 rows past the file's limit of 2 were returned\nstdout:\n%s", r.stdout)
	}
	for key, want := range map[string]string{
		"sql-client.execution.max-table-result.rows": "2 | " + file + ":3",
		"execution.checkpointing.interval":           "10 s | " + file + ":4",
		"table.dml-sync":                             "false | default",
	} {
		if got := listed(r.stdout, key); got != want {
			t.Errorf("SET lists %s as %q, want %q\n%s", key, got, want, r.stdout)
		}
	}
	mustContain(t, "stderr", r.stderr, "the result has more than 2 rows")

	r = runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "--config", "f.yaml", "-f", "set.sql")
	// The SELECT after the SET runs; the one after the RESET is refused
	// (its rows are printed as they come, before the error).
	if r.code == 0 || strings.Contains(r.stderr, "set.sql:2:") {
		t.Fatalf("SET 5 rows then RESET to the file's 2: exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "[ERROR] set.sql:4:1: ", "the result has more than 2 rows")
}

// TestConfigFileInDataDir: without --config, the data dir's config.yaml
// is read when it is there; a bad one stops streamsql before any statement
// runs, with an error at its line, and --config with --server is refused.
func TestConfigFileInDataDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeFiles(t, dir, map[string]string{
		"data/config.yaml": "# limits\nsql-client.execution.max-table-result.rows: 2\n",
		"over.sql":         "SET;\nSELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3;\n",
		"bad/config.yaml":  "parallelism.default: 2\nexecution.checkpointing.interval: soon\n",
	})
	r := runBinary(t, dir, "", "--data-dir", data, "-f", "over.sql")
	if r.code == 0 {
		t.Fatalf("the data dir's config.yaml was not read\nstdout:\n%s", r.stdout)
	}
	if got, want := listed(r.stdout, "sql-client.execution.max-table-result.rows"), "2 | "+filepath.Join(data, "config.yaml")+":2"; got != want {
		t.Errorf("SET lists the limit as %q, want %q\n%s", got, want, r.stdout)
	}
	mustContain(t, "stderr", r.stderr, "the result has more than 2 rows")

	r = runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "bad"), "-f", "over.sql")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("a bad config.yaml: exit code %d\nstdout:\n%s", r.code, r.stdout)
	}
	mustContain(t, "stderr", r.stderr, "[ERROR] "+filepath.Join(dir, "bad", "config.yaml")+":2: option 'execution.checkpointing.interval' must be a non-negative duration")

	r = runBinary(t, dir, "", "--server", "http://127.0.0.1:1", "--config", "f.yaml", "-f", "over.sql")
	if r.code != 2 {
		t.Fatalf("--config with --server: exit code %d\nstderr:\n%s", r.code, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "--config cannot be used with --server")
}
