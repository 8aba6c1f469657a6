package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/sql"
)

// TestConfigFile runs testdata/config: configuration files read by a
// session, SET and RESET over them, and SET's listing of where each value
// comes from. Directives (paths in the output are $DIR, the test's
// directory):
//
//	file name=N      write the input to $DIR/N
//	open [config=N]  close the session, open one on a fresh data dir and
//	                 read the configuration file $DIR/N; without config,
//	                 the data dir's own (with datadir=N, $DIR/N is first
//	                 copied there as config.yaml); "ok", what was read, or
//	                 the error
//	exec             the input's statements on the session: each result,
//	                 or the error
//	parallelism      EXPLAIN of the input's query: the parallelisms of its
//	                 physical plan ("parallelism=N", each once)
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	var s *Session
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	opened := 0
	clean := func(text string) string { return strings.ReplaceAll(text, dir, "$DIR") }
	datadriven.RunTest(t, "testdata/config", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "file":
			var name string
			d.ScanArgs(t, "name", &name)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(d.Input), 0o644); err != nil {
				t.Fatal(err)
			}
			return ""
		case "open":
			if s != nil {
				s.Close()
				s = nil
			}
			opened++
			data := filepath.Join(dir, fmt.Sprintf("data%d", opened))
			if d.HasArg("datadir") {
				var name string
				d.ScanArgs(t, "datadir", &name)
				text, err := os.ReadFile(filepath.Join(dir, name))
				if err == nil {
					err = os.MkdirAll(data, 0o755)
				}
				if err == nil {
					err = os.WriteFile(filepath.Join(data, ConfigFileName), text, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if s, err = Open(data); err != nil {
				t.Fatal(err)
			}
			path := ""
			if d.HasArg("config") {
				var name string
				d.ScanArgs(t, "config", &name)
				path = filepath.Join(dir, name)
			}
			read, err := s.ReadConfig(path)
			if err != nil {
				return clean("error: " + err.Error() + "\n")
			}
			if read == "" {
				return "ok: no configuration file\n"
			}
			return clean("ok: read " + read + "\n")
		case "exec":
			var b strings.Builder
			stmts, err := sql.Parse(d.Input)
			if err != nil {
				return err.Error() + "\n"
			}
			for _, st := range stmts {
				r, err := s.ExecuteStatement(context.Background(), st)
				if err != nil {
					b.WriteString("error: " + err.Error() + "\n")
					continue
				}
				writeResult(&b, r)
			}
			return clean(b.String())
		case "parallelism":
			rs, err := s.Execute(context.Background(), "EXPLAIN "+d.Input)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			seen := map[string]bool{}
			var b strings.Builder
			for _, m := range parallelismRe.FindAllString(rs[0].Text, -1) {
				if !seen[m] {
					seen[m] = true
					b.WriteString(m + "\n")
				}
			}
			return b.String()
		}
		d.Fatalf(t, "unknown directive %s", d.Cmd)
		return ""
	})
}

var parallelismRe = regexp.MustCompile(`parallelism=[0-9]+`)

// TestConfigFileOnce: ReadConfig is refused a second time, and a
// SetDefault (streamsql test's) is listed as a default, over the file.
func TestConfigFileOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("table.dml-sync: false\nparallelism.default: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ReadConfig(file); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadConfig(file); err == nil || !strings.Contains(err.Error(), "was read already") {
		t.Errorf("a second ReadConfig: %v", err)
	}
	if err := s.SetDefault(OptDMLSync, "true"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, want := range map[string]string{OptDMLSync: "true default", OptParallelism: "2 " + file + ":2"} {
		if got := s.effective()[key] + " " + s.sourceLocked(key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

// TestDocsConfigExamples: every ```yaml block of README.md and docs/ is a
// configuration file ReadConfig takes.
func TestDocsConfigExamples(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	n := 0
	for _, doc := range append(docs, "../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(data), -1) {
			n++
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(m[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Open("")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ReadConfig(file); err != nil {
				t.Errorf("%s: the example's %v", doc, err)
			}
			s.Close()
		}
	}
	if n == 0 {
		t.Fatal("no yaml example found in README.md or docs/")
	}
}
