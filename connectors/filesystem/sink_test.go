package filesystem_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/filesystem"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

var sinkSchema = types.Schema{{Name: "id", Type: types.IntType}, {Name: "s", Type: types.StringType}}

func newSink(t *testing.T, dir string, format string) exec.Sink {
	t.Helper()
	s, err := registry.Sink(filesystem.Name, exec.TableSpec{
		Table: "t", Schema: sinkSchema, Parallelism: 1, Mem: memory.DefaultAllocator,
		Options: map[string]string{"path": dir, "format": format},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func write(t *testing.T, s exec.Sink, rows ...string) {
	t.Helper()
	b, err := conntest.ParseBatch(sinkSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rec.Release()
	if err := s.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// The handle is the documented JSON, and a new instance commits it before
// Open: the file appears once, and committing again changes nothing.
func TestCommitBeforeOpen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	s1 := newSink(t, dir, "json")
	if err := s1.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err := s1.PreCommit(ctx, 1); err != nil || h != nil {
		t.Fatalf("empty checkpoint: handle %q, %v", h, err)
	}
	write(t, s1, "1, a")
	h, err := s1.PreCommit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The versioned header (checkpoint.AppendStateHeader, version 1), then JSON.
	want := "\xa7\x01" + `{"files":[{"pending":".part-0-0.json.inprogress","final":"part-0-0.json"}]}`
	if string(h) != want {
		t.Fatalf("handle %q, want %q", h, want)
	}
	write(t, s1, "2, b") // after the checkpoint: lost with the crash
	// A crash: s1 is gone without Close.

	s2 := newSink(t, dir, "json")
	defer s2.Close()
	for range 2 {
		if err := s2.Commit(ctx, 2, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{".part-0-1.json.inprogress", "part-0-0.json"}) {
		t.Fatalf("after the restored commit: %v", got)
	}
	write(t, s2, "2, b")
	if err := s2.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"part-0-0.json", "part-0-2.json"}) {
		t.Fatalf("after finish: %v", got)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "part-0-0.json"))
	if string(data) != `{"id":1,"s":"a"}`+"\n" {
		t.Fatalf("part-0-0.json: %q", data)
	}
}

// A handle whose names would leave the directory is refused.
func TestBadHandle(t *testing.T) {
	s := newSink(t, t.TempDir(), "csv")
	defer s.Close()
	for _, h := range []string{
		`{"files":[{"pending":"../.x","final":"part-0-0.csv"}]}`,
		`{"files":[{"pending":".x","final":"/etc/passwd"}]}`,
		`{"files":[{"pending":"x","final":"part-0-0.csv"}]}`,
		`{"files":[{"pending":".x","final":".part-0-0.csv"}]}`,
	} {
		err := s.Commit(context.Background(), 1, append([]byte{0xa7, 1}, h...))
		if err == nil || !strings.Contains(err.Error(), "bad commit handle of checkpoint 1: file names") {
			t.Errorf("%s: %v, want an error about the file names", h, err)
		}
	}
}

// A commit never replaces a file someone else put under the final name.
func TestCommitDoesNotReplace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newSink(t, dir, "csv")
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, "1, a")
	h, err := s.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "part-0-0.csv"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, h); err == nil {
		t.Fatal("no error")
	}
	data, _ := os.ReadFile(filepath.Join(dir, "part-0-0.csv"))
	if string(data) != "other\n" {
		t.Fatalf("replaced: %q", data)
	}
}
