package session

import "testing"

// TestIndexNotes checks the notes the shell prints for the no-op index
// statements on an in-memory table.
func TestIndexNotes(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs := execAll(t, s, "CREATE TABLE t (a INT)", "CREATE INDEX ti ON t (a)", "REINDEX t", "DROP INDEX ti")
	want := []string{
		"[INFO] Index ti accepted as a no-op: in-memory tables have no indexes, queries scan t.",
		"[INFO] REINDEX is a no-op: in-memory tables have no indexes.",
		"[INFO] Index ti dropped (it was a no-op).",
	}
	for i, w := range want {
		if got := rs[i+1].Message; got != w {
			t.Errorf("statement %d: note %q, want %q", i+2, got, w)
		}
	}
}
