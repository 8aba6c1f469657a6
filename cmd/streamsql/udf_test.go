package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/internal/testenv"
)

// TestUDF: a user function created by -f is called by -f and by the
// shell on the same data dir; a call that never returns fails the file
// with the error naming the function.
func TestUDF(t *testing.T) {
	modules, err := testenv.UDFModules()
	if err != nil {
		t.Fatal(err)
	}
	defer testenv.RemoveUDFModules()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	job := filepath.Join(dir, "job.sql")
	write := func(text string) {
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("CREATE FUNCTION count_char AS '" + filepath.Join(modules, "count_char.wasm") + "' LANGUAGE WASM;\n" +
		"SELECT count_char('cocoa', 'c') AS n;\n")
	r := runBinary(t, dir, "", "--data-dir", data, "-f", job)
	if r.code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "Function 'count_char' created.", "| 2 |")

	r = runBinary(t, dir, "SHOW USER FUNCTIONS;\nSELECT count_char('access', 'c') AS n;\n", "--data-dir", data)
	if r.code != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "count_char", "| 2 |")

	write("CREATE FUNCTION forever AS '" + filepath.Join(modules, "loop.wasm") + "' LANGUAGE WASM WITH ('call-timeout' = '100 ms');\n" +
		"SELECT forever(3);\n")
	r = runBinary(t, dir, "", "--data-dir", data, "-f", job)
	if r.code == 0 {
		t.Fatalf("a call that never returns: exit status 0\nstdout:\n%s", r.stdout)
	}
	mustContain(t, "stderr", r.stderr, "job.sql:2:", "function forever: a call ran past its 'call-timeout' (100ms) and was stopped")
}
