package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// boxedLines are the lines of the boxed tables in a run's output.
func boxedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") || strings.HasSuffix(l, " rows in set") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestQuickstartRerun runs examples/quickstart.sql twice on one data
// directory: the second run prints the same counts as the first, one row
// per app, and writes as many changes.
func TestQuickstartRerun(t *testing.T) {
	dir := t.TempDir()
	file, err := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart.sql"))
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	written := regexp.MustCompile(`finished: [0-9]+ rows written`)
	var first []string
	var firstWritten string
	for run := 1; run <= 2; run++ {
		r := runBinary(t, dir, "", "--data-dir", data, "-f", file)
		if r.code != 0 {
			t.Fatalf("run %d: exit code %d\nstdout:\n%s\nstderr:\n%s", run, r.code, r.stdout, r.stderr)
		}
		lines := boxedLines(r.stdout)
		if len(lines) < 7 || lines[len(lines)-1] != "5 rows in set" {
			t.Fatalf("run %d: want the counts of 5 apps, got:\n%s", run, r.stdout)
		}
		w := written.FindString(r.stdout)
		if run == 1 {
			first, firstWritten = lines, w
			continue
		}
		if strings.Join(lines, "\n") != strings.Join(first, "\n") {
			t.Errorf("the second run's table differs from the first's:\n%s\nfirst:\n%s", strings.Join(lines, "\n"), strings.Join(first, "\n"))
		}
		if w != firstWritten {
			t.Errorf("the second run wrote %q, the first %q", w, firstWritten)
		}
	}
}
