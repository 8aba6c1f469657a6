package session

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// noCkptDDL is an aggregation's input without checkpointing: 2000 rows at
// 400 a second, into an in-memory table (which shows rows once a
// checkpoint or savepoint commits them).
const noCkptDDL = `CREATE TABLE gen (id BIGINT, k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2000',
	'rows-per-second' = '400', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2000',
	'fields.k.min' = '1', 'fields.k.max' = '7');
CREATE TABLE counts (k INT, c BIGINT, s BIGINT);`

// TestSavepointWithoutCheckpointing: STOP JOB ... WITH SAVEPOINT of a job
// submitted without checkpointing takes a savepoint all the same (as
// Flink does). The first savepoint fails (its _metadata cannot be
// renamed into place): the statement returns the error and the job keeps
// running, its state intact. The second succeeds and stops the job; the
// job's folder holds no checkpoint of it; restored from the savepoint, the
// counts continue exactly where they stopped.
func TestSavepointWithoutCheckpointing(t *testing.T) {
	var failed atomic.Bool
	s := openFaultSession(t, func(op fsutil.Op) error {
		if op.Kind == fsutil.OpRename && filepath.Base(op.Path) == checkpoint.MetadataFile && failed.CompareAndSwap(false, true) {
			return syscall.EIO
		}
		return nil
	})
	defer s.Close()
	execAll(t, s, noCkptDDL)
	insert := "INSERT INTO counts SELECT k, COUNT(*), SUM(id) FROM gen GROUP BY k"
	id := execAll(t, s, insert)[0].JobID
	waitRunning(t, s, "some rows", func(j JobInfo) bool { return j.RecordsIn >= 50 })

	err := execErr(t, s, "STOP JOB '"+id+"' WITH SAVEPOINT")
	mustContainAll(t, "the error", err.Error(), "savepoint of job "+id+" failed", "the job keeps running", "input/output error")
	if j := s.Jobs()[0]; j.Status != "RUNNING" {
		t.Fatalf("the job whose savepoint failed is %s, want RUNNING: %+v", j.Status, j)
	}
	in := s.Jobs()[0].RecordsIn
	waitRunning(t, s, "more rows after the failed savepoint", func(j JobInfo) bool { return j.RecordsIn > in })

	sp := stopWithSavepoint(t, s, id)
	if st := s.Jobs()[0].Status; st != "FINISHED" {
		t.Fatalf("after the savepoint the job is %s, want FINISHED (as Flink's job stopped with a savepoint)", st)
	}
	folder := filepath.Join(s.dataDir, "jobs", s.Jobs()[0].Name)
	if _, err := os.Stat(filepath.Join(folder, "checkpoints")); !os.IsNotExist(err) {
		t.Errorf("the job's folder holds checkpoints after a savepoint without checkpointing: %v", err)
	}
	if es, _ := os.ReadDir(filepath.Join(folder, savepointStaging)); len(es) > 0 {
		t.Errorf("the savepoint is left in the job's folder once copied: %v", es)
	}
	saved := execAll(t, s, "SELECT SUM(c) FROM counts")[0].Rows[0][0]
	if n, _ := saved.(int64); n <= 0 || n >= 2000 {
		t.Fatalf("the savepoint committed counts of %v rows, want some of the 2000", saved)
	}

	execAll(t, s, "SET 'execution.state-recovery.path' = '"+sp+"'", "SET 'table.dml-sync' = 'true'")
	rs := execAll(t, s, insert)
	if !strings.Contains(rs[0].Message, "from "+sp) {
		t.Fatalf("not restored from the savepoint: %q", rs[0].Message)
	}
	got := execAll(t, s, "SELECT COUNT(*), SUM(c), SUM(s) FROM counts")[0].Rows[0]
	if got[0] != int64(7) || got[1] != int64(2000) || got[2] != int64(2000*2001/2) {
		t.Fatalf("groups, rows, sum = %v, want 7, 2000, %d: rows lost or counted twice", got, 2000*2001/2)
	}
}
