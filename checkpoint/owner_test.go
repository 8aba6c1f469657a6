package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/objstore"
	"github.com/streamsql/streamsql/internal/testenv"
)

// twoOwners opens the storage of one job's checkpoints in the real S3
// server twice, each with a working copy of its own, as two processes on
// two machines would.
func twoOwners(t *testing.T) (a, b *Storage, store objstore.Store) {
	t.Helper()
	ctx := context.Background()
	o, uri := testS3(t)
	open := func() (*Storage, objstore.Store) {
		st, err := objstore.Open(ctx, uri, o)
		if err != nil {
			t.Fatal(err)
		}
		return NewRemoteStorage(t.TempDir(), st), st
	}
	a, store = open()
	b, _ = open()
	return a, b, store
}

func completedIDs(t *testing.T, s *Storage) []int64 {
	t.Helper()
	done, _, err := s.Completed()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range done {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestOwnerFencing: A claims epoch 1 and completes checkpoints; B claims
// epoch 2 and restores from A's newest; A's next checkpoint fails with a
// FencedError naming B's claim, writes no _metadata, deletes nothing of
// B's, and A can no longer list the checkpoints (a restart would resume
// the job beside B); B completes its own.
func TestOwnerFencing(t *testing.T) {
	ctx := context.Background()
	a, b, store := twoOwners(t)
	oa, err := a.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if oa.Epoch != 1 || oa.PID != os.Getpid() || a.Owner() != oa {
		t.Fatalf("first claim: %+v (Owner() %+v), want epoch 1 of this process", oa, a.Owner())
	}
	for id := int64(1); id <= 2; id++ {
		if _, err := a.Complete(ctx, makeCheckpoint(t, a, id, map[string]string{"000001.sst": "a"})); err != nil {
			t.Fatal(err)
		}
	}
	ob, err := b.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ob.Epoch != 2 {
		t.Fatalf("second claim: epoch %d, want 2", ob.Epoch)
	}
	done, _, err := b.Completed()
	if err != nil || len(done) == 0 || done[0].ID != 2 || done[0].Owner != 1 {
		t.Fatalf("B's Completed: %v, %v; want A's checkpoint 2 (owner epoch 1) first", done, err)
	}

	// A's next checkpoint: fenced before its _metadata is written.
	_, err = a.Complete(ctx, makeCheckpoint(t, a, 3, map[string]string{"000001.sst": "a", "000002.sst": "a3"}))
	var fe *FencedError
	if !errors.Is(err, ErrFenced) || !errors.As(err, &fe) {
		t.Fatalf("A's checkpoint after B's claim: %v, want ErrFenced", err)
	}
	if fe.By.Epoch != 2 || fe.By.PID != os.Getpid() || fe.By.Host == "" || fe.Mine.Epoch != 1 ||
		!strings.Contains(err.Error(), "owner epoch 2 (host "+fe.By.Host+", pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("fenced error: %v (%+v), want it to name B's claim, epoch 2", err, fe)
	}
	if _, err := store.Get(ctx, metaKey(3)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("A's fenced checkpoint 3 has a _metadata in the bucket (%v)", err)
	}
	if _, err := os.Stat(a.Dir(3) + "/" + MetadataFile); err == nil {
		t.Errorf("A's fenced checkpoint 3 has a local _metadata")
	}
	if _, _, err := a.Completed(); !errors.Is(err, ErrFenced) {
		t.Errorf("A's Completed after B's claim: %v, want ErrFenced", err)
	}
	if err := a.CheckOwner(ctx); !errors.Is(err, ErrFenced) {
		t.Errorf("A's CheckOwner: %v, want ErrFenced", err)
	}
	if err := b.CheckOwner(ctx); err != nil {
		t.Errorf("B's CheckOwner: %v", err)
	}

	// B completes checkpoint 3; A's discard of its own failed 3 and its
	// pruning delete nothing of B's.
	if _, err := b.Complete(ctx, makeCheckpoint(t, b, 3, map[string]string{"000001.sst": "a", "000009.sst": "b3"})); err != nil {
		t.Fatal(err)
	}
	if err := a.Discard(3); !errors.Is(err, ErrFenced) {
		t.Errorf("A's Discard(3): %v, want ErrFenced", err)
	}
	if err := a.remote.prune(ctx, 3, nil); !errors.Is(err, ErrFenced) {
		t.Errorf("A's pruning: %v, want ErrFenced", err)
	}
	if err := a.Clear(); !errors.Is(err, ErrFenced) {
		t.Errorf("A's Clear: %v, want ErrFenced", err)
	}
	if _, err := store.Get(ctx, metaKey(3)); err != nil {
		t.Errorf("B's checkpoint 3 after A's discard, pruning and clear: %v", err)
	}
	if _, err := store.Get(ctx, sharedName("000009.sst", "b3")); err != nil {
		t.Errorf("B's state file after A's pruning: %v", err)
	}
	if got := completedIDs(t, b); len(got) != 3 || got[0] != 3 {
		t.Errorf("B's Completed: %v, want 3, 2, 1", got)
	}
	// B's checkpoint records its owner epoch.
	if m, err := ReadMetadata(b.Dir(3)); err != nil || m.Owner != 2 {
		t.Errorf("B's local _metadata of checkpoint 3: %+v, %v; want owner 2", m, err)
	}
}

// TestOwnerFencedAfterWrite: a claim made between the superseded owner's
// check and its write of _metadata. The write lands, but the check after
// it fails the checkpoint: the old owner commits nothing, and the
// checkpoint, above the newest the new owner saw when it claimed, is never
// restored, by the new owner or by any later one.
func TestOwnerFencedAfterWrite(t *testing.T) {
	ctx := context.Background()
	a, b, store := twoOwners(t)
	if _, err := a.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(ctx, makeCheckpoint(t, a, 1, map[string]string{"000001.sst": "a"})); err != nil {
		t.Fatal(err)
	}
	// B claims with A's checkpoint 1 the newest.
	if _, err := b.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	// A's checkpoint 2 written as if A had checked just before B's claim:
	// its _metadata with A's epoch, put directly.
	m2 := makeCheckpoint(t, a, 2, map[string]string{"000001.sst": "a", "000002.sst": "a2"})
	m2.Owner = 1
	data, err := encodeForStore(m2)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, metaKey(2), data); err != nil {
		t.Fatal(err)
	}
	// The check after the write fails A's checkpoint.
	if err := a.CheckOwner(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("A's check after its write: %v, want ErrFenced", err)
	}
	if got := completedIDs(t, b); len(got) != 1 || got[0] != 1 {
		t.Errorf("B's Completed: %v, want only 1 (A's 2 came after B's claim)", got)
	}
	// B numbers after it all the same.
	if next, err := b.NextID(); err != nil || next != 3 {
		t.Errorf("B's NextID: %d, %v; want 3", next, err)
	}
	// A third owner leaves it out too, and resumes B's checkpoints.
	if _, err := b.Complete(ctx, makeCheckpoint(t, b, 3, map[string]string{"000001.sst": "a", "000003.sst": "b3"})); err != nil {
		t.Fatal(err)
	}
	c := NewRemoteStorage(t.TempDir(), store)
	if oc, err := c.Claim(ctx); err != nil || oc.Epoch != 3 {
		t.Fatalf("third claim: %+v, %v; want epoch 3", oc, err)
	}
	if got := completedIDs(t, c); len(got) != 2 || got[0] != 3 || got[1] != 1 {
		t.Errorf("C's Completed: %v, want 3, 1 (not A's 2)", got)
	}
	// A claim whose base was never recorded (its process stopped between
	// the two writes, before it started the job) rules nothing out.
	if err := store.Put(ctx, ownerKey(4), strings.NewReader("{}"), 2); err != nil {
		t.Fatal(err)
	}
	if got := completedIDs(t, NewRemoteStorage(t.TempDir(), store)); len(got) != 2 {
		t.Errorf("Completed with a claim without base: %v, want 3, 1", got)
	}
}

// TestOwnerConcurrentClaims: processes claiming at once get distinct
// epochs, one each.
func TestOwnerConcurrentClaims(t *testing.T) {
	ctx := context.Background()
	_, _, store := twoOwners(t)
	const n = 4
	epochs := make(chan int64, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			o, err := NewRemoteStorage(t.TempDir(), store).Claim(ctx)
			epochs <- o.Epoch
			errs <- err
		}()
	}
	seen := map[int64]bool{}
	deadline := time.After(time.Minute)
	for range n {
		select {
		case e := <-epochs:
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			if seen[e] || e < 1 || e > n {
				t.Errorf("epoch %d claimed twice or out of 1..%d", e, n)
			}
			seen[e] = true
		case <-deadline:
			t.Fatal("claims did not return")
		}
	}
}

