package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobFolder: every job name is one folder directly under jobs/, never
// jobs/ itself or a folder above it; the names other file systems refuse
// are cleaned, and a name too long for a file name is cut and ends with a
// hash of the whole name.
func TestJobFolder(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	for _, tc := range []struct{ name, want string }{
		{".", "_"},
		{"..", "__"},
		{"...", "..."},
		{"./x", "._x"},
		{"../x", ".._x"},
		{"../../x", ".._.._x"},
		{"a/b", "a_b"},
		{"/", "_"},
		{"//", "__"},
		{`..\..`, ".._.."},
		{"", "_"},
		{"mine", "mine"},
		{"insert-into_a,b-0a1b2c3d", "insert-into_a_b-0a1b2c3d"},
		{long, ""},
	} {
		got := JobFolder(tc.name)
		if tc.want != "" && got != tc.want {
			t.Errorf("JobFolder(%q) = %q, want %q", tc.name, got, tc.want)
		}
		jobs := filepath.Join("data", "jobs")
		p := filepath.Join(jobs, got)
		if filepath.Dir(p) != jobs || filepath.Base(p) != got || len(got) > maxFolderName {
			t.Errorf("JobFolder(%q) = %q: %s is not one folder under %s", tc.name, got, p, jobs)
		}
	}
	a, b := JobFolder(long), JobFolder(long+"x")
	if a == b || !strings.HasPrefix(a, strings.Repeat("é", 50)) {
		t.Errorf("long names: %q and %q", a, b)
	}
}

// TestFreshJobNamedDotDot: a job named '..' or '.' started with --fresh
// removes only its own folder: the catalog and the other jobs' folders
// stay.
func TestFreshJobNamedDotDot(t *testing.T) {
	for _, name := range []string{"..", ".", "", "./other", "../jobs/other"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.Fresh = true
			execAll(t, s, `CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10',
				'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10')`,
				"CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole')",
				"SET 'table.dml-sync' = 'true'", "SET 'execution.checkpointing.interval' = '1 h'",
				"SET 'pipeline.name' = 'other'", "INSERT INTO out SELECT id FROM src")
			before := listDir(t, dir)
			others := listDir(t, filepath.Join(dir, "jobs"))
			execAll(t, s, "SET 'pipeline.name' = '"+name+"'", "INSERT INTO out SELECT id FROM src")
			for _, f := range before {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("after a fresh job named %q: %v", name, err)
				}
			}
			for _, f := range others {
				if _, err := os.Stat(filepath.Join(dir, "jobs", f, "plan.json")); err != nil {
					t.Errorf("after a fresh job named %q: job %s: %v", name, f, err)
				}
			}
			if got := listDir(t, filepath.Join(dir, "jobs")); len(got) != len(others)+1 {
				t.Errorf("after a fresh job named %q, jobs/ holds %v, want %v and the job's own folder", name, got, others)
			}
			execAll(t, s, "SELECT * FROM src") // the catalog is still there
		})
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestJobNameControlCharacters: 'pipeline.name' refuses a name with a
// control character or invalid UTF-8, at SET and where the options are
// replaced whole (the server's resumed jobs), with a message that names
// the option and shows the character escaped; the name set before stays.
func TestJobNameControlCharacters(t *testing.T) {
	s, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, "SET 'pipeline.name' = 'kept'")
	for name, shown := range map[string]string{"a\x00b": `a\x00b`, "two\nlines": `two\nlines`, "a\tb": `a\tb`,
		"\x1b[31mred": `\x1b[31mred`, "a\x7fb": `a\x7fb`, "a\u0085b": `a\u0085b`, "a\xffb": `a\xffb`} {
		err := execErr(t, s, "SET 'pipeline.name' = '"+name+"'")
		mustContainAll(t, "the error", err.Error(), "option 'pipeline.name' must be a name in UTF-8 without control characters", "got '"+shown+"'")
		if strings.ContainsAny(err.Error(), "\x00\n\t\x1b\x7f\xff") {
			t.Errorf("the error carries the raw name: %q", err.Error())
		}
		if err := s.ReplaceOptions(map[string]string{OptPipelineName: name}); err == nil || !strings.Contains(err.Error(), "'pipeline.name'") {
			t.Errorf("ReplaceOptions(%q): %v", name, err)
		}
		if got := s.Settings().PipelineName; got != "kept" {
			t.Fatalf("pipeline.name is %q after a refused SET, want 'kept'", got)
		}
	}
}
