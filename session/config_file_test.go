package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
		}
		d.Fatalf(t, "unknown directive %s", d.Cmd)
		return ""
	})
}
