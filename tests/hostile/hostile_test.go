package hostile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/internal/testenv"
)

// binary is the streamsql binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamsql-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile tests:", err)
		os.Exit(1)
	}
	if binary, err = testenv.BuildStreamsql(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hostile tests:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runTimeout is the backstop of one run: a run still going then is
// killed and fails the test (a hang is a bug too). No case comes near it.
const runTimeout = 2 * time.Minute

// TestHostile runs testdata/. Command:
//
//	run     input: a script, as a Go text/template with the functions
//	        repeat S N (S N times) and list FORMAT FROM TO SEP (FORMAT
//	        formatted with each integer FROM..TO, joined by SEP); it is
//	        written to hostile.sql and run with --data-dir data in a
//	        directory of its own. Output: "exit N" and what the run
//	        printed, with the job ids replaced by <id>.
func TestHostile(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "run":
				return run(t, d)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

var funcs = template.FuncMap{
	"repeat": strings.Repeat,
	"list": func(format string, from, to int, sep string) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			if i > from {
				b.WriteString(sep)
			}
			fmt.Fprintf(&b, format, i)
		}
		return b.String()
	},
}

// crashed matches what the Go runtime prints when the process dies of a
// panic or a fatal error.
var crashed = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)

var jobID = regexp.MustCompile(`Job ID: [0-9a-f]+`)

func run(t *testing.T, d *datadriven.TestData) string {
	tmpl, err := template.New(d.Pos).Funcs(funcs).Parse(d.Input)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	var script strings.Builder
	if err := tmpl.Execute(&script, nil); err != nil {
		d.Fatalf(t, "%v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.sql")
	if err := os.WriteFile(file, []byte(script.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProc(t, runTimeout, nil, binary, "--data-dir", filepath.Join(dir, "data"), "-f", file)
	err = p.Wait()
	out := p.Output()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", d.Pos, err)
	}
	if crashed.MatchString(out) || (code != 0 && code != 1) {
		t.Errorf("%s: the run crashed (exit %d):\n%s", d.Pos, code, out)
	}
	out = strings.ReplaceAll(out, dir+string(filepath.Separator), "")
	out = jobID.ReplaceAllString(out, "Job ID: <id>")
	return fmt.Sprintf("exit %d\n%s", code, out)
}
