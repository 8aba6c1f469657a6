package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ScriptServer is a server process run by a script of the project, as a
// user would run it: `scripts/NAME resolve` installs it, `start PORT DIR
// [ARGS...]` starts it on 127.0.0.1:PORT with its files under DIR and
// prints what a client needs as NAME=value lines, `stop DIR` stops it. A
// watchdog process stops it when the test binary exits, however it
// exits. S3Server, Postgres and SchemaRegistry are ones.
type ScriptServer struct {
	Port int
	Dir  string
	// Env is what the script's start printed, as NAME=value.
	Env []string
	// Args are more options of the script's start, given at each start.
	Args   []string
	script string
	// check validates Env after each start.
	check func(*ScriptServer) error
}

// Var returns the value of the variable name of Env ("" if absent).
func (s *ScriptServer) Var(name string) string {
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (s *ScriptServer) name() string {
	return strings.TrimSuffix(s.script[strings.LastIndexByte(s.script, '/')+1:], ".sh")
}

// startScriptServer installs the server of scripts/<script> if needed
// (its resolve) and starts it on a free port with its files under dir;
// check validates what each start printed.
func startScriptServer(script, dir string, args []string, check func(*ScriptServer) error) (*ScriptServer, error) {
	path, err := moduleScript(script)
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command(path, "resolve").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s resolve: %v\n%s", path, err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken in between
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &ScriptServer{Port: port, Dir: dir, Args: args, script: path, check: check}
		if lastErr = s.Start(); lastErr == nil {
			if err := s.watchdog(); err != nil {
				s.Stop()
				return nil, err
			}
			return s, nil
		}
	}
	return nil, lastErr
}

// Start starts the server (again) on its port and directory.
func (s *ScriptServer) Start() error {
	cmd := exec.Command(s.script, append([]string{"start", strconv.Itoa(s.Port), s.Dir}, s.Args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s.sh start %d %s: %v\n%s", s.name(), s.Port, s.Dir, err, stderr.String())
	}
	s.Env = nil
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if !strings.Contains(line, "=") {
				return fmt.Errorf("%s.sh start printed %q, not NAME=value", s.name(), line)
			}
			s.Env = append(s.Env, line)
		}
	}
	if s.check != nil {
		if err := s.check(s); err != nil {
			return fmt.Errorf("%s.sh start: %w", s.name(), err)
		}
	}
	return nil
}

// Stop stops the server.
func (s *ScriptServer) Stop() error {
	if out, err := exec.Command(s.script, "stop", s.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("%s.sh stop %s: %v\n%s", s.name(), s.Dir, err, out)
	}
	return nil
}

// watchdog starts a process of its own session that stops the server
// when this process exits, so that a test binary killed at its timeout
// leaves no server behind.
func (s *ScriptServer) watchdog() error {
	cmd := exec.Command("bash", "-c", `tail --pid="$1" -f /dev/null; exec "$2" stop "$3"`, "watchdog",
		strconv.Itoa(os.Getpid()), s.script, s.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the watchdog of %s.sh: %v", s.name(), err)
	}
	return cmd.Process.Release()
}

// sharedServer is a server the tests of one test binary share, started
// on first use by get and stopped by stop.
type sharedServer[T interface{ Stop() error }] struct {
	once sync.Once
	dir  string
	v    T
	ok   bool
	err  error
}

// get returns the server, starting it on first use with start in a new
// temporary directory named after prefix; the test fails (never skips)
// when it cannot start. what names the server in messages; describe says
// where it runs.
func (s *sharedServer[T]) get(t testing.TB, what, prefix string, start func(dir string) (T, error), describe func(T) string) T {
	t.Helper()
	s.once.Do(func() {
		begin := time.Now()
		if s.dir, s.err = os.MkdirTemp("", prefix); s.err != nil {
			return
		}
		if s.v, s.err = start(s.dir); s.err == nil {
			s.ok = true
			fmt.Fprintf(os.Stderr, "%s %s, started in %v\n", what, describe(s.v), time.Since(begin).Round(time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatalf("starting %s: %v", what, s.err)
	}
	return s.v
}

// stop stops the server, if a test started it, and removes its files.
func (s *sharedServer[T]) stop() {
	if s.ok {
		if err := s.v.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
