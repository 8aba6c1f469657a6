package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openWith opens a server on data with o's other fields set as a test's.
func openWith(t *testing.T, o Options) (*Server, error) {
	t.Helper()
	log, err := NewLogger(io.Discard, "text")
	if err != nil {
		t.Fatal(err)
	}
	o.HTTPAddr, o.Logger = "127.0.0.1:0", log
	return Open(o)
}

// listing is what SET lists on s: key -> "value from source".
func listing(t *testing.T, s *Server) map[string]string {
	t.Helper()
	code, out := post(t, s, context.Background(), "SET;")
	if code != 200 {
		t.Fatalf("SET: %d %v", code, out)
	}
	rows := out["results"].([]any)[0].(map[string]any)["rows"].([]any)
	m := map[string]string{}
	for _, r := range rows {
		row := r.([]any)
		m[fmt.Sprint(row[0])] = fmt.Sprintf("%v from %v", row[1], row[2])
	}
	return m
}

// TestConfigFileIsEveryClientsBase: the data dir's config.yaml is the
// base of the server's session: listed with its file and line, overridden
// by a client's SET (kept across a restart in options.json, and still a
// SET after the restart resumed a job), and what a RESET returns to.
func TestConfigFileIsEveryClientsBase(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join(data, "config.yaml")
	if err := os.WriteFile(file, []byte("execution:\n  checkpointing:\n    interval: 10 s\nparallelism.default: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openWith(t, Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	want := func(s *Server, key, value string) {
		t.Helper()
		if got := listing(t, s)[key]; got != value {
			t.Errorf("SET lists %s as %q, want %q", key, got, value)
		}
	}
	want(s, "execution.checkpointing.interval", "10 s from "+file+":3")
	want(s, "parallelism.default", "2 from "+file+":4")
	want(s, "table.dml-sync", "false from default")
	if code, out := post(t, s, context.Background(), "SET 'parallelism.default' = '3';"); code != 200 {
		t.Fatalf("SET: %d %v", code, out)
	}
	want(s, "parallelism.default", "3 from SET")
	// A running job, resumed by the next start under the same options.
	if code, out := post(t, s, context.Background(), `CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM ticks;`); code != 200 {
		t.Fatalf("INSERT: %d %v", code, out)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	s, err = openWith(t, Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if jobs := s.sess.Jobs(); len(jobs) != 1 || jobs[0].Status != "RUNNING" {
		t.Fatalf("the job was not resumed: %+v", jobs)
	}
	want(s, "parallelism.default", "3 from SET")
	want(s, "execution.checkpointing.interval", "10 s from "+file+":3")
	want(s, "table.dml-sync", "false from default")
	if code, out := post(t, s, context.Background(), "RESET 'parallelism.default';"); code != 200 {
		t.Fatalf("RESET: %d %v", code, out)
	}
	want(s, "parallelism.default", "2 from "+file+":4")
}

// TestBadConfigFileStopsTheServer: a configuration file with an unknown
// key, a bad value, or a directory outside the allowed paths stops Open
// with an error at its line; a file named that is absent too.
func TestBadConfigFileStopsTheServer(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"parallelism.default: 2\nno.such.option: 1\n", "config.yaml:2: unknown option 'no.such.option'"},
		{"parallelism.default: 0\n", "config.yaml:1: option 'parallelism.default' must be an integer between 1 and"},
		{"state.savepoints.dir: /etc/sp\n", "config.yaml:1: path not allowed: 'state.savepoints.dir' = '/etc/sp'"},
		{"", "no such file"},
	} {
		data := t.TempDir()
		file := filepath.Join(dir, "config.yaml")
		if tc.text != "" {
			if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			file = filepath.Join(dir, "absent.yaml")
		}
		s, err := openWith(t, Options{DataDir: data, ConfigFile: file})
		if err == nil {
			s.Shutdown(context.Background())
			t.Errorf("%q: the server started", tc.text)
			continue
		}
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want ErrBadOptions and %q", tc.text, err, tc.want)
		}
		// The data dir is free again.
		s, err = openWith(t, Options{DataDir: data})
		if err != nil {
			t.Fatalf("the data dir after the failed start: %v", err)
		}
		s.Shutdown(context.Background())
	}
}