// TestUnreachable: the checkpoints of a store whose server does not answer
// (nothing listens on its port) cannot be listed or numbered, and say so
// with ErrUnreachable, which a restart tries again; a damaged checkpoint
// is no such error.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	o, _ := testS3(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Endpoint = "http://" + l.Addr().String()
	l.Close()
	store, err := objstore.Open(ctx, "s3://"+testenv.S3Bucket+"/unreachable", o)
	if err != nil {
		t.Fatal(err)
	}
	s := NewRemoteStorage(t.TempDir(), store)
	if _, _, err := s.Completed(); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Completed: %v, want ErrUnreachable", err)
	}
	if _, err := s.NextID(); !errors.Is(err, ErrUnreachable) {
		t.Errorf("NextID: %v, want ErrUnreachable", err)
	}
	if err := unreachable(fmt.Errorf("x: %w", ErrDamagedFile)); errors.Is(err, ErrUnreachable) {
		t.Errorf("a damaged file marked unreachable: %v", err)
	}
}

// TestOwnerClearKeepsClaims: clearing the checkpoints before a claim (a
// job started with --fresh) keeps the claims, so the new claim still
// fences the owner that ran the job; the owner clearing its own job (a
// stop that deletes its checkpoints) deletes them too.
func TestOwnerClearKeepsClaims(t *testing.T) {
	ctx := context.Background()
	a, b, store := twoOwners(t)
	if _, err := a.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(ctx, makeCheckpoint(t, a, 1, map[string]string{"000001.sst": "a"})); err != nil {
		t.Fatal(err)
	}
	if err := b.Clear(); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, store); got != ownerKey(1)+"\n"+baseKey(1) {
		t.Fatalf("objects after a clear before any claim:\n%s\nwant only the claim of epoch 1", got)
	}
	if ob, err := b.Claim(ctx); err != nil || ob.Epoch != 2 {
		t.Fatalf("the claim after the clear: %+v, %v; want epoch 2", ob, err)
	}
	if err := a.CheckOwner(ctx); !errors.Is(err, ErrFenced) {
		t.Errorf("the first owner after the clear and the new claim: %v, want ErrFenced", err)
	}
	if err := b.Clear(); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, store); got != "" {
		t.Errorf("objects after the owner's own clear:\n%s\nwant none", got)
	}
}
