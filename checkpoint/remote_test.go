package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/objstore"
	"github.com/streamsql/streamsql/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopS3()
	os.Exit(code)
}

// testS3 returns the options of the test binary's S3 server and a fresh
// s3:// location in its bucket.
func testS3(t *testing.T) (objstore.S3Options, string) {
	srv := testenv.S3(t)
	o := objstore.S3Options{Endpoint: srv.Endpoint, PathStyle: true,
		AccessKey: srv.Var("AWS_ACCESS_KEY_ID"), SecretKey: srv.Var("AWS_SECRET_ACCESS_KEY")}
	return o, fmt.Sprintf("s3://%s/%s-%d", testenv.S3Bucket, t.Name(), time.Now().UnixNano())
}

// makeCheckpoint writes checkpoint id into s's working copy: one subtask
// directory "op-0" with files (name -> content), as a state store
// checkpoint leaves them, and returns its metadata.
func makeCheckpoint(t *testing.T, s *Storage, id int64, files map[string]string) *Metadata {
	t.Helper()
	dir, err := s.Prepare(id)
	if err != nil {
		t.Fatal(err)
	}
	st := SubtaskState{Dir: "op-0", Inline: []byte("position")}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, "op-0"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "op-0", n), []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		st.Files = append(st.Files, FileSum{Name: n, Size: int64(len(files[n])),
			CRC32C: crc32.Checksum([]byte(files[n]), crc32.MakeTable(crc32.Castagnoli))})
	}
	return &Metadata{Job: "job", ID: id, Triggered: time.UnixMilli(id * 1000), Dir: dir,
		Operators: []*OperatorState{{ID: "op", Name: "GroupAggregate", Parallelism: 1, Subtasks: []SubtaskState{st}}}}
}

func keys(t *testing.T, store objstore.Store) string {
	t.Helper()
	objs, err := store.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return strings.Join(ks, "\n")
}

func sharedName(name, content string) string {
	return fmt.Sprintf("shared/op-0/%s.%08x.%d", name, crc32.Checksum([]byte(content), crc32.MakeTable(crc32.Castagnoli)), len(content))
}

// TestRemoteStorage: checkpoints uploaded to the real S3 server, each
// sstable once; pruning to the retained ones; listing, numbering and
// downloading from an empty working copy (a new machine); a damaged or
// missing object; a second writer of one checkpoint.
func TestRemoteStorage(t *testing.T) {
	ctx := context.Background()
	o, uri := testS3(t)
	store, err := objstore.Open(ctx, uri, o)
	if err != nil {
		t.Fatal(err)
	}
	s := NewRemoteStorage(t.TempDir(), store)

	m1 := makeCheckpoint(t, s, 1, map[string]string{"000001.sst": "sst one", "MANIFEST-000001": "manifest one"})
	n, err := s.Complete(ctx, m1)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len("sst one")+len("manifest one")) {
		t.Errorf("checkpoint 1 uploaded %d bytes", n)
	}
	if _, err := os.Stat(filepath.Join(m1.Dir, MetadataFile)); err != nil {
		t.Fatalf("no local _metadata after Complete: %v", err)
	}
	// Checkpoint 2 keeps 000001.sst: only its new files are uploaded.
	m2 := makeCheckpoint(t, s, 2, map[string]string{"000001.sst": "sst one", "000002.sst": "sst two", "MANIFEST-000001": "manifest two"})
	if n, err = s.Complete(ctx, m2); err != nil {
		t.Fatal(err)
	}
	if want := int64(len("sst two") + len("manifest two")); n != want {
		t.Errorf("checkpoint 2 uploaded %d bytes, want %d (000001.sst again?)", n, want)
	}
	if err := s.Retain(1); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"chk-2/_metadata", sharedName("000001.sst", "sst one"), sharedName("000002.sst", "sst two"),
		sharedName("MANIFEST-000001", "manifest two")}, "\n")
	if got := keys(t, store); got != want {
		t.Fatalf("objects after Retain(1):\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(m1.Dir); !os.IsNotExist(err) {
		t.Errorf("the working copy of checkpoint 1 is still there: %v", err)
	}

	// A new machine: an empty working copy, the same store.
	fresh := NewRemoteStorage(t.TempDir(), store)
	done, warnings, err := fresh.Completed()
	if err != nil || len(done) != 1 || done[0].ID != 2 || len(warnings) != 0 {
		t.Fatalf("Completed on a new machine: %v, %v, %v", done, warnings, err)
	}
	if next, err := fresh.NextID(); err != nil || next != 3 {
		t.Fatalf("NextID on a new machine: %d, %v; want 3", next, err)
	}
	if err := fresh.Fetch(ctx, done[0]); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(done[0].Dir, "op-0", "000002.sst")); err != nil || string(b) != "sst two" {
		t.Fatalf("downloaded 000002.sst: %q, %v", b, err)
	}
	if got, err := ReadMetadata(done[0].Dir); err != nil || got.ID != 2 {
		t.Fatalf("downloaded _metadata: %v, %v", got, err)
	}

	// A damaged object (other content, same name) and a missing one are
	// ErrDamagedFile, whatever the working copy holds.
	damaged := sharedName("000002.sst", "sst two")
	if err := store.Put(ctx, damaged, strings.NewReader("sst 2wo"), 7); err != nil {
		t.Fatal(err)
	}
	other := NewRemoteStorage(t.TempDir(), store)
	done, _, _ = other.Completed()
	if err := other.Fetch(ctx, done[0]); !errors.Is(err, ErrDamagedFile) || !strings.Contains(err.Error(), damaged) {
		t.Fatalf("Fetch with a damaged object: %v, want ErrDamagedFile naming %s", err, damaged)
	}
	if err := store.Delete(ctx, damaged); err != nil {
		t.Fatal(err)
	}
	if err := other.Fetch(ctx, done[0]); !errors.Is(err, ErrDamagedFile) {
		t.Fatalf("Fetch with a missing object: %v, want ErrDamagedFile", err)
	}

	// A second process completing the same checkpoint id is refused.
	a, b := NewRemoteStorage(t.TempDir(), store), NewRemoteStorage(t.TempDir(), store)
	if _, err := a.Complete(ctx, makeCheckpoint(t, a, 7, map[string]string{"x": "a"})); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Complete(ctx, makeCheckpoint(t, b, 7, map[string]string{"x": "b"})); !errors.Is(err, ErrCheckpointExists) {
		t.Fatalf("a second checkpoint 7: %v, want ErrCheckpointExists", err)
	}
	// Discard removes a checkpoint's objects; Clear every object.
	if err := a.Discard(7); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, store); strings.Contains(got, "chk-7/") {
		t.Errorf("objects of checkpoint 7 after Discard:\n%s", got)
	}
	if err := a.Clear(); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, store); got != "" {
		t.Errorf("objects after Clear:\n%s", got)
	}
}

