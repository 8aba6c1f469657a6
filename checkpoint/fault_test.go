package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
				p, err := c.trigger(false, FormatNative, true)
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

// TestSavepointWriteFaults: a savepoint whose state files cannot be
// written (ENOSPC) or whose _metadata cannot be renamed into place fails
// with the cause and leaves no directory behind; the checkpoint it copies
// is untouched, and a savepoint without faults has every file, each
// directory synced after its files.
func TestSavepointWriteFaults(t *testing.T) {
	st := NewStorage(filepath.Join(t.TempDir(), "checkpoints"))
	dir, err := st.Prepare(7)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "op-0", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"op-0/000005.sst", "op-0/MANIFEST-000001", "op-0/sub/x"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := &Metadata{Job: "j", ID: 7, MaxParallelism: 128, Operators: []*OperatorState{
		{ID: "op", Name: "GroupAggregate", Parallelism: 1, Subtasks: []SubtaskState{{Dir: "op-0"}}}}}
	if err := WriteMetadata(dir, md); err != nil {
		t.Fatal(err)
	}
	md, err = ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "savepoints")
	for _, c := range []struct {
		name  string
		fail  func(fsutil.Op) bool
		cause error
	}{
		{"state file", func(op fsutil.Op) bool {
			return op.Kind == fsutil.OpWrite && filepath.Base(op.Path) == "MANIFEST-000001"
		}, syscall.ENOSPC},
		{"metadata rename", func(op fsutil.Op) bool { return op.Kind == fsutil.OpRename && filepath.Base(op.Path) == MetadataFile }, syscall.EIO},
	} {
		t.Run(c.name, func(t *testing.T) {
			undo := fsutil.Install(root, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
				if c.fail(op) {
					return c.cause
				}
				return nil
			}))
			defer undo()
			path, err := WriteSavepoint(md, root)
			if !errors.Is(err, c.cause) || path != "" {
				t.Fatalf("savepoint: %q, %v; want %v", path, err, c.cause)
			}
			ents, _ := os.ReadDir(root)
			if len(ents) != 0 {
				t.Fatalf("the failed savepoint left %v in %s", ents, root)
			}
		})
	}
	var synced []string
	undo := fsutil.Install(root, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
		if op.Kind == fsutil.OpSyncDir {
			synced = append(synced, op.Path)
		}
		return nil
	}))
	defer undo()
	path, err := WriteSavepoint(md, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"op-0/000005.sst", "op-0/MANIFEST-000001", "op-0/sub/x"} {
		if data, err := os.ReadFile(filepath.Join(path, f)); err != nil || string(data) != f {
			t.Fatalf("savepoint file %s: %q, %v", f, data, err)
		}
	}
	for _, d := range []string{filepath.Join(path, "op-0", "sub"), filepath.Join(path, "op-0"), path, root} {
		if !slices.Contains(synced, d) {
			t.Errorf("directory %s not synced (synced: %v)", d, synced)
		}
	}
	if got, err := Load(path); err != nil || !got.Savepoint || got.ID != 7 {
		t.Fatalf("the savepoint loads as %+v, %v", got, err)
	}
	if _, err := ReadMetadata(dir); err != nil {
		t.Fatalf("the checkpoint copied: %v", err)
	}
}

// TestCloseWhileDirectoryIsMade: a coordinator closed while a checkpoint
// makes its directory (the job ended meanwhile) drops that checkpoint;
// Close cannot remove a directory that does not exist yet, so the trigger,
// which makes it, removes it before the checkpoint returns its error:
// nothing is left under the job's checkpoints.
func TestCloseWhileDirectoryIsMade(t *testing.T) {
	root := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(fsutil.Install(root, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
		if op.Kind == fsutil.OpMkdirAll && filepath.Base(op.Path) == "chk-1" {
			close(entered)
			<-release
		}
		return nil
	})))
	c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: NewStorage(root),
		Options: Options{Timeout: time.Minute, MaxConcurrent: 1},
		Tasks:   []Task{{Operator: "op", Name: "Source", Parallelism: 1}}})
	done := make(chan error, 1)
	go func() {
		_, err := c.Checkpoint(context.Background())
		done <- err
	}()
	<-entered
	c.Close()
	close(release)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Fatalf("checkpoint: %v, want the coordinator shut down", err)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left under the checkpoints after Close: %s", e.Name())
	}
}
