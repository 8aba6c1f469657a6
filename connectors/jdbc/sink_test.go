package jdbc_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	_ "github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/jdbc"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/session"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPG()
	os.Exit(code)
}

// TestDataDriven runs testdata/* against a PostgreSQL server of
// scripts/postgres.sh, checked with psql. "$URL" stands for its
// jdbc:postgresql:// URL, "$USER" and "$PASSWORD" for its credentials.
// Commands:
//
//	psql                  input: SQL run by psql; prints its rows (a|b)
//	psql-until            psql again until it prints the expected output
//	                      (what the sink writes by itself)
//	table name=T [pk=a,b] input: the schema, then key=value options;
//	                      CREATE TABLE through a catalog (the connector's
//	                      Validate)
//	open table=T [subtask=I] [parallelism=P] [job=J]
//	write table=T [subtask=I]   input: rows, +I[1, a] / -D[1, a]
//	precommit/commit table=T id=N [subtask=I]
//	restore table=T id=N [subtask=I] [parallelism=P] [job=J]
//	                      a new instance (the old one closed without
//	                      committing, as a killed process leaves it),
//	                      given the handle of checkpoint N as a restore does
//	finish/close table=T [subtask=I]
//	lock-timeout d=D      how long an exactly-once transaction waits for
//	                      rows a pending prepared one holds (default 30 s)
//	sql                   input: statements through a session (one data
//	                      dir per file); waits for the jobs and prints
//	                      their errors
func TestDataDriven(t *testing.T) {
	pg := testenv.PG(t)
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{pg: pg, sinks: map[string]exec.Sink{}, handles: map[string][]byte{}}
		var err error
		if h.cat, err = catalog.Open(""); err != nil {
			t.Fatal(err)
		}
		h.sess, err = session.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer h.sess.Close()
		defer func() {
			for _, s := range h.sinks {
				s.Close()
			}
			for _, r := range h.restore {
				r()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			s, err := h.run(d)
			if err != nil {
				s += "error: " + h.unsubst(err.Error()) + "\n"
			}
			if s == "" {
				return "ok\n"
			}
			return s
		})
	})
}

type harness struct {
	pg      *testenv.Postgres
	cat     *catalog.Catalog
	sess    *session.Session
	sinks   map[string]exec.Sink
	handles map[string][]byte
	restore []func()
}

func (h *harness) subst(s string) string {
	return strings.NewReplacer("$URL", h.pg.JDBCURL(), "$USER", h.pg.Var("PGUSER"), "$PASSWORD", h.pg.Var("PGPASSWORD")).Replace(s)
}

func (h *harness) unsubst(s string) string {
	return strings.ReplaceAll(s, h.pg.JDBCURL(), "$URL")
}

func arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return def
}

func intArg(d *datadriven.TestData, key string, def int) int {
	n, err := strconv.Atoi(arg(d, key, strconv.Itoa(def)))
	if err != nil {
		d.Fatalf(nil, "%s: %v", key, err)
	}
	return n
}

func (h *harness) spec(d *datadriven.TestData) (exec.TableSpec, error) {
	tb, ok := h.cat.Table(arg(d, "table", ""))
	if !ok {
		return exec.TableSpec{}, fmt.Errorf("no table %q", arg(d, "table", ""))
	}
	return exec.TableSpec{Table: tb.Name, Schema: tb.Columns, Options: tb.Options, PrimaryKey: tb.PrimaryKey,
		Subtask: intArg(d, "subtask", 0), Parallelism: intArg(d, "parallelism", 1), Mem: memory.DefaultAllocator,
		Job: arg(d, "job", "job"), OperatorID: "sink", CheckpointInterval: time.Second, ExactlyOnce: true}, nil
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	ctx := context.Background()
	switch d.Cmd {
	case "psql":
		return h.pg.Psql(d.Input)
	case "lock-timeout":
		d, err := time.ParseDuration(arg(d, "d", ""))
		if err != nil {
			return "", err
		}
		h.restore = append(h.restore, jdbc.SetLockTimeout(d))
		return "", nil
	case "psql-until":
		// What another goroutine writes: polled until psql prints the
		// expected output (or for a minute, then what it printed last).
		var out string
		var err error
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if out, err = h.pg.Psql(d.Input); err != nil || out == d.Expected {
				break
			}
		}
		return out, err
	case "table":
		lines := strings.Split(h.subst(d.Input), "\n")
		schema, err := conntest.ParseSchema(lines[0])
		if err != nil {
			return "", err
		}
		opts, err := conntest.ParseOptions(lines[1:])
		if err != nil {
			return "", err
		}
		tb := &catalog.Table{Name: arg(d, "name", "t"), Columns: schema, Connector: opts["connector"], Options: opts}
		if pk := arg(d, "pk", ""); pk != "" {
			tb.PrimaryKey = strings.Split(pk, ",")
		}
		return "", h.cat.CreateTable(tb, false)
	case "sql":
		if _, err := h.sess.Execute(ctx, h.subst(d.Input)); err != nil {
			return "", err
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := h.sess.WaitJobs(wctx); err != nil {
			return "", err
		}
		var out string
		for _, j := range h.sess.Jobs() {
			if j.Err != nil {
				out += "job error: " + h.unsubst(j.Err.Error()) + "\n"
			}
		}
		h.sess.StopJobs()
		return out, nil
	}
	spec, err := h.spec(d)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s/%d", spec.Table, spec.Subtask)
	snk := h.sinks[key]
	if d.Cmd != "open" && d.Cmd != "restore" && snk == nil {
		return "", fmt.Errorf("sink %s is not open", key)
	}
	id := intArg(d, "id", 0)
	switch d.Cmd {
	case "open", "restore":
		if snk != nil {
			snk.Close()
			delete(h.sinks, key)
		}
		if snk, err = registry.Sink("jdbc", spec); err != nil {
			return "", err
		}
		h.sinks[key] = snk
		if err := snk.Open(ctx); err != nil {
			return "", err
		}
		if d.Cmd == "restore" {
			return "", snk.Commit(ctx, int64(id), h.handles[fmt.Sprintf("%s/%d", key, id)])
		}
		return "", nil
	case "write":
		b, err := conntest.ParseBatch(spec.Schema, strings.Split(d.Input, "\n"))
		if err != nil {
			return "", err
		}
		defer b.Rec.Release()
		return "", snk.Write(ctx, b)
	case "precommit":
		hd, err := snk.PreCommit(ctx, int64(id))
		h.handles[fmt.Sprintf("%s/%d", key, id)] = hd
		return "", err
	case "commit":
		return "", snk.Commit(ctx, int64(id), h.handles[fmt.Sprintf("%s/%d", key, id)])
	case "finish":
		return "", snk.Finish(ctx)
	case "close":
		delete(h.sinks, key)
		return "", snk.Close()
	}
	return "", fmt.Errorf("unknown command %q", d.Cmd)
}
