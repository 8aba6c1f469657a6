package sqllogic

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
)

// TestSuites runs every testdata/*.slt file; each file is a subtest.
func TestSuites(t *testing.T) {
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suites found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			res := slt.RunFile(context.Background(), f, slt.Options{
				NewDB: func(string) (slt.DB, error) { return session.NewSLTDB("") },
				Out:   os.Stderr,
				// A job that keeps failing restarts forever (exponential-delay, as
				// Flink); the timeout turns that into a failure of its record.
				Timeout: 2 * time.Minute,
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
