package server

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// TestDeepSubqueries: queries whose subqueries nest deep are planned, or
// refused at the subquery too deep, in bounded work: the next client is
// served after them and SIGTERM stops the server. (Planning them used to
// take exponential time, holding every other client and the shutdown.)
func TestDeepSubqueries(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1/statements"
	srv := startServer(t, dir, addr)
	submitOK(t, api, "CREATE TABLE u (a INT) WITH ('connector' = 'datagen')")

	q := "SELECT a FROM u AS t0 WHERE a > 0"
	for i := 1; i <= 30; i++ {
		q = fmt.Sprintf("SELECT a FROM u AS t%d WHERE a IN (%s AND t%d.a = t%d.a)", i, q, i-1, i)
	}
	submitOK(t, api, "EXPLAIN "+q)

	deep := strings.Repeat("SELECT (", 65) + "SELECT 1" + strings.Repeat(")", 65)
	code, body := post(t, api, deep)
	col := float64(len(strings.Repeat("SELECT (", 64)) + len("SELECT ") + 1)
	if code != 400 || !strings.Contains(fmt.Sprint(body["error"]), "subqueries nested more than 64 levels deep") ||
		body["line"] != float64(1) || body["column"] != col {
		t.Fatalf("65 levels deep: got %d %v, want 400 at 1:%v", code, body, col)
	}

	code, body = post(t, api, "SHOW TABLES")
	if code != 200 {
		t.Fatalf("SHOW TABLES after them: %d %v", code, body)
	}
	srv.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("server after SIGTERM: %v\n%s", err, srv.Output())
	}
}
