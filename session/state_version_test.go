package session

import (
	"context"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
)

// TestIncompatibleSourceState: a checkpoint whose source position is of a
// format version this build does not read is not restored as a zero
// position (which would read the input again from its start): the submit
// fails, naming the table and the versions.
func TestIncompatibleSourceState(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	execAll(t, s, ckptDDL, "SET 'restart-strategy.type' = 'none'")
	insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "2 checkpoints", func(j JobInfo) bool { return j.Checkpoints.Completed >= 2 })
	execAll(t, s, "STOP JOB '"+id+"'")
	done, _, err := checkpoint.NewStorage(jobCheckpoints(t, s, dir, "counts")).Completed()
	if err != nil || len(done) == 0 {
		t.Fatalf("no completed checkpoint: %v", err)
	}
	// Every checkpoint's source position, as a newer build would write it.
	changed := 0
	for _, md := range done {
		for _, o := range md.Operators {
			for i := range o.Subtasks {
				st := &o.Subtasks[i]
				if strings.Contains(o.Name, "Source") && len(st.Inline) > 2 {
					st.Inline = append(checkpoint.AppendStateHeader(nil, 9), st.Inline[2:]...)
					changed++
				}
			}
		}
		if err := checkpoint.WriteMetadata(md.Dir, md); err != nil {
			t.Fatal(err)
		}
	}
	if changed == 0 {
		t.Fatalf("no source position in the checkpoints: %+v", done[0].Operators)
	}
	_, err = s.Execute(context.Background(), insert)
	want := "incompatible state: datagen table gen: state format version 9; this build reads versions 1 to 1"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("resubmit: %v; want an error saying %q", err, want)
	}
}
