package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestDataDirLock runs an unbounded job with -f on a data directory, checks
// that a second streamsql on the same directory (-f, and the shell) is
// refused with the first one's pid and changes nothing, then kills the
// first with SIGKILL and checks that the next run takes the directory over.
func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	long := filepath.Join(dir, "long.sql")
	os.WriteFile(long, []byte(`CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM ticks;
`), 0o644)
	other := filepath.Join(dir, "other.sql")
	os.WriteFile(other, []byte("CREATE TABLE intruder (id BIGINT);\nSHOW TABLES;\n"), 0o644)

	first := exec.Command(binary, "--data-dir", data, "-f", long)
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "Job ID: ") {
	}
	if sc.Err() != nil || !strings.HasPrefix(sc.Text(), "Job ID: ") {
		first.Process.Kill()
		first.Wait()
		t.Fatalf("the first run submitted no job; stderr:\n%s", firstErr.String())
	}
	go io.Copy(io.Discard, stdout)
	pid := strconv.Itoa(first.Process.Pid)

	catalogBefore, err := os.ReadFile(filepath.Join(data, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"-f", "", []string{"--data-dir", data, "-f", other}},
		{"shell", "CREATE TABLE intruder (id BIGINT);\n", []string{"--data-dir", data}},
	} {
		r := runBinary(t, dir, c.stdin, c.args...)
		if r.code == 0 {
			t.Errorf("%s: a second streamsql on the data directory exited 0\nstdout:\n%s\nstderr:\n%s", c.name, r.stdout, r.stderr)
		}
		mustContain(t, c.name+": stderr", r.stderr, "[ERROR] data directory "+data+" is in use by process "+pid, ", started ", "-f "+long)
		if r.stdout != "" {
			t.Errorf("%s: the refused run printed: %s", c.name, r.stdout)
		}
	}
	catalogAfter, _ := os.ReadFile(filepath.Join(data, "catalog.json"))
	if !bytes.Equal(catalogBefore, catalogAfter) {
		t.Errorf("a refused run changed the catalog:\n%s", catalogAfter)
	}

	// kill -9: the kernel releases the lock; the next run takes it over.
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	r := runBinary(t, dir, "", "--data-dir", data, "-f", other)
	if r.code != 0 {
		t.Fatalf("the run after kill -9 of the owner: exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mustContain(t, "stdout", r.stdout, "| intruder   |", "| sink       |", "| ticks      |")
	// The help says who locks what.
	h := runBinary(t, dir, "", "-h")
	mustContain(t, "-h", h.stdout+h.stderr, "the shell and -f lock it (DIR/LOCK)", "error naming the owner's pid", "never uses DIR itself")

	// It released the lock on exit (and emptied the file).
	if b, err := os.ReadFile(filepath.Join(data, "LOCK")); err != nil || len(b) != 0 {
		t.Errorf("the lock file after a clean exit: %q, %v", b, err)
	}
}
