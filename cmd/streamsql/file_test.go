package main

import (
	"bytes"
	"errors"
	"fmt"
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
