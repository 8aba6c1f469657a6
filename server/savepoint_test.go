package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

// call sends POST path with an empty body and returns the status and the
// decoded answer.
func call(t *testing.T, s *Server, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.http.Handler.ServeHTTP(rec, httptest.NewRequest("POST", path, nil))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("POST %s: %s: %v", path, rec.Body, err)
	}
	return rec.Code, out
}

// TestSavepointFormatType: the savepoint calls take Flink's formatType,
// CANONICAL by default or NATIVE, which the savepoint's _metadata records;
// an unknown one, or one on a stop without a savepoint, is a 400 that
// says so, and the job keeps running.
func TestSavepointFormatType(t *testing.T) {
	s := openTest(t)
	defer s.Shutdown(context.Background())
	code, out := post(t, s, context.Background(), `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100', 'fields.k.min' = '1', 'fields.k.max' = '5');
CREATE TABLE c (k INT, n BIGINT) WITH ('connector' = 'blackhole');
SET 'state.backend' = 'pebble';
INSERT INTO c SELECT k, COUNT(*) FROM g GROUP BY k;`)
	if code != 200 {
		t.Fatalf("statements: %d %v", code, out)
	}
	results := out["results"].([]any)
	id := results[len(results)-1].(map[string]any)["job_id"].(string)
	format := func(body map[string]any) checkpoint.Format {
		t.Helper()
		md, err := checkpoint.Load(fmt.Sprint(body["savepoint"]))
		if err != nil {
			t.Fatal(err)
		}
		if md.Backend != "pebble" {
			t.Errorf("savepoint backend %q, want pebble", md.Backend)
		}
		return md.StateFormat()
	}
	for _, c := range []struct {
		query string
		want  checkpoint.Format
	}{{"", checkpoint.FormatCanonical}, {"?formatType=NATIVE", checkpoint.FormatNative}, {"?formatType=canonical", checkpoint.FormatCanonical}} {
		code, out := call(t, s, "/api/v1/jobs/"+id+"/savepoints"+c.query)
		if code != 200 {
			t.Fatalf("savepoint%s: %d %v", c.query, code, out)
		}
		if got := format(out); got != c.want {
			t.Errorf("savepoint%s is %s, want %s", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/savepoints?formatType=ROCKSDB", "formatType: unknown savepoint format 'ROCKSDB' (CANONICAL or NATIVE)"},
		{"/savepoints?formatType=", "formatType: unknown savepoint format '' (CANONICAL or NATIVE)"},
		{"/stop?formatType=NATIVE", "formatType is the format of a savepoint: give it with savepoint=true"},
	} {
		code, out := call(t, s, "/api/v1/jobs/"+id+c.path)
		if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), c.want) {
			t.Errorf("%s: %d %v, want 400 saying %q", c.path, code, out, c.want)
		}
	}
	code, out = call(t, s, "/api/v1/jobs/"+id+"/stop?savepoint=true&formatType=native")
	if code != 200 || out["status"] != "FINISHED" {
		t.Fatalf("stop with a native savepoint: %d %v", code, out)
	}
	if got := format(out); got != checkpoint.FormatNative {
		t.Errorf("stop with a native savepoint wrote %s", got)
	}
}
