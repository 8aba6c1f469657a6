package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// S3Bucket is the bucket scripts/s3-server.sh creates.
const S3Bucket = "streamsql"

// S3Server is an S3-compatible server (versitygw) started with
// scripts/s3-server.sh on 127.0.0.1:Port, its objects, log and pid file
// under Dir, with the bucket S3Bucket. A watchdog process stops it when
// the test binary exits, however it exits.
type S3Server struct {
	Port     int
	Dir      string
	Endpoint string // http://127.0.0.1:Port
	// Env is what the script printed: AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_REGION and S3_ENDPOINT, as NAME=value.
	Env    []string
	script string
}

// Var returns the value of the variable name of Env ("" if absent).
func (s *S3Server) Var(name string) string {
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// StartS3Server installs the server if needed (scripts/s3-server.sh
// resolve: a few minutes the first time) and starts it on a free port
// with its data under dir.
func StartS3Server(dir string) (*S3Server, error) {
	script, err := moduleScript("s3-server.sh")
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command(script, "resolve").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s resolve: %v\n%s", script, err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken in between
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &S3Server{Port: port, Dir: dir, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), script: script}
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

// Start starts the server (again) on its port and directory: a restart
// keeps every object.
func (s *S3Server) Start() error {
	cmd := exec.Command(s.script, "start", strconv.Itoa(s.Port), s.Dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("s3-server.sh start %d %s: %v\n%s", s.Port, s.Dir, err, stderr.String())
	}
	s.Env = nil
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if !strings.Contains(line, "=") {
				return fmt.Errorf("s3-server.sh start printed %q, not NAME=value", line)
			}
			s.Env = append(s.Env, line)
		}
	}
	if got := s.Var("S3_ENDPOINT"); got != s.Endpoint {
		return fmt.Errorf("s3-server.sh start printed S3_ENDPOINT=%q, want %q", got, s.Endpoint)
	}
	return nil
}

// Stop stops the server (SIGTERM).
func (s *S3Server) Stop() error {
	if out, err := exec.Command(s.script, "stop", s.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("s3-server.sh stop %s: %v\n%s", s.Dir, err, out)
	}
	return nil
}

// watchdog starts a process of its own session that stops the server
// when this process exits, so that a test binary killed at its timeout
// leaves no server behind.
func (s *S3Server) watchdog() error {
	cmd := exec.Command("bash", "-c", `tail --pid="$1" -f /dev/null; exec "$2" stop "$3"`, "watchdog",
		strconv.Itoa(os.Getpid()), s.script, s.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the S3 server's watchdog: %v", err)
	}
	return cmd.Process.Release()
}

// shared is the S3 server the tests of one test binary share, started on
// first use; StopS3 stops it.
var shared struct {
	once sync.Once
	dir  string
	s    *S3Server
	err  error
}

// S3 returns the S3 server of the test binary, starting it on first use;
// the test fails when it cannot start. Tests share its bucket: each
// writes under a prefix of its own. A package that uses it stops it at
// exit: TestMain(m) { code := m.Run(); testenv.StopS3(); os.Exit(code) }
// (the watchdog stops it anyway when the binary exits).
func S3(t testing.TB) *S3Server {
	t.Helper()
	shared.once.Do(func() {
		start := time.Now()
		if shared.dir, shared.err = os.MkdirTemp("", "streamsql-s3-"); shared.err != nil {
			return
		}
		shared.s, shared.err = StartS3Server(shared.dir)
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "S3 server on %s (data in %s), started in %v\n", shared.s.Endpoint, shared.dir,
				time.Since(start).Round(time.Millisecond))
		}
	})
	if shared.err != nil {
		t.Fatalf("starting the S3 server: %v", shared.err)
	}
	return shared.s
}

// StopS3 stops the shared S3 server, if a test started it, and removes
// its data.
func StopS3() {
	if shared.s != nil {
		if err := shared.s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// moduleScript finds scripts/<name> of this module.
func moduleScript(name string) (string, error) {
	mod, err := apacheScript() // scripts/apache-kafka.sh of the module
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(mod), name), nil
}
