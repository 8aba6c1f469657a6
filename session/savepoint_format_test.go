package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

// TestSavepointAcrossBackends: the golden job, run under one state backend,
// takes a NATIVE savepoint while it runs and is then stopped with a
// savepoint in the default format. The canonical savepoint restores under
// the other backend, into another parallelism, to exactly the tables a run
// from scratch produces; the native one is refused there with an error that
// names both backends and says to take a canonical savepoint.
func TestSavepointAcrossBackends(t *testing.T) {
	want := goldenFromScratch(t)
	for _, c := range []struct {
		from, to string
		par      string
	}{
		{"pebble", "hashmap", "3"},
		{"hashmap", "pebble", "1"},
	} {
		t.Run(c.from+"-to-"+c.to, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			native := filepath.Join(t.TempDir(), "native")
			runGoldenToSavepoint(t, dir, func(s *Session, id string) string {
				execAll(t, s, "SET 'state.savepoints.dir' = '"+native+"'")
				if _, err := s.Savepoint(context.Background(), id, checkpoint.FormatNative); err != nil {
					t.Fatal(err)
				}
				execAll(t, s, "SET 'state.savepoints.dir' = '"+filepath.Join(dir, "savepoints")+"'")
				return execAll(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")[0].Message
			}, "SET 'state.backend' = '"+c.from+"'")

			sp := filepath.Join(dir, "savepoints", goldenSavepointName(t, dir))
			md, err := checkpoint.Load(sp)
			if err != nil {
				t.Fatal(err)
			}
			if md.StateFormat() != checkpoint.FormatCanonical || md.Backend != c.from {
				t.Fatalf("STOP JOB ... WITH SAVEPOINT wrote format %s backend %q, want CANONICAL %s", md.StateFormat(), md.Backend, c.from)
			}
			checkGoldenRestore(t, dir, want, "SET 'state.backend' = '"+c.to+"'", "SET 'parallelism.default' = '"+c.par+"'")

			es, err := os.ReadDir(native)
			if err != nil || len(es) != 1 {
				t.Fatalf("native savepoints: %v %v", es, err)
			}
			nsp := filepath.Join(native, es[0].Name())
			if md, err := checkpoint.Load(nsp); err != nil || md.StateFormat() != checkpoint.FormatNative || md.Backend != c.from {
				t.Fatalf("the native savepoint: %+v %v", md, err)
			}
			s, err := Open(filepath.Join(t.TempDir(), "data"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			execAll(t, s, goldenDDL)
			execAll(t, s, goldenSettings...)
			execAll(t, s, "SET 'state.backend' = '"+c.to+"'", "SET 'execution.state-recovery.path' = '"+nsp+"'")
			_, err = s.Execute(context.Background(), goldenJob)
			wantMsg := "is in the native format of the '" + c.from + "' state backend and cannot be restored under '" + c.to + "'"
			if err == nil || !strings.Contains(err.Error(), wantMsg) ||
				!strings.Contains(err.Error(), "take a canonical savepoint") {
				t.Fatalf("restoring a native %s savepoint under %s: %v\nwant an error saying %q", c.from, c.to, err, wantMsg)
			}
		})
	}
}