// TestRemoteSavepoint: a savepoint written to the S3 server is
// self-contained (its own copy of every file, under its own prefix) and
// loads into another directory with every file verified; a checkpoint is
// loaded by its chk-<n> location too.
func TestRemoteSavepoint(t *testing.T) {
	ctx := context.Background()
	o, uri := testS3(t)
	local := NewStorage(t.TempDir())
	m := makeCheckpoint(t, local, 3, map[string]string{"000009.sst": "nine", "MANIFEST-000001": "m"})
	if _, err := local.Complete(ctx, m); err != nil {
		t.Fatal(err)
	}
	sp, err := WriteSavepointTo(ctx, m, uri+"/savepoints", o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sp, uri+"/savepoints/savepoint-job-3-") {
		t.Fatalf("savepoint at %s", sp)
	}
	work := t.TempDir()
	got, err := LoadFrom(ctx, sp+"/_metadata", o, work)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Savepoint || got.ID != 3 || !strings.HasPrefix(got.Dir, work) {
		t.Fatalf("loaded %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(got.Dir, "op-0", "000009.sst")); err != nil || string(b) != "nine" {
		t.Fatalf("loaded 000009.sst: %q, %v", b, err)
	}

	// A checkpoint of a job's checkpoint directory, by its chk-<n>.
	store, err := objstore.Open(ctx, uri+"/job", o)
	if err != nil {
		t.Fatal(err)
	}
	rs := NewRemoteStorage(t.TempDir(), store)
	if _, err := rs.Complete(ctx, makeCheckpoint(t, rs, 5, map[string]string{"000010.sst": "ten"})); err != nil {
		t.Fatal(err)
	}
	got, err = LoadFrom(ctx, uri+"/job/chk-5", o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(got.Dir, "op-0", "000010.sst")); err != nil || string(b) != "ten" {
		t.Fatalf("loaded checkpoint 5's 000010.sst: %q, %v", b, err)
	}
	if _, err := LoadFrom(ctx, uri+"/job/chk-6", o, t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("loading a checkpoint that is not there: %v", err)
	}
}

func TestOptionsDir(t *testing.T) {
	for _, c := range []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{KeyDir: "s3://b/p"}, "s3://b/p"},
		{map[string]string{KeyDir: "/tmp/x"}, "/tmp/x"},
		{map[string]string{KeyDir: "gs://b/p"}, "error"},
		{map[string]string{KeyS3AccessKey: "a"}, "error"},
		{map[string]string{KeyS3Endpoint: "127.0.0.1:9000"}, "error"},
		{map[string]string{KeyS3PathStyle: "yes"}, "error"},
	} {
		o, err := ParseOptions(c.m)
		got := o.Dir
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("ParseOptions(%v): %q (%v), want %q", c.m, got, err, c.want)
		}
	}
}

