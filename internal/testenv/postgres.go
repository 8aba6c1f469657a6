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

// Postgres is a PostgreSQL server started with scripts/postgres.sh on
// 127.0.0.1:Port, its cluster, log and socket under Dir. A watchdog
// process stops it when the test binary exits, however it exits.
type Postgres struct {
	Port int
	Dir  string
	// Env is what the script printed: PGHOST, PGPORT, PGUSER, PGPASSWORD,
	// PGDATABASE and JDBC_URL, as NAME=value.
	Env []string
	// Args are more options of scripts/postgres.sh start, given at each
	// start (--max-prepared-transactions N).
	Args   []string
	script string
}

// Var returns the value of the variable name of Env ("" if absent).
func (p *Postgres) Var(name string) string {
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// JDBCURL is the server's jdbc:postgresql:// URL, for a jdbc table's 'url'.
func (p *Postgres) JDBCURL() string { return p.Var("JDBC_URL") }

// StartPostgres installs PostgreSQL if needed (scripts/postgres.sh
// resolve: apt-get) and starts a server on a free port with its cluster
// under dir.
func StartPostgres(dir string, args ...string) (*Postgres, error) {
	script, err := moduleScript("postgres.sh")
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
		p := &Postgres{Port: port, Dir: dir, Args: args, script: script}
		if lastErr = p.Start(); lastErr == nil {
			if err := p.watchdog(); err != nil {
				p.Stop()
				return nil, err
			}
			return p, nil
		}
	}
	return nil, lastErr
}

// Start starts the server (again) on its port and directory: a restart
// keeps every table and prepared transaction.
func (p *Postgres) Start() error {
	cmd := exec.Command(p.script, append([]string{"start", strconv.Itoa(p.Port), p.Dir}, p.Args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("postgres.sh start %d %s: %v\n%s", p.Port, p.Dir, err, stderr.String())
	}
	p.Env = nil
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if !strings.Contains(line, "=") {
				return fmt.Errorf("postgres.sh start printed %q, not NAME=value", line)
			}
			p.Env = append(p.Env, line)
		}
	}
	if got := p.Var("PGPORT"); got != strconv.Itoa(p.Port) {
		return fmt.Errorf("postgres.sh start printed PGPORT=%q, want %d", got, p.Port)
	}
	for _, v := range []string{"PGHOST", "PGUSER", "PGDATABASE", "JDBC_URL"} {
		if p.Var(v) == "" {
			return fmt.Errorf("postgres.sh start printed no %s", v)
		}
	}
	return nil
}

// Stop stops the server (a fast shutdown).
func (p *Postgres) Stop() error {
	if out, err := exec.Command(p.script, "stop", p.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("postgres.sh stop %s: %v\n%s", p.Dir, err, out)
	}
	return nil
}

// Psql runs sql with psql, the independent client, as the script's user
// in its database, and returns what it printed: unaligned, tuples only
// (-At), columns separated by '|', one row a line. An error of the server
// fails the run (ON_ERROR_STOP) and is returned with psql's output.
func (p *Postgres) Psql(sql string) (string, error) {
	cmd := exec.Command("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql)
	cmd.Env = append(os.Environ(), p.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql -c %q: %v\n%s", sql, err, stderr.String())
	}
	return string(out), nil
}

// MustPsql is Psql that fails t on an error.
func (p *Postgres) MustPsql(t testing.TB, sql string) string {
	t.Helper()
	out, err := p.Psql(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// watchdog starts a process of its own session that stops the server
// when this process exits, so that a test binary killed at its timeout
// leaves no server behind.
func (p *Postgres) watchdog() error {
	cmd := exec.Command("bash", "-c", `tail --pid="$1" -f /dev/null; exec "$2" stop "$3"`, "watchdog",
		strconv.Itoa(os.Getpid()), p.script, p.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the PostgreSQL server's watchdog: %v", err)
	}
	return cmd.Process.Release()
}

// sharedServer is a PostgreSQL server the tests of one test binary
// share, started on first use; StopPG stops it.
type sharedServer struct {
	once sync.Once
	dir  string
	p    *Postgres
	err  error
}

var (
	sharedPG          sharedServer
	sharedNoPreparePG sharedServer
)

func (s *sharedServer) get(t testing.TB, args ...string) *Postgres {
	t.Helper()
	s.once.Do(func() {
		start := time.Now()
		if s.dir, s.err = os.MkdirTemp("", "streamsql-pg-"); s.err != nil {
			return
		}
		s.p, s.err = StartPostgres(s.dir, args...)
		if s.err == nil {
			fmt.Fprintf(os.Stderr, "PostgreSQL on %s (cluster in %s%s), started in %v\n", s.p.JDBCURL(), s.dir,
				strings.Join(append([]string{""}, args...), " "), time.Since(start).Round(time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatalf("starting PostgreSQL: %v", s.err)
	}
	return s.p
}

func (s *sharedServer) stop() {
	if s.p != nil {
		if err := s.p.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// PG returns the PostgreSQL server of the test binary (with prepared
// transactions: max_prepared_transactions = 64), starting it on first
// use; the test fails (never skips) when PostgreSQL cannot be installed
// or started. Tests share its database: each uses tables of its own. A
// package that uses it stops it at exit: TestMain(m) { code := m.Run();
// testenv.StopPG(); os.Exit(code) } (the watchdog stops it anyway when
// the binary exits).
func PG(t testing.TB) *Postgres {
	t.Helper()
	return sharedPG.get(t)
}

// PGNoPrepare is PG's like, a second server of the test binary with
// max_prepared_transactions = 0 (PostgreSQL's default: no two-phase
// commit), as most servers run.
func PGNoPrepare(t testing.TB) *Postgres {
	t.Helper()
	return sharedNoPreparePG.get(t, "--max-prepared-transactions", "0")
}

// StopPG stops the shared PostgreSQL servers that tests started, and
// removes their clusters.
func StopPG() {
	sharedPG.stop()
	sharedNoPreparePG.stop()
}
