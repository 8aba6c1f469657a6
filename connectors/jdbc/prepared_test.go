package jdbc_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/registry"
	exe "github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/types"
)

// TestExactlyOnceNeedsPreparedTransactions: on a server with
// max_prepared_transactions = 0 (PostgreSQL's default), an exactly-once
// sink fails at its start with an error that says so and how to change
// it; an at-least-once one opens.
func TestExactlyOnceNeedsPreparedTransactions(t *testing.T) {
	dir, err := os.MkdirTemp("", "streamsql-pg-noprepare-") // the server's user must reach it
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pg, err := testenv.StartPostgres(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	pg.MustPsql(t, "ALTER SYSTEM SET max_prepared_transactions = 0")
	pg.MustPsql(t, "CREATE TABLE t (id bigint PRIMARY KEY)")
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(pg.MustPsql(t, "SHOW max_prepared_transactions")); got != "0" {
		t.Fatalf("max_prepared_transactions = %s after the restart, want 0", got)
	}
	ctx := context.Background()
	for _, g := range []string{"at-least-once", "exactly-once"} {
		spec := exe.TableSpec{Table: "t", Schema: types.Schema{{Name: "id", Type: types.BigIntType}}, PrimaryKey: []string{"id"},
			Parallelism: 1, Mem: memory.DefaultAllocator, Job: "j", OperatorID: "sink", Options: map[string]string{
				"connector": "jdbc", "url": pg.JDBCURL(), "table-name": "t", "username": pg.Var("PGUSER"),
				"password": pg.Var("PGPASSWORD"), "sink.delivery-guarantee": g}}
		s, err := registry.Sink("jdbc", spec)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Open(ctx)
		s.Close()
		switch {
		case g == "at-least-once" && err != nil:
			t.Errorf("%s: %v", g, err)
		case g == "exactly-once" && (err == nil || !strings.Contains(err.Error(), "max_prepared_transactions = 0: set it in postgresql.conf")):
			t.Errorf("%s: want the error of max_prepared_transactions = 0, got %v", g, err)
		default:
			t.Logf("%s: %v", g, err)
		}
	}
}
