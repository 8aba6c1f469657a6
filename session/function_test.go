package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/testenv"
)

// udfModule copies the example module name (examples/udf) to dir and
// returns its path.
func udfModule(t *testing.T, dir, name string) string {
	t.Helper()
	built, err := testenv.UDFModules()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(built, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rowsText is r's rows, a line each, values one space apart.
func rowsText(r *Result) string {
	var b strings.Builder
	for _, row := range r.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteString(" ")
			}
			if v == nil {
				b.WriteString("NULL")
				continue
			}
			fmt.Fprint(&b, v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestFunctionCatalog: a function persists in the data dir as a table does
// and a temporary one does not; DESCRIBE FUNCTION shows the module and its
// signature; a module changed since CREATE FUNCTION is an error where the
// function is called.
func TestFunctionCatalog(t *testing.T) {
	modules, data := t.TempDir(), t.TempDir()
	cc := udfModule(t, modules, "count_char")
	sl := udfModule(t, modules, "str_len")
	s, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, s,
		"CREATE FUNCTION count_char AS '"+cc+"' LANGUAGE WASM WITH ('call-timeout' = '1 min')",
		"CREATE TEMPORARY FUNCTION str_len AS '"+sl+"' LANGUAGE WASM")
	if got, want := rowsText(execAll(t, s, "SHOW USER FUNCTIONS")[0]), "count_char\nstr_len\n"; got != want {
		t.Errorf("SHOW USER FUNCTIONS: %q, want %q", got, want)
	}
	s.Close()

	s, err = Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := rowsText(execAll(t, s, "SHOW USER FUNCTIONS")[0]), "count_char\n"; got != want {
		t.Errorf("SHOW USER FUNCTIONS after a restart: %q, want %q", got, want)
	}
	if got, want := rowsText(execAll(t, s, "SELECT count_char('cocoa', 'c')")[0]), "2\n"; got != want {
		t.Errorf("count_char after a restart: %q, want %q", got, want)
	}
	want := "name count_char\nkind user\ntemporary false\nlanguage WASM\nmodule " + cc + "\n" +
		"signature (STRING, STRING) RETURNS BIGINT CALLED ON NULL INPUT\nmemory-limit 256 mb\ncall-timeout 1 min\nignore-errors false\n"
	if got := rowsText(execAll(t, s, "DESCRIBE FUNCTION count_char")[0]); got != want {
		t.Errorf("DESCRIBE FUNCTION:\n%s\nwant:\n%s", got, want)
	}

	// Another module in the function's file.
	udfModule(t, modules, "str_len")
	if err := os.Rename(filepath.Join(modules, "str_len.wasm"), cc); err != nil {
		t.Fatal(err)
	}
	_, err = s.Execute(context.Background(), "SELECT count_char('cocoa', 'c')")
	if err == nil || !strings.Contains(err.Error(), "line 1:8: function count_char: its module "+cc+" changed since CREATE FUNCTION") {
		t.Errorf("a changed module: %v", err)
	}
}

// TestFunctionAllowedPaths: a session restricted to allowed directories
// takes modules from under them only.
func TestFunctionAllowedPaths(t *testing.T) {
	root := t.TempDir()
	allowed, outside := filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	os.MkdirAll(allowed, 0o755)
	os.MkdirAll(outside, 0o755)
	in, out := udfModule(t, allowed, "str_len"), udfModule(t, outside, "str_len")
	s, err := Open(filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetAllowedPaths([]string{allowed}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Execute(context.Background(), "CREATE FUNCTION f AS '"+out+"' LANGUAGE WASM")
	if err == nil || !strings.Contains(err.Error(), "line 1:22: path not allowed: the module = '"+out+"'") {
		t.Errorf("a module outside: %v", err)
	}
	_, err = s.Execute(context.Background(), "CREATE FUNCTION f AS '"+allowed+"/../outside/str_len.wasm' LANGUAGE WASM")
	if err == nil || !strings.Contains(err.Error(), "path not allowed") {
		t.Errorf("a module reached by '..': %v", err)
	}
	execAll(t, s, "CREATE FUNCTION f AS '"+in+"' LANGUAGE WASM")
}

// TestFunctionIgnoreErrors: with 'ignore-errors', a row whose call panics
// or traps is NULL, the others are computed, and DESCRIBE FUNCTION counts
// the rows that failed.
func TestFunctionIgnoreErrors(t *testing.T) {
	modules := t.TempDir()
	trap, crash := udfModule(t, modules, "trap"), udfModule(t, modules, "crash")
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s,
		"CREATE FUNCTION trap AS '"+trap+"' LANGUAGE WASM WITH ('ignore-errors' = 'true')",
		"CREATE FUNCTION crash AS '"+crash+"' LANGUAGE WASM WITH ('ignore-errors' = 'true')")
	q := "SELECT x, trap(x), crash(x) FROM (VALUES (1, 0), (2, 1), (3, 2), (4, 3)) AS t(n, x) ORDER BY n"
	if got, want := rowsText(execAll(t, s, q)[0]), "0 NULL 0\n1 100 1\n2 50 2\n3 33 3\n"; got != want {
		t.Errorf("no row fails:\n%s", got)
	}
	q = "SELECT x, trap(x), crash(x) FROM (VALUES (1, 5), (2, 0), (3, -1), (4, 0), (5, -2), (6, 4)) AS t(n, x) ORDER BY n"
	if got, want := rowsText(execAll(t, s, q)[0]), "5 20 5\n0 NULL 0\n-1 -100 NULL\n0 NULL 0\n-2 -50 NULL\n4 25 4\n"; got != want {
		t.Errorf("rows that fail:\n%s\nwant:\n%s", got, want)
	}
	for name, want := range map[string]string{"trap": "3", "crash": "2"} {
		got := ""
		for _, row := range execAll(t, s, "DESCRIBE FUNCTION "+name)[0].Rows {
			if row[0] == "failed rows" {
				got = fmt.Sprint(row[1])
			}
		}
		if got != want {
			t.Errorf("%s: failed rows %q, want %q", name, got, want)
		}
	}
}
