package filesystem_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// injectOnce installs over dir an FS that fails the next operation of
// kind with EIO while armed is set, then disarms itself.
func injectOnce(t *testing.T, dir string, kind fsutil.OpKind, armed *atomic.Bool) {
	t.Cleanup(fsutil.Install(dir, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
		if op.Kind == kind && armed.CompareAndSwap(true, false) {
			return syscall.EIO
		}
		return nil
	})))
}

// A pre-commit whose file cannot be made durable (the fsync of the part
// file fails) returns the error and leaves no pending file behind, and the
// sink fails from then on: its rows are gone, so the job must restart from
// a checkpoint before them rather than go on past a tolerated failed
// checkpoint without them. Files pre-committed before still commit.
func TestPreCommitSyncFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var armed atomic.Bool
	injectOnce(t, dir, fsutil.OpSync, &armed)
	s := newSink(t, dir, "csv")
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, "1, a")
	h1, err := s.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, "2, b")
	armed.Store(true)
	if h, err := s.PreCommit(ctx, 2); !errors.Is(err, syscall.EIO) || h != nil {
		t.Fatalf("pre-commit with a failing fsync: handle %q, %v; want EIO", h, err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{".part-0-0.csv.inprogress"}) {
		t.Fatalf("after the failed pre-commit: %v, want only the file of checkpoint 1", got)
	}
	b, err := conntest.ParseBatch(sinkSchema, []string{"3, c"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rec.Release()
	if err := s.Write(ctx, b); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "its rows are gone") {
		t.Fatalf("write after the failed pre-commit: %v, want the sink failed with EIO", err)
	}
	if _, err := s.PreCommit(ctx, 3); !errors.Is(err, syscall.EIO) {
		t.Fatalf("pre-commit after the failed one: %v, want the sink failed with EIO", err)
	}
	if err := s.Finish(ctx); !errors.Is(err, syscall.EIO) {
		t.Fatalf("finish after the failed pre-commit: %v, want the sink failed with EIO", err)
	}
	if err := s.Commit(ctx, 1, h1); err != nil {
		t.Fatalf("commit of checkpoint 1: %v", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"part-0-0.csv"}) {
		t.Fatalf("after committing checkpoint 1: %v", got)
	}
}

// A commit whose rename fails returns the error and keeps the file
// pending; committing the same handle again (as the restored job does)
// commits it, once.
func TestCommitRenameFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var armed atomic.Bool
	injectOnce(t, dir, fsutil.OpRename, &armed)
	s := newSink(t, dir, "csv")
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, "1, a")
	h, err := s.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := s.Commit(ctx, 1, h); !errors.Is(err, syscall.EIO) {
		t.Fatalf("commit with a failing rename: %v, want EIO", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{".part-0-0.csv.inprogress"}) {
		t.Fatalf("after the failed commit: %v, want the file still pending", got)
	}
	s.Close() // the job fails
	s2 := newSink(t, dir, "csv")
	defer s2.Close()
	for range 2 {
		if err := s2.Commit(ctx, 1, h); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, dir); !slices.Equal(got, []string{"part-0-0.csv"}) {
		t.Fatalf("after the restored commit: %v", got)
	}
}
