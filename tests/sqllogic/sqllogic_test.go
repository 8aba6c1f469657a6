package sqllogic

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
)

// TestSuites runs every testdata/*.slt file; each file is a subtest. A
// file whose header has lines "# rerun with: <statement>" runs once more
// per such line, on a session that ran the statement first (say, SET
// 'table.exec.batch-size' = '1', so that every change is a batch of its
// own), and must give the same results.
func TestSuites(t *testing.T) {
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suites found: %v", err)
	}
	for _, f := range files {
		reruns, err := rerunStatements(f)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := suiteVars(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, setup := range append([]string{""}, reruns...) {
			name := filepath.Base(f)
			if setup != "" {
				name += " with " + setup
			}
			t.Run(name, func(t *testing.T) {
				res := slt.RunFile(context.Background(), f, slt.Options{
					NewDB: func(string) (slt.DB, error) {
						db, err := session.NewSLTDB("")
						if err == nil && setup != "" {
							err = db.Exec(context.Background(), setup)
						}
						return db, err
					},
					Out: os.Stderr,
					// A job that keeps failing restarts forever (exponential-delay, as
					// Flink); the timeout turns that into a failure of its record.
					Timeout: 2 * time.Minute,
					Vars:    vars,
				})
				for _, fl := range res.Failures {
					t.Error(fl.String())
				}
				if res.Passed == 0 {
					t.Errorf("%s: nothing passed", f)
				}
			})
		}
	}
}

// rerunStatements returns the statements of a suite's "# rerun with:"
// lines, read from the comment lines that open the file.
func rerunStatements(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if s, ok := strings.CutPrefix(line, "# rerun with:"); ok {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out, nil
}

// suiteVars are the variables of a suite's "control substitution on":
// $UDF_DIR, the directory of the example functions (examples/udf) built
// into WebAssembly modules, for the suites that name it (built once).
func suiteVars(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(b), "$UDF_DIR") {
		return nil, nil
	}
	dir, err := testenv.UDFModules()
	if err != nil {
		return nil, err
	}
	return map[string]string{"UDF_DIR": dir}, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveUDFModules()
	os.Exit(code)
}
