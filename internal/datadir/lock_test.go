package datadir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// helperEnv makes the test binary, started by a test, hold the lock of the
// directory it names until its standard input closes.
const helperEnv = "DATADIR_LOCK_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		l, err := Acquire(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTwoLocksInOneProcessConflict(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}

	_, err = Acquire(dir)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("second Acquire in the same process: %v, want a LockedError", err)
	}
	if le.Owner == nil || le.Owner.PID != os.Getpid() {
		t.Fatalf("the error names owner %+v, want pid %d", le.Owner, os.Getpid())
	}
	for _, want := range []string{"data directory " + dir + " is in use by process " + strconv.Itoa(os.Getpid()), ", started ", "another --data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The refused Acquire left the owner's file as it was.
	after, _ := os.ReadFile(filepath.Join(dir, FileName))
	if string(after) != string(before) {
		t.Errorf("a refused Acquire changed the lock file: %q, was %q", after, before)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	if err := (*Lock)(nil).Release(); err != nil {
		t.Fatalf("Release of nil: %v", err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func TestStaleLockFileIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	// What a process killed with kill -9 leaves: its content, no flock.
	stale := `{"pid":999999999,"host":"elsewhere","started":"2001-02-03T04:05:06Z","command":"streamsql -f old.sql"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if o := ReadOwner(dir); o == nil || o.PID != 999999999 {
		t.Fatalf("ReadOwner of the stale file: %+v", o)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire over a stale lock file: %v", err)
	}
	defer l.Release()
	o := ReadOwner(dir)
	if o == nil || o.PID != os.Getpid() || o.Started.Year() < 2020 || strings.Contains(o.Command, "old.sql") {
		t.Fatalf("the lock file was not rewritten for its new owner: %+v", o)
	}
}

// TestLockOfAnotherProcess holds the lock in a child process, checks that
// this one is refused with the child's pid, kills the child with SIGKILL
// and takes the lock.
func TestLockOfAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the child did not take the lock: %q", line)
	}

	_, err = Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.Owner == nil || le.Owner.PID != cmd.Process.Pid {
		t.Fatalf("Acquire while the child (pid %d) holds the lock: %v", cmd.Process.Pid, err)
	}
	if !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("the error does not name the child's pid: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The kernel released the dead child's lock; its content is still there.
	if o := ReadOwner(dir); o == nil || o.PID != cmd.Process.Pid {
		t.Fatalf("after kill -9 the file should still name the child: %+v", o)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the owner was killed: %v", err)
	}
	defer l.Release()
	if o := ReadOwner(dir); o == nil || o.PID != os.Getpid() {
		t.Fatalf("the lock file names %+v, want this process", o)
	}
}

// TestRemovedLockFileStillLocks removes LOCK while a child process holds
// the lock: a second Acquire is still refused, names the child, and leaves
// the directory as it was (no new LOCK).
func TestRemovedLockFileStillLocks(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the child did not take the lock: %q", line)
	}
	if err := os.Remove(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}

	_, err = Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("Acquire after LOCK was removed while the child (pid %d) holds it: %v", cmd.Process.Pid, err)
	}
	if le.Owner == nil || le.Owner.PID != cmd.Process.Pid || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("the error does not name the child (pid %d): %v", cmd.Process.Pid, err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Acquire created a lock file: %v", err)
	}

	// Once the child releases, the directory is free again.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the child released: %v", err)
	}
	l.Release()
}

func TestAcquireCreatesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireOfAnUnwritableDirectory(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	// A data directory that is a file: neither created nor locked.
	_, err := Acquire(file)
	if err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire of a file: %v", err)
	}
}
