package memory_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	memtable "github.com/streamsql/streamsql/connectors/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

var schema = types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "s", Type: types.StringType}}

func spec(dir string) exec.TableSpec {
	return exec.TableSpec{Table: "T", Schema: schema, Parallelism: 1, DataDir: dir, BatchSize: 4, Mem: memory.DefaultAllocator}
}

func insert(t *testing.T, dir string, rows ...[]types.Value) {
	t.Helper()
	ctx := context.Background()
	s, err := registry.Sink(memtable.Name, spec(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, rows)}
	err = s.Write(ctx, b)
	b.Rec.Release() // the sink must have copied what it keeps
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
}

func scan(t *testing.T, src exec.Source) []string {
	t.Helper()
	lines, _, err := conntest.Drain(context.Background(), src, schema)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// A scan sees the rows committed when it opened, not later ones.
func TestScanIsASnapshot(t *testing.T) {
	dir := t.TempDir()
	insert(t, dir, []types.Value{int64(1), "a"})
	src, err := registry.Source(memtable.Name, spec(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	insert(t, dir, []types.Value{int64(2), "b"})
	if got, want := scan(t, src), []string{"+I[1, a]"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Concurrent sinks of one table all commit; a restart sees every row.
func TestConcurrentSinks(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				insert(t, dir, []types.Value{int64(i*100 + j), "x"})
			}
		}()
	}
	wg.Wait()
	memtable.Reset(dir)
	src, _ := registry.Source(memtable.Name, spec(dir))
	defer src.Close()
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, src); len(got) != 80 {
		t.Fatalf("got %d rows, want 80", len(got))
	}
	if _, err := src.Next(context.Background()); err != io.EOF {
		t.Fatal(err)
	}
}

// Many one-row inserts are compacted into few batches, in memory and on
// disk, and the rows survive in order.
func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		insert(t, dir, []types.Value{int64(i), "x"})
	}
	memtable.Reset(dir)
	src, _ := registry.Source(memtable.Name, spec(dir))
	defer src.Close()
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines, batches, err := conntest.Drain(context.Background(), src, schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 300 || lines[0] != "+I[0, x]" || lines[299] != "+I[299, x]" {
		t.Fatalf("got %d rows: %v ... %v", len(lines), lines[0], lines[len(lines)-1])
	}
	if batches > 80 {
		t.Fatalf("%d batches for 300 rows", batches)
	}
	files, _ := filepath.Glob(filepath.Join(memtable.Dir(dir, "t"), "seg-*"))
	if len(files) > 16 {
		t.Fatalf("%d segment files", len(files))
	}
}

// A table with a primary key (and no watermark) upserts: a row of an
// existing key replaces it, a retraction removes the row of its key, and a
// restart sees the result. With a watermark (a versioned table) it keeps
// every version.
func TestPrimaryKeyUpserts(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		dir := t.TempDir()
		sp := spec(dir)
		sp.PrimaryKey = []string{"id"}
		if versioned {
			sp.Watermark = "id"
		}
		write := func(ops []exec.RowKind, rows ...[]types.Value) {
			t.Helper()
			ctx := context.Background()
			s, err := registry.Sink(memtable.Name, sp)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Open(ctx); err != nil {
				t.Fatal(err)
			}
			b := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, rows), Ops: ops}
			defer b.Rec.Release()
			if err := s.Write(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(ctx); err != nil {
				t.Fatal(err)
			}
		}
		write(nil, []types.Value{int64(1), "a"}, []types.Value{int64(2), "b"})
		write(nil, []types.Value{int64(1), "a2"}, []types.Value{int64(3), "c"}, []types.Value{int64(3), "c2"})
		want := []string{"+I[1, a2]", "+I[1, a]", "+I[2, b]", "+I[3, c2]", "+I[3, c]"}
		if !versioned {
			write([]exec.RowKind{exec.Delete}, []types.Value{int64(2), "other"}) // by key
			want = []string{"+I[1, a2]", "+I[3, c2]"}
		}
		memtable.Reset(dir)
		src, _ := registry.Source(memtable.Name, sp)
		defer src.Close()
		if err := src.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := scan(t, src)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("versioned=%v: got %v, want %v", versioned, got, want)
		}
	}
}
