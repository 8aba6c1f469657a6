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
	Env    []string
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
func StartPostgres(dir string) (*Postgres, error) {
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
		p := &Postgres{Port: port, Dir: dir, script: script}
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
	cmd := exec.Command(p.script, "start", strconv.Itoa(p.Port), p.Dir)
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

// sharedPG is the PostgreSQL server the tests of one test binary share,
// started on first use; StopPG stops it.
var sharedPG struct {
	once sync.Once
	dir  string
	p    *Postgres
	err  error
}

// PG returns the PostgreSQL server of the test binary, starting it on
// first use; the test fails (never skips) when PostgreSQL cannot be
// installed or started. Tests share its database: each uses tables of its
// own. A package that uses it stops it at exit: TestMain(m) { code :=
// m.Run(); testenv.StopPG(); os.Exit(code) } (the watchdog stops it
// anyway when the binary exits).
func PG(t testing.TB) *Postgres {
	t.Helper()
	sharedPG.once.Do(func() {
		start := time.Now()
		if sharedPG.dir, sharedPG.err = os.MkdirTemp("", "streamsql-pg-"); sharedPG.err != nil {
			return
		}
		sharedPG.p, sharedPG.err = StartPostgres(sharedPG.dir)
		if sharedPG.err == nil {
			fmt.Fprintf(os.Stderr, "PostgreSQL on %s (cluster in %s), started in %v\n", sharedPG.p.JDBCURL(), sharedPG.dir,
				time.Since(start).Round(time.Millisecond))
		}
	})
	if sharedPG.err != nil {
		t.Fatalf("starting PostgreSQL: %v", sharedPG.err)
	}
	return sharedPG.p
}

// StopPG stops the shared PostgreSQL server, if a test started it, and
// removes its cluster.
func StopPG() {
	if sharedPG.p != nil {
		if err := sharedPG.p.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if sharedPG.dir != "" {
		os.RemoveAll(sharedPG.dir)
	}
}
