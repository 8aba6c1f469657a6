package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

func TestFileError(t *testing.T) {
	stmts, err := sql.Parse("CREATE TABLE t (id BIGINT);\n\n  SELECT 1;")
	if err != nil {
		t.Fatal(err)
	}
	sel := stmts[1]
	posErr := &sql.Error{Pos: sql.Pos{Line: 3, Col: 15}, Msg: "column 'x' not found", Hint: "did you mean 'y'?"}
	tests := []struct {
		name string
		st   sql.Statement
		err  error
		want string
	}{
		{"an sql.Error at its position", sel, posErr, "job.sql:3:15: column 'x' not found (did you mean 'y'?)"},
		{"a wrapped sql.Error keeps the wrapper's words", sel, fmt.Errorf("job 1 failed: %w", posErr),
			"job.sql:3:15: job 1 failed: column 'x' not found (did you mean 'y'?)"},
		{"an sql.Error without position falls back to the statement", sel, &sql.Error{Msg: "boom"}, "job.sql:3:3: line 0:0: boom"},
		{"another error at the statement", sel, errors.New("disk full"), "job.sql:3:3: disk full"},
		{"no statement", nil, errors.New("disk full"), "job.sql: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fileError("job.sql", tt.st, tt.err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	jobs := []session.JobInfo{
		{Status: "RUNNING", RecordsIn: 10, RecOut: 8},
		{Status: "FINISHED", RecordsIn: 5, RecOut: 5},
		{Status: "RUNNING", RecordsIn: 1, RecOut: 0},
	}
	want := "[INFO] 2 of 3 jobs running, 16 records in, 13 records out (Ctrl-C stops them)"
	if got := progress(jobs); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStatusLineStaysBelowOutput(t *testing.T) {
	var term bytes.Buffer
	s := &statusLine{w: &term}
	out := s.wrap(&term)
	s.show("working")
	fmt.Fprint(out, "row 1\n")
	fmt.Fprint(out, "partial ")
	s.show("still working") // must not cut the partial line
	fmt.Fprint(out, "line\n")
	s.clear()
	want := "\r\x1b[Kworking" +
		"\r\x1b[Krow 1\nworking" +
		"\r\x1b[Kpartial " +
		"line\nstill working" +
		"\r\x1b[K"
	if term.String() != want {
		t.Errorf("got %q\nwant %q", term.String(), want)
	}
}

// TestProgressLineOffTerminal runs -f with stderr on a pipe: a job of 12
// seconds gets a progress line of its own after 10 seconds (the counters of
// SHOW JOBS: some of its rows read, not all), and none with --no-progress.
func TestProgressLineOffTerminal(t *testing.T) {
	const rows = 2400 // 12 s at 200 rows/s
	file := filepath.Join(t.TempDir(), "slow.sql")
	os.WriteFile(file, []byte(fmt.Sprintf(`CREATE TABLE slow (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'number-of-rows' = '%d');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id FROM slow;
`, rows)), 0o644)
	line := regexp.MustCompile(`(?m)^\[INFO\] 1 of 1 jobs running, (\d+) records in, (\d+) records out \(Ctrl-C stops them\)$`)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"default", nil, 1},
		{"no-progress", []string{"--no-progress"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := runBinary(t, dir, "", append([]string{"--data-dir", filepath.Join(dir, "data"), "-f", file}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			lines := line.FindAllStringSubmatch(r.stderr, -1)
			if len(lines) != tc.want || strings.Contains(r.stderr, "\x1b[") {
				t.Fatalf("want %d progress lines (plain, every 10s), stderr:\n%q", tc.want, r.stderr)
			}
			for _, l := range lines {
				in, _ := strconv.Atoi(l[1])
				out, _ := strconv.Atoi(l[2])
				if in <= 0 || in >= rows || out > in {
					t.Errorf("progress after 10s of %d rows at 200/s: %d in, %d out", rows, in, out)
				}
			}
		})
	}
}
