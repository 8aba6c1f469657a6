package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// binary is the streamsql binary built once for the tests that run it as a
// subprocess.
var binary string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "streamsql-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "streamsql")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building streamsql:", err)
		return 1
	}
	defer testenv.StopS3()
	return m.Run()
}

// result is what a run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// runBinary runs streamsql with args and stdin, in dir, and waits for it
// (at most a minute).
func runBinary(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("streamsql %v did not end within a minute\nstdout:\n%s\nstderr:\n%s", args, out.String(), errOut.String())
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: cmd.ProcessState.ExitCode()}
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, text)
		}
	}
}

func TestFileRunsStatementsAndWaitsForJobs(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "-f", testdata(t, "orders.sql"))
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout,
		"| customer | orders | total |",
		"| alice    |      2 |  12.0 |",
		"| bob      |      1 |   3.0 |",
		"| <NULL>   |      1 |   2.0 |",
		"3 rows in set",
		"Job ID: ",
		// The print sink's rows, written by the background job.
		"+I[alice, 2]", "+I[bob, 1]", "+I[NULL, 1]",
	)
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestFileSyntaxErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "--file", testdata(t, "syntax_error.sql"))
	if r.code == 0 {
		t.Fatalf("exit code 0\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "[ERROR] ", "syntax_error.sql:3:11: ", "did you mean FROM?")
	// The file is parsed before anything runs.
	if r.stdout != "" {
		t.Errorf("statements ran before the syntax error: %s", r.stdout)
	}
}

func TestFileErrorOfAStatement(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.sql")
	os.WriteFile(file, []byte("CREATE TABLE t (id BIGINT);\n\nSELECT idd\n  FROM t;\nSELECT 1;\n"), 0o644)
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "-f", "job.sql")
	if r.code != 1 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "[ERROR] job.sql:3:8: ", "'idd'")
	if strings.Contains(r.stdout, "1 row in set") {
		t.Errorf("the statement after the failure ran:\n%s", r.stdout)
	}
}

func TestFileJobFailureNamesItsInsert(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.sql")
	os.WriteFile(file, []byte(`CREATE TABLE src (x STRING);
CREATE TABLE dst (v INT);
INSERT INTO src VALUES ('abc');
INSERT INTO dst
  SELECT CAST(x AS INT) FROM src;
`), 0o644)
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "--sync", "-f", "job.sql")
	if r.code != 1 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "[ERROR] job.sql:4:1: ", "abc")
}

// TestFileStreamStopsOnSignal stops a streaming file with SIGINT and
// SIGTERM: without a savepoint the exit code is the signal's (130, 143),
// since the jobs were cut short; with --savepoint-on-stop and checkpoints
// on it is 0.
func TestFileStreamStopsOnSignal(t *testing.T) {
	for _, c := range []struct {
		sig       syscall.Signal
		savepoint bool
		code      int
		says      string
	}{
		{syscall.SIGINT, false, 130, "[INFO] Stopped without a savepoint (exit code 130"},
		{syscall.SIGTERM, false, 143, "[INFO] Stopped without a savepoint (exit code 143"},
		{syscall.SIGTERM, true, 0, "[INFO] Savepoint written: "},
	} {
		name := c.sig.String()
		if c.savepoint {
			name += " with a savepoint"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--data-dir", filepath.Join(dir, "data"), "-f", testdata(t, "stream.sql")}
			if c.savepoint {
				file := filepath.Join(dir, "job.sql")
				src, err := os.ReadFile(testdata(t, "stream.sql"))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(file, append([]byte("SET 'execution.checkpointing.interval' = '100 ms';\n"), src...), 0o644)
				args = []string{"--data-dir", filepath.Join(dir, "data"), "--savepoint-on-stop", "-f", file}
			}
			sig := c.sig
			cmd := exec.Command(binary, args...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Wait for the job's first rows, then stop it.
			sc := bufio.NewScanner(stdout)
			seen := 0
			for seen < 3 && sc.Scan() {
				if strings.HasPrefix(sc.Text(), "+I[") {
					seen++
				}
			}
			if seen < 3 {
				t.Fatalf("the job printed no rows; stderr:\n%s", errOut.String())
			}
			cmd.Process.Signal(sig)
			go io.Copy(io.Discard, stdout)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("streamsql did not stop within 30s of the signal")
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, c.code, errOut.String())
			}
			mustContain(t, "stderr", errOut.String(), "[INFO] Stopping 1 running jobs...", c.says)
		})
	}
}

