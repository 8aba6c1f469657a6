package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Postgres is a PostgreSQL server started with scripts/postgres.sh on
// 127.0.0.1:Port, its cluster, log and socket under Dir. Its Env is
// PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE and JDBC_URL; its Args
// more options of the script's start (--max-prepared-transactions N);
// Start starts it again, keeping every table and prepared transaction.
type Postgres struct {
	*ScriptServer
}

// JDBCURL is the server's jdbc:postgresql:// URL, for a jdbc table's 'url'.
func (p *Postgres) JDBCURL() string { return p.Var("JDBC_URL") }

// StartPostgres installs PostgreSQL if needed (scripts/postgres.sh
// resolve: apt-get) and starts a server on a free port with its cluster
// under dir.
func StartPostgres(dir string, args ...string) (*Postgres, error) {
	ss, err := startScriptServer("postgres.sh", dir, args, func(s *ScriptServer) error {
		if got := s.Var("PGPORT"); got != strconv.Itoa(s.Port) {
			return fmt.Errorf("printed PGPORT=%q, want %d", got, s.Port)
		}
		for _, v := range []string{"PGHOST", "PGUSER", "PGDATABASE", "JDBC_URL"} {
			if s.Var(v) == "" {
				return fmt.Errorf("printed no %s", v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Postgres{ss}, nil
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

var sharedPG sharedServer[*Postgres]

func startPG(t testing.TB, s *sharedServer[*Postgres], args ...string) *Postgres {
	t.Helper()
	return s.get(t, "PostgreSQL", "streamsql-pg-", func(dir string) (*Postgres, error) { return StartPostgres(dir, args...) },
		func(p *Postgres) string {
			return fmt.Sprintf("on %s (cluster in %s%s)", p.JDBCURL(), p.Dir, strings.Join(append([]string{""}, args...), " "))
		})
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
	return startPG(t, &sharedPG)
}

// StopPG stops the shared PostgreSQL servers that tests started, and
// removes their clusters.
func StopPG() {
	sharedPG.stop()
}