// gatedStore is a store whose Puts of state files wait for gate to close
// (and then fail with fail, if set).
type gatedStore struct {
	objstore.Store
	gate    chan struct{}
	started chan struct{}
	once    sync.Once
	fail    error
}

func (g *gatedStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.fail != nil {
		return g.fail
	}
	return g.Store.Put(ctx, key, r, size)
}

// TestUploadIsAsynchronous: with an object store, the ack that completes a
// checkpoint returns while its files upload (the subtask goes on with its
// records); the checkpoint completes, and its _metadata is in the store,
// only once they are uploaded, and its duration counts the upload (its
// acked time does not). A failed upload fails the checkpoint, which counts,
// and leaves no trace in the store or on disk.
func TestUploadIsAsynchronous(t *testing.T) {
	for _, failUpload := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", failUpload), func(t *testing.T) {
			g := &gatedStore{Store: objstore.NewFS(t.TempDir()), gate: make(chan struct{}), started: make(chan struct{})}
			if failUpload {
				g.fail = errors.New("injected: 503 SlowDown")
			}
			st := NewRemoteStorage(t.TempDir(), g)
			task := Task{Operator: "op", Name: "GroupAggregate", Parallelism: 1}
			// The clock stands still but for the upload, which takes 7 s.
			var clockMu sync.Mutex
			clock := time.Now()
			now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
			c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: st, Now: now,
				Options: Options{Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 1, TolerableFailures: 5},
				Tasks:   []Task{task},
			})
			defer c.Close()
			p, err := c.trigger(false, FormatNative, true)
			if err != nil {
				t.Fatal(err)
			}
			content := "sstable"
			if err := os.MkdirAll(filepath.Join(p.dir, "op-0"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.dir, "op-0", "000001.sst"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			acked := make(chan struct{})
			go func() {
				c.Ack(p.id, task, SubtaskState{Dir: "op-0", Files: []FileSum{{Name: "000001.sst", Size: int64(len(content)),
					CRC32C: crc32.Checksum([]byte(content), crc32.MakeTable(crc32.Castagnoli))}}})
				close(acked)
			}()
			select {
			case <-acked:
			case <-time.After(30 * time.Second):
				t.Fatal("the last ack waited for the upload")
			}
			<-g.started
			select {
			case r := <-p.done:
				t.Fatalf("checkpoint ended (%v) before its upload did", r.err)
			default:
			}
			if got := keys(t, g); got != "" {
				t.Fatalf("objects before the upload ended:\n%s", got)
			}
			clockMu.Lock()
			clock = clock.Add(7 * time.Second)
			clockMu.Unlock()
			close(g.gate)
			r := <-p.done
			if failUpload {
				// Counted before the checkpoint ends (Failed is told after).
				if r.err == nil || !strings.Contains(r.err.Error(), "503 SlowDown") || c.Stats().Failed != 1 {
					t.Fatalf("checkpoint with a failing upload: %v (failures counted: %d)", r.err, c.Stats().Failed)
				}
				if got := keys(t, g); got != "" {
					t.Errorf("objects after a failed upload:\n%s", got)
				}
				if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
					t.Errorf("the failed checkpoint's working copy is still there: %v", err)
				}
				return
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := "chk-1/_metadata\n" + sharedName("000001.sst", content)
			if got := keys(t, g); got != want {
				t.Fatalf("objects after the checkpoint:\n%s\nwant\n%s", got, want)
			}
			if h := c.History(); len(h) != 1 || h[0].Uploaded != int64(len(content)) || h[0].Duration != 7*time.Second || h[0].Acked != 0 {
				t.Errorf("history after the checkpoint: %+v, want one record of %d bytes uploaded in 7 s, acked at once", h, len(content))
			}
			if s := c.Stats(); s.LastDuration != 7*time.Second || s.Durations.Sum != 7*time.Second {
				t.Errorf("stats after the checkpoint: last duration %s, sum %s; want the upload's 7 s", s.LastDuration, s.Durations.Sum)
			}
		})
	}
}