// TestFileRestartLoopFailsForGood runs a checkpointed job whose input has
// a row that cannot be cast: each failure and restart is printed as it
// happens, the tenth failure in a row with the same cause fails the job
// for good, and the run exits 1 with the cause.
func TestFileRestartLoopFailsForGood(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.sql")
	os.WriteFile(file, []byte(`CREATE TABLE src (x STRING);
CREATE TABLE dst (v INT);
SET 'table.dml-sync' = 'true';
INSERT INTO src VALUES ('1'), ('abc');
RESET 'table.dml-sync';
SET 'execution.checkpointing.interval' = '1 h';
SET 'restart-strategy.exponential-delay.initial-backoff' = '10 ms';
SET 'restart-strategy.exponential-delay.max-backoff' = '20 ms';
INSERT INTO dst
  SELECT CAST(x AS INT) FROM src;
`), 0o644)
	r := runBinary(t, dir, "", "--data-dir", filepath.Join(dir, "data"), "-f", "job.sql")
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "[WARN] job.sql:9:1: job "); n != 9 {
		t.Errorf("%d failures printed, want 9 before the final one:\n%s", n, r.stderr)
	}
	if n := strings.Count(r.stderr, ") restarted from the start (restart "); n != 9 {
		t.Errorf("%d restarts printed, want 9:\n%s", n, r.stderr)
	}
	mustContain(t, "stderr", r.stderr, "abc", "; restarting in ", "the same failure 9 times in a row",
		"[ERROR] job.sql:9:1: job ", "(the same failure 10 times in a row: not restarted again)")
	if n := strings.Count(r.stderr, "[ERROR]"); n != 1 {
		t.Errorf("the final failure is printed %d times, want once:\n%s", n, r.stderr)
	}
}

func TestPipedShell(t *testing.T) {
	dir := t.TempDir()
	script := `CREATE TABLE t (id BIGINT, name STRING);
help
INSERT INTO t VALUES (1, 'x'), (22, NULL);
-- a comment on its own
SELECT id,
       name
FROM t;
SELECT nope FROM t;
SET 'sql-client.execution.result-mode' = 'changelog';
SELECT name, COUNT(*) FROM t GROUP BY name;
quit
SELECT 'not reached';
`
	r := runBinary(t, dir, script, "--data-dir", filepath.Join(dir, "data"), "--sync")
	if r.code != 1 {
		t.Errorf("exit code %d, want 1 (a statement failed)", r.code)
	}
	mustContain(t, "stdout", r.stdout,
		"Statements (end each with ';'",
		"| id | name   |",
		"| 22 | <NULL> |",
		"2 rows in set",
		"| op | name",
		"| +I | x ",
		"Received a total of 2 rows",
	)
	mustContain(t, "stderr", r.stderr, "[ERROR] line 1:8: column 'nope' not found")
	if strings.Contains(r.stdout, "not reached") {
		t.Error("the shell went on after quit")
	}
	if strings.Contains(r.stdout, "streamsql>") {
		t.Error("the shell printed prompts on a pipe")
	}
}

func TestTestSubcommand(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, "", "test", "--data-dir", dir, testdata(t, "pass.slt"))
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "pass.slt: 5 passed, 0 failed, 0 skipped", "5 passed, 0 failed\n")
	if strings.Contains(r.stdout, "failed:") {
		t.Errorf("a run without failures lists causes:\n%s", r.stdout)
	}
	// Each file's temporary data directory is removed.
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	r = runBinary(t, dir, "", "test", testdata(t, "fail.slt"), "-v", testdata(t, "pass.slt"))
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout,
		"fail.slt: 2 passed, 1 failed, 0 skipped",
		"fail.slt:8: query result mismatch",
		// The totals, then why the records failed.
		"7 passed, 1 failed\n1 failed:\n    1  query result mismatch\n",
	)
	if strings.Contains(r.stdout, "-v prints each failure") {
		t.Errorf("with -v the report says -v would print the failures:\n%s", r.stdout)
	}
}

func TestVersionAndHelp(t *testing.T) {
	r := runBinary(t, t.TempDir(), "", "version")
	if r.code != 0 || r.stdout != "streamsql "+version+"\n" {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	r = runBinary(t, t.TempDir(), "", "-h")
	if r.code != 0 {
		t.Errorf("-h: exit code %d", r.code)
	}
	mustContain(t, "-h", r.stdout+r.stderr, "streamsql test", "streamsql kafka-dev", "streamsql server", "-data-dir", "-config FILE", "-f FILE", "-sync")
	r = runBinary(t, t.TempDir(), "", "--no-such-flag")
	if r.code != 2 {
		t.Errorf("unknown flag: exit code %d", r.code)
	}
}

func TestPipedShellEndsOnIdleSIGINT(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary, "--data-dir", filepath.Join(dir, "data"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	defer stdin.Close()
	io.WriteString(stdin, "SELECT 1 AS one;\n")
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "1 row in set" {
	}
	// The shell now waits for input, which never comes. (A signal sent
	// right after the result could still find the statement running.)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the shell exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the shell did not end on SIGINT")
	}
}
