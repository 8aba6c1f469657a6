package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func openTest(t *testing.T) *Server {
	t.Helper()
	log, err := NewLogger(io.Discard, "text")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// post sends body to POST /api/v1/statements with ctx as the request's
// context and returns the status and the decoded answer.
func post(t *testing.T, s *Server, ctx context.Context, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", "/api/v1/statements", strings.NewReader(body)).WithContext(ctx)
	rec := httptest.NewRecorder()
	s.http.Handler.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	return rec.Code, out
}

// TestStatementCanceledWithItsClient: a statement whose client has gone
// (its request's context canceled) stops planning with that error and
// leaves the session to the next client.
func TestStatementCanceledWithItsClient(t *testing.T) {
	s := openTest(t)
	defer s.Shutdown(context.Background())
	if code, out := post(t, s, context.Background(), "CREATE TABLE u (a INT) WITH ('connector' = 'datagen')"); code != 200 {
		t.Fatalf("CREATE TABLE: %d %v", code, out)
	}
	q := "SELECT a FROM u AS t0 WHERE a > 0"
	for i := 1; i <= 30; i++ {
		q = fmt.Sprintf("SELECT a FROM u AS t%d WHERE a IN (%s AND t%d.a = t%d.a)", i, q, i-1, i)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	code, out := post(t, s, gone, "EXPLAIN "+q)
	if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), context.Canceled.Error()) {
		t.Fatalf("got %d %v, want 400 and %q", code, out, context.Canceled)
	}
	if code, out := post(t, s, context.Background(), "SHOW TABLES"); code != 200 {
		t.Fatalf("SHOW TABLES after it: %d %v", code, out)
	}
}

// TestShutdownCancelsRequests: the context of every request is canceled
// when Shutdown begins, so that a statement being planned or a query being
// streamed does not hold the shutdown.
func TestShutdownCancelsRequests(t *testing.T) {
	s := openTest(t)
	if s.http.BaseContext == nil {
		t.Fatal("no base context for the requests that Shutdown could cancel")
	}
	ctx := s.http.BaseContext(s.ln) // what net/http derives each request's from
	if ctx.Err() != nil {
		t.Fatal("a request's context is canceled before Shutdown")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() == nil {
		t.Fatal("Shutdown left the requests' context live")
	}
}
