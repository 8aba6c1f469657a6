//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// terminal is the streamsql shell running on a pseudo-terminal, as a user
// would see it.
type terminal struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File

	mu  sync.Mutex
	out bytes.Buffer
	// seen is how much of out expect has consumed.
	seen int
	done chan struct{}
}

// openPTY opens a pseudo-terminal pair of 30 lines of 100 columns.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		master.Close()
		return nil, nil, err
	}
	var n uint32
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		master.Close()
		return nil, nil, err
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	ws := [4]uint16{30, 100, 0, 0} // rows, columns, pixels
	if err := ioctl(slave, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// startTerminal starts streamsql with args on a new pseudo-terminal, as the
// leader of its own session so that Ctrl-C reaches it as SIGINT.
func startTerminal(t *testing.T, args ...string) *terminal {
	master, slave, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &terminal{t: t, cmd: cmd, master: master, done: make(chan struct{})}
	go term.read()
	t.Cleanup(func() {
		cmd.Process.Kill()
		master.Close()
	})
	return term
}

func (term *terminal) read() {
	defer close(term.done)
	buf := make([]byte, 4096)
	for {
		n, err := term.master.Read(buf)
		term.mu.Lock()
		term.out.Write(buf[:n])
		term.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// send types s.
func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := term.master.WriteString(s); err != nil {
		term.t.Fatal(err)
	}
}

// expect waits until the output after what earlier calls consumed holds
// want, and consumes it.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		term.mu.Lock()
		rest := term.out.String()[term.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			term.seen += i + len(want)
			term.mu.Unlock()
			return
		}
		term.mu.Unlock()
		if time.Now().After(deadline) {
			term.t.Fatalf("no %q in the terminal within 20s; it shows after the last match:\n%s", want, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShellOnATerminal(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	term := startTerminal(t, "--data-dir", dataDir)
	term.expect("Type 'help' for help")
	term.expect(prompt)

	term.send("CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\r")
	term.expect("[INFO] Table 'ticks' created.")
	term.expect(prompt)

	// A statement over two lines; an unbounded query redraws its table
	// until Ctrl-C cancels it, and the shell goes on.
	term.send("SELECT id\r")
	term.expect(continuationPrompt)
	term.send("FROM ticks;\r")
	term.expect("changes so far (Ctrl-C to stop)")
	term.send("\x03")
	term.expect("Query canceled.")
	term.expect(prompt)

	// Ctrl-C while typing drops the statement, even across lines.
	term.send("SELECT nothing,\r")
	term.expect(continuationPrompt)
	term.send("\x03")
	term.expect(prompt)

	// Tab completes keywords and table names.
	term.send("SHOW TABLE\t;\r")
	term.expect("| table name |")
	term.expect("| ticks      |")
	term.expect("1 row in set")
	term.send("DESCRIBE tic\t;\r")
	term.expect("| id   | BIGINT |")

	term.send("SELECT 6 * 7 AS answer;\r")
	term.expect("|     42 |")
	term.expect("1 row in set")

	term.send("SELECT * FROM nowhere;\r")
	term.expect("[ERROR] line 1:15: table or view 'nowhere' does not exist")

	term.send("\x04") // Ctrl-D
	select {
	case <-term.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the shell did not exit on Ctrl-D")
	}
	if err := term.cmd.Wait(); err != nil {
		t.Errorf("the shell exited with %v", err)
	}

	hist, err := os.ReadFile(filepath.Join(dataDir, historyName))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "history", string(hist), "SELECT id FROM ticks;\n", "SHOW TABLES;\n", "SELECT 6 * 7 AS answer;\n")
	if strings.Contains(string(hist), "nothing") {
		t.Errorf("the history holds the statement dropped by Ctrl-C:\n%s", hist)
	}
}

func TestShellOnATerminalEndsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	term := startTerminal(t, "--data-dir", filepath.Join(dir, "data"))
	term.expect(prompt)
	term.send("CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\r")
	term.expect(prompt)
	term.send("CREATE TABLE out (id BIGINT) WITH ('connector' = 'print');\r")
	term.expect(prompt)
	term.send("INSERT INTO out SELECT id FROM ticks;\r")
	term.expect("Job ID: ")
	term.expect("+I[") // the job prints while the prompt waits
	term.cmd.Process.Signal(syscall.SIGTERM)
	term.expect("[INFO] Stopping 1 running jobs...")
	if err := term.cmd.Wait(); err != nil {
		t.Errorf("the shell exited with %v", err)
	}
}

// TestShellCommandsOnATerminal: \d, \timing and \q; a line starting with
// an unknown backslash command is an error at once, not the start of a
// statement (no continuation prompt).
func TestShellCommandsOnATerminal(t *testing.T) {
	term := startTerminal(t, "--data-dir", filepath.Join(t.TempDir(), "data"))
	term.expect(prompt)
	term.send("CREATE TABLE ticks (id BIGINT, name STRING);\r")
	term.expect("[INFO] Table 'ticks' created.")
	term.expect(prompt)

	term.send("\\d\r")
	term.expect("| table name |")
	term.expect("| ticks      |")
	term.expect(prompt)
	term.send("\\d ticks\r")
	term.expect("| name | STRING |")
	term.expect(prompt)

	term.send("\\nope\r")
	term.expect("[ERROR] unknown shell command '\\nope'")
	term.expect(prompt) // not the continuation prompt: the shell waits for a new statement
	term.send("SELECT 6 * 7 AS answer;\r")
	term.expect("|     42 |")
	term.expect(prompt)

	term.send("\\timing\r")
	term.expect("Timing is on.")
	term.expect(prompt)
	term.send("SELECT 1 AS one;\r")
	term.expect("1 row in set")
	term.expect("Time: ")
	term.expect(" ms")
	term.expect(prompt)
	term.send("\\timing off\r")
	term.expect("Timing is off.")
	term.expect(prompt)
	term.mu.Lock()
	mark := term.seen
	term.mu.Unlock()
	term.send("SELECT 2 AS two;\r")
	term.expect("1 row in set")
	term.expect(prompt)
	term.mu.Lock()
	answer := term.out.String()[mark:term.seen]
	term.mu.Unlock()
	if strings.Contains(answer, "Time: ") {
		t.Errorf("\\timing off still prints the time:\n%s", answer)
	}

	term.send("\\q\r")
	select {
	case <-term.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the shell did not exit on \\q")
	}
	if err := term.cmd.Wait(); err != nil {
		t.Errorf("the shell exited with %v", err)
	}
}

// TestShellPrintRowsKeepThePrompt: the rows a print sink writes while the
// user types go above the prompt, which readline draws again under them
// with the text typed so far; the statement typed across the rows runs.
func TestShellPrintRowsKeepThePrompt(t *testing.T) {
	term := startTerminal(t, "--data-dir", filepath.Join(t.TempDir(), "data"))
	term.expect(prompt)
	term.send("CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\r")
	term.expect(prompt)
	term.send("CREATE TABLE out (id BIGINT) WITH ('connector' = 'print');\r")
	term.expect(prompt)
	term.send("INSERT INTO out SELECT id FROM ticks;\r")
	term.expect("Job ID: ")
	term.expect(prompt)
	term.send("SELECT 6 *")
	term.expect("SELECT 6 *") // echoed
	term.expect("+I[")        // a row printed after it, while the line is half typed
	term.expect(prompt + "SELECT 6 *")
	term.send(" 7 AS answer;\r")
	term.expect("|     42 |")
	term.send("\x04") // Ctrl-D
	term.expect("[INFO] Stopping 1 running jobs...")
	if err := term.cmd.Wait(); err != nil {
		t.Errorf("the shell exited with %v", err)
	}
}
