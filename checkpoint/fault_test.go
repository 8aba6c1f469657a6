package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/fsutil"
)

// TestMetadataWriteFaults: whichever step of writing _metadata fails (its
// write, its fsync, its rename into place, the directory's fsync), the
// checkpoint fails with the cause, counts against the tolerable failures,
// leaves no checkpoint behind (its directory is discarded, so no restore
// takes it), and the next checkpoint completes; past the tolerated
// failures the job fails with ErrTooManyFailures wrapping the cause.
func TestMetadataWriteFaults(t *testing.T) {
	for _, kind := range []fsutil.OpKind{fsutil.OpWrite, fsutil.OpSync, fsutil.OpRename, fsutil.OpSyncDir} {
		t.Run(kind.String(), func(t *testing.T) {
			root := t.TempDir()
			var failing atomic.Int64 // failures left to inject
			t.Cleanup(fsutil.Install(root, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
				base := filepath.Base(op.Path)
				if op.Kind == kind && (base == MetadataFile || base == MetadataFile+".inprogress" || kind == fsutil.OpSyncDir) && failing.Add(-1) >= 0 {
					return syscall.EIO
				}
				return nil
			})))
			var jobErr atomic.Pointer[error]
			var reported atomic.Int64
			task := Task{Operator: "op", Name: "Source", Parallelism: 1}
			st := NewStorage(root)
			c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: st,
				Options: Options{Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 1, TolerableFailures: 1},
				Tasks:   []Task{task},
				Fail:    func(err error) { jobErr.CompareAndSwap(nil, &err) },
				Failed: func(id int64, err error, inRow int) {
					if !errors.Is(err, syscall.EIO) {
						t.Errorf("checkpoint %d failed with %v, want EIO", id, err)
					}
					reported.Add(1)
				},
			})
			checkpoint := func() (*Metadata, error) {
				p, err := c.trigger(false, true)
				if err != nil {
					return nil, err
				}
				c.Ack(p.id, task, SubtaskState{Inline: []byte{0xa7, 1, 42}})
				r := <-p.done
				return r.md, r.err
			}
			if _, err := checkpoint(); err != nil {
				t.Fatalf("checkpoint 1: %v", err)
			}
			failing.Store(1)
			if _, err := checkpoint(); !errors.Is(err, syscall.EIO) {
				t.Fatalf("checkpoint 2 with a failing %s: %v, want EIO", kind, err)
			}
			if _, err := os.Stat(st.Dir(2)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the failed checkpoint's directory is still there: %v", err)
			}
			done, warnings, err := st.Completed()
			if err != nil || len(done) != 1 || done[0].ID != 1 || len(warnings) != 0 {
				t.Fatalf("completed checkpoints after the failure: %v %v %v, want checkpoint 1 only", done, warnings, err)
			}
			if jobErr.Load() != nil || reported.Load() != 1 || c.Stats().Failed != 1 {
				t.Fatalf("after one failure (1 tolerated): job error %v, %d reported, stats %+v", jobErr.Load(), reported.Load(), c.Stats())
			}
			md, err := checkpoint()
			if err != nil || md.ID != 3 {
				t.Fatalf("checkpoint 3: %v, %v", md, err)
			}
			if got, err := ReadMetadata(st.Dir(3)); err != nil || string(got.Operator("op").Subtasks[0].Inline) != "\xa7\x01\x2a" {
				t.Fatalf("checkpoint 3 reads back as %+v, %v", got, err)
			}
			failing.Store(2)
			for id := 4; id <= 5; id++ {
				if _, err := checkpoint(); !errors.Is(err, syscall.EIO) {
					t.Fatalf("checkpoint %d: %v, want EIO", id, err)
				}
			}
			if p := jobErr.Load(); p == nil || !errors.Is(*p, ErrTooManyFailures) || !errors.Is(*p, syscall.EIO) {
				t.Fatalf("after two failures in a row (1 tolerated): job error %v, want ErrTooManyFailures wrapping EIO", p)
			}
			if done, _, _ := st.Completed(); len(done) != 1 || done[0].ID != 3 {
				t.Fatalf("completed checkpoints: %v, want checkpoint 3 only", done)
			}
		})
	}
}
