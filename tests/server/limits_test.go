package server

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// maxRequest is the server's limit on a request's SQL text (16 MiB).
const maxRequest = 16 << 20

// bigScript is a CREATE TABLE, then comment lines up to size bytes, then
// a second CREATE TABLE: cut anywhere in the comments, it still parses.
func bigScript(size int) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE first_t (a INT) WITH ('connector' = 'blackhole');\n")
	line := "-- " + strings.Repeat("x", 96) + "\n"
	for b.Len() < size-200 {
		b.WriteString(line)
	}
	b.WriteString("CREATE TABLE last_t (a INT) WITH ('connector' = 'blackhole');\n")
	return b.String()
}

// TestRequestTooLarge: a body over the server's 16 MiB is refused whole
// with 413 (none of its statements runs, the first included); one of
// exactly 16 MiB runs whole. `streamsql --server URL -f` refuses a file
// over the limit, saying so, and exits non-zero.
func TestRequestTooLarge(t *testing.T) {
	_, _, url := serve(t)
	big := bigScript(maxRequest + 1000)
	code, body := post(t, url+"/api/v1/statements", big)
	if code != 413 || !strings.Contains(body["error"].(string), "larger than 16 MiB") || !strings.Contains(body["error"].(string), "nothing was run") {
		t.Fatalf("a body over 16 MiB: %d %v", code, body)
	}
	if body["results"] != nil {
		t.Fatalf("a body over 16 MiB has results: %v", body)
	}
	code, body = post(t, url+"/api/v1/queries", "SELECT 1; "+big)
	if code != 413 {
		t.Fatalf("a query over 16 MiB: %d %v", code, body)
	}
	if tables := showTables(t, url); strings.Contains(tables, "first_t") || strings.Contains(tables, "last_t") {
		t.Fatalf("a statement of a refused body ran: %s", tables)
	}

	file := filepath.Join(t.TempDir(), "big.sql")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	client := testenv.StartProc(t, time.Minute, nil, bin, "--server", url, "-f", file)
	if err := client.Wait(); err == nil || !strings.Contains(client.Output(), "big.sql: the file is too large") {
		t.Fatalf("streamsql --server -f with a file over 16 MiB: %v\n%s", err, client.Output())
	}
	if tables := showTables(t, url); strings.Contains(tables, "first_t") || strings.Contains(tables, "last_t") {
		t.Fatalf("a statement of a refused file ran: %s", tables)
	}

	// The shell (statements from stdin) refuses a line it cannot hold
	// rather than end as if the input ended there.
	sh := exec.Command(bin, "--server", url)
	sh.Stdin = strings.NewReader("SHOW TABLES;\nSELECT '" + strings.Repeat("x", maxRequest) + "';\nSHOW TABLES;\n")
	if out, err := sh.CombinedOutput(); err == nil || !strings.Contains(string(out), "[ERROR] reading the statements") {
		t.Fatalf("the shell given a line over 16 MiB: %v\n%.2000s", err, out)
	}

	// At the limit, every statement runs.
	exact := bigScript(maxRequest)
	exact += strings.Repeat(" ", maxRequest-len(exact))
	if code, body := post(t, url+"/api/v1/statements", exact); code != 200 {
		t.Fatalf("a body of exactly 16 MiB: %d %v", code, body)
	}
	if tables := showTables(t, url); !strings.Contains(tables, "first_t") || !strings.Contains(tables, "last_t") {
		t.Fatalf("after a body of 16 MiB, the tables are: %s", tables)
	}
}

// showTables is the text of SHOW TABLES's result.
func showTables(t *testing.T, url string) string {
	t.Helper()
	code, body := post(t, url+"/api/v1/statements", "SHOW TABLES")
	if code != 200 {
		t.Fatalf("SHOW TABLES: %d %v", code, body)
	}
	var b strings.Builder
	for _, r := range body["results"].([]any) {
		rows, _ := r.(map[string]any)["rows"].([]any) // absent when empty
		for _, row := range rows {
			for _, v := range row.([]any) {
				b.WriteString(v.(string) + "\n")
			}
		}
	}
	return b.String()
}

// TestErrorsDoNotEchoHugeText: an error that quotes a statement, an
// option or a value cuts each line it sends at a few hundred bytes, with
// an ellipsis and the count of bytes left out.
func TestErrorsDoNotEchoHugeText(t *testing.T) {
	_, _, url := serve(t)
	huge := strings.Repeat("a", 100000)
	cast := "SELECT CAST('" + huge + "' AS INT)"
	column := "SELECT " + huge + " FROM (SELECT 1 AS a) AS v"
	for _, tc := range []struct{ path, q string }{
		{"/api/v1/statements", cast},
		{"/api/v1/queries", cast},
		{"/api/v1/statements", column},
		{"/api/v1/queries", column},
		{"/api/v1/statements", "SET '" + huge + "' = 'x'"},
		{"/api/v1/statements", "SET 'pipeline.name' = '" + strings.Repeat("a\x01", 50000) + "'"},
	} {
		{
			path, q := tc.path, tc.q
			resp, err := http.Post(url+path, "text/plain", strings.NewReader(q))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// A query that fails as it runs ends its JSON lines with the error.
			lines := strings.Split(strings.TrimSpace(string(data)), "\n{")
			var last struct{ Error string }
			if err := json.Unmarshal([]byte("{"+strings.TrimPrefix(lines[len(lines)-1], "{")), &last); err != nil || last.Error == "" {
				t.Fatalf("POST %s %.60s...: %d %.500s", path, q, resp.StatusCode, data)
			}
			if len(last.Error) > 1000 || !strings.Contains(last.Error, "… (") || !strings.Contains(last.Error, " bytes more)") {
				t.Errorf("POST %s %.60s...: the error is %d bytes: %.600s", path, q, len(last.Error), last.Error)
			}
		}
	}
}
