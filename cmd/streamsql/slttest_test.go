package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/sql"
)

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args    []string
		pos     []string
		verbose bool
	}{
		{[]string{"a.slt"}, []string{"a.slt"}, false},
		{[]string{"-v", "a.slt", "b.slt"}, []string{"a.slt", "b.slt"}, true},
		{[]string{"a.slt", "-v", "b.slt"}, []string{"a.slt", "b.slt"}, true},
		{[]string{"a.slt", "--", "-v"}, []string{"a.slt", "-v"}, false},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		v := fs.Bool("v", false, "")
		pos, err := parseInterleaved(fs, tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(pos, tt.pos) || *v != tt.verbose {
			t.Errorf("%q: got %q, -v %v; want %q, -v %v", tt.args, pos, *v, tt.pos, tt.verbose)
		}
	}
}

// TestTestSummarizesCauses runs a file whose records fail for several
// causes and checks the summary that ends the report.
func TestTestSummarizesCauses(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, "", "test", "--data-dir", dir, testdata(t, "causes.slt"))
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := `2 passed, 7 failed
7 failed:
    2  query failed: a frame that does not hold the current row is not supported
    2  query failed: column '…' not found
    1  query result mismatch
    1  statement failed: column '…' not found
    1  statement succeeded, but an error was expected
(-v prints each failure)
`
	if !strings.HasSuffix(r.stdout, want) {
		t.Errorf("the report does not end with the causes:\n%s\nwant it to end with:\n%s", r.stdout, want)
	}
}

func TestFailureCause(t *testing.T) {
	posErr := &sql.Error{Pos: sql.Pos{Line: 3, Col: 7}, Msg: "cannot cast 'abc' to INT", Hint: "use TRY_CAST"}
	tests := []struct {
		f    slt.Failure
		want string
	}{
		{slt.Failure{Message: "query failed", Err: posErr}, "query failed: cannot cast '…' to INT"},
		{slt.Failure{Message: "statement failed", Err: fmt.Errorf("job 1a2b failed: %w", posErr)}, "statement failed: job 1a2b failed: cannot cast '…' to INT"},
		{slt.Failure{Message: "query result mismatch (3 rows, expected 2)"}, "query result mismatch"},
		{slt.Failure{Message: "system command failed", Err: errors.New("exit status 1: sh: `x`: not found\nmore")}, "system command failed: exit status 1: sh: '…': not found"},
	}
	for _, tt := range tests {
		if got := failureCause(tt.f); got != tt.want {
			t.Errorf("failureCause(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestReportCausesListsTheMostFrequent(t *testing.T) {
	var fs []slt.Failure
	for i := range maxCauses + 2 {
		for range i + 1 {
			fs = append(fs, slt.Failure{Message: fmt.Sprintf("cause %02d", i)})
		}
	}
	var b bytes.Buffer
	reportCauses(&b, []slt.FileResult{{Failures: fs[:10]}, {Failures: fs[10:]}}, true)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != fmt.Sprintf("%d failed:", len(fs)) || lines[1] != "    12  cause 11" || lines[10] != "     3  cause 02" {
		t.Errorf("unexpected summary:\n%s", b.String())
	}
	if last := lines[len(lines)-1]; last != "     3  of 2 other causes" {
		t.Errorf("last line %q, want the 3 failures of the 2 causes left out", last)
	}
}
