package filesystem_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/filesystem"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

var partSchema = types.Schema{{Name: "id", Type: types.IntType}, {Name: "dt", Type: types.StringType}, {Name: "hm", Type: types.StringType}}

// tree lists the files under dir, relative, in order.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func ms(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

// A partitioned sink writes each partition's rows, without the partition
// columns, under dt=.../hm=... (':' escaped as Flink does); a checkpoint's
// commit renames them, and writes the success file of each partition whose
// time plus the delay the watermark of that checkpoint passed, once every
// subtask has passed it.
func TestPartitionCommit(t *testing.T) {
	dir := t.TempDir()
	opts := map[string]string{
		"path": "file://" + dir, "format": "csv",
		"sink.partition-commit.trigger":              "partition-time",
		"sink.partition-commit.delay":                "1 min",
		"sink.partition-commit.policy.kind":          "success-file",
		"partition.time-extractor.timestamp-pattern": "$dt $hm:00",
	}
	sinks := make([]exec.Sink, 2)
	for i := range sinks {
		s, err := registry.Sink(filesystem.Name, exec.TableSpec{
			Table: "t", Schema: partSchema, PartitionKeys: []string{"dt", "hm"}, Subtask: i, Parallelism: 2,
			Mem: memory.DefaultAllocator, Options: opts,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		sinks[i] = s
	}
	ctx := context.Background()
	put := func(s exec.Sink, rows ...string) {
		b, err := conntest.ParseBatch(partSchema, rows)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Rec.Release()
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint := func(id int64) {
		for _, s := range sinks {
			h, err := s.PreCommit(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, id, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(sinks[0], "1, 2024-01-01, 10:15", "2, 2024-01-01, 10:16", "3, 2024-01-01, 10:15")
	put(sinks[1], "4, 2024-01-01, 10:15", "5, 2024-01-01, 10:17")
	// Subtask 0 passed 10:15 + 1 min, subtask 1 not yet: no success file.
	sinks[0].(exec.WatermarkSink).Watermark(ms("2024-01-01 10:16:30"))
	sinks[1].(exec.WatermarkSink).Watermark(ms("2024-01-01 10:15:30"))
	checkpoint(1)
	want := []string{
		"dt=2024-01-01/hm=10%3A15/.committed-0",
		"dt=2024-01-01/hm=10%3A15/part-0-0.csv",
		"dt=2024-01-01/hm=10%3A15/part-1-0.csv",
		"dt=2024-01-01/hm=10%3A16/part-0-1.csv",
		"dt=2024-01-01/hm=10%3A17/part-1-1.csv",
	}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after checkpoint 1:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, err := os.ReadFile(filepath.Join(dir, "dt=2024-01-01/hm=10%3A15/part-0-0.csv"))
	if err != nil || string(data) != "1\n3\n" {
		t.Fatalf("part file holds %q (%v), want the id column only", data, err)
	}
	// Both passed 10:15 + 1 min: its success file; 10:16 + 1 min neither.
	sinks[1].(exec.WatermarkSink).Watermark(ms("2024-01-01 10:16:59"))
	checkpoint(2)
	want = []string{
		"dt=2024-01-01/hm=10%3A15/_SUCCESS",
		"dt=2024-01-01/hm=10%3A15/part-0-0.csv",
		"dt=2024-01-01/hm=10%3A15/part-1-0.csv",
		"dt=2024-01-01/hm=10%3A16/part-0-1.csv",
		"dt=2024-01-01/hm=10%3A17/part-1-1.csv",
	}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after checkpoint 2:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The end of the input commits every partition.
	for _, s := range sinks {
		if err := s.Finish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want = []string{
		"dt=2024-01-01/hm=10%3A15/_SUCCESS",
		"dt=2024-01-01/hm=10%3A15/part-0-0.csv",
		"dt=2024-01-01/hm=10%3A15/part-1-0.csv",
		"dt=2024-01-01/hm=10%3A16/_SUCCESS",
		"dt=2024-01-01/hm=10%3A16/part-0-1.csv",
		"dt=2024-01-01/hm=10%3A17/_SUCCESS",
		"dt=2024-01-01/hm=10%3A17/part-1-1.csv",
	}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after the end:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Read back: the partition columns come from the directories.
	src, err := registry.Source(filesystem.Name, exec.TableSpec{Table: "t", Schema: partSchema, PartitionKeys: []string{"dt", "hm"},
		Fields: []int{2, 0, 1}, Parallelism: 1, Mem: memory.DefaultAllocator, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rows, batches, err := conntest.Drain(ctx, src, types.Schema{partSchema[2], partSchema[0], partSchema[1]})
	if err != nil {
		t.Fatal(err)
	}
	if batches != 4 {
		t.Errorf("%d batches, want one per file (4)", batches)
	}
	slices.Sort(rows)
	wantRows := []string{"+I[10:15, 1, 2024-01-01]", "+I[10:15, 3, 2024-01-01]", "+I[10:15, 4, 2024-01-01]", "+I[10:16, 2, 2024-01-01]", "+I[10:17, 5, 2024-01-01]"}
	if !slices.Equal(rows, wantRows) {
		t.Fatalf("read back %q, want %q", rows, wantRows)
	}
}

// What the partitioned sink does not do is refused when the table is
// created, with the option's name.
func TestPartitionOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		keys []string
		want string
	}{
		{map[string]string{"sink.partition-commit.policy.kind": "metastore", "sink.partition-commit.trigger": "partition-time"}, []string{"dt"}, "only 'success-file'"},
		{map[string]string{"sink.partition-commit.policy.kind": "success-file"}, []string{"dt"}, "only 'partition-time'"},
		{map[string]string{"sink.partition-commit.policy.kind": "success-file", "sink.partition-commit.trigger": "process-time"}, []string{"dt"}, "only 'partition-time'"},
		{map[string]string{"sink.partition-commit.delay": "1 min"}, []string{"dt"}, "needs 'sink.partition-commit.policy.kind'"},
		{map[string]string{"sink.partition-commit.policy.kind": "success-file", "sink.partition-commit.trigger": "partition-time"}, nil, "applies to a table with PARTITIONED BY"},
		{map[string]string{"sink.partition-commit.policy.kind": "success-file", "sink.partition-commit.trigger": "partition-time", "partition.time-extractor.timestamp-pattern": "$day 00:00:00"}, []string{"dt"}, "not a partition column"},
		{map[string]string{"sink.rolling-policy.rollover-interval": "soon"}, nil, "not a positive duration"},
		{map[string]string{"sink.rolling-policy.file-size": "12 parsecs"}, nil, "unknown unit"},
	} {
		opts := map[string]string{"path": t.TempDir(), "format": "csv"}
		for k, v := range c.opts {
			opts[k] = v
		}
		_, err := registry.Sink(filesystem.Name, exec.TableSpec{Table: "t", Schema: partSchema, PartitionKeys: c.keys, Parallelism: 1, Mem: memory.DefaultAllocator, Options: opts})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error with %q", c.opts, err, c.want)
		}
	}
}

// A part file open for rollover-interval is rolled: committed with the
// next checkpoint, the next rows going to a new file.
func TestRolloverInterval(t *testing.T) {
	dir := t.TempDir()
	s, err := registry.Sink(filesystem.Name, exec.TableSpec{Table: "t", Schema: sinkSchema, Parallelism: 1, Mem: memory.DefaultAllocator,
		Options: map[string]string{"path": dir, "format": "csv", "sink.rolling-policy.rollover-interval": "10 ms", "sink.rolling-policy.check-interval": "1 min"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, "1, a")
	time.Sleep(20 * time.Millisecond)
	write(t, s, "2, b") // rolls the file with both rows
	write(t, s, "3, c")
	h, err := s.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, h); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"part-0-0.csv", "part-0-1.csv"}) {
		t.Fatalf("files %q", got)
	}
}

// NULL (and the empty string) is the default partition, read back as NULL;
// a value is escaped in the directory name and read back as written.
func TestDefaultPartition(t *testing.T) {
	dir := t.TempDir()
	spec := exec.TableSpec{Table: "t", Schema: partSchema, PartitionKeys: []string{"dt", "hm"}, Parallelism: 1,
		Mem: memory.DefaultAllocator, Options: map[string]string{"path": dir, "format": "csv"}}
	s, err := registry.Sink(filesystem.Name, spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := conntest.ParseBatch(partSchema, []string{"1, NULL, a/b=c%", "2, , x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Rec.Release()
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"dt=__DEFAULT_PARTITION__/hm=a%2Fb%3Dc%25/part-0-0.csv", "dt=__DEFAULT_PARTITION__/hm=x/part-0-1.csv"}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	src, err := registry.Source(filesystem.Name, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rows, _, err := conntest.Drain(ctx, src, partSchema)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	if want := []string{"+I[1, NULL, a/b=c%]", "+I[2, NULL, x]"}; !slices.Equal(rows, want) {
		t.Fatalf("read back %q, want %q", rows, want)
	}
}

// A restored partitioned sink commits the handle of its checkpoint (files
// in partition directories), and deletes the in-progress files its subtask
// left in the partitions (rows after that checkpoint, written again).
func TestPartitionedRestore(t *testing.T) {
	dir := t.TempDir()
	spec := exec.TableSpec{Table: "t", Schema: partSchema, PartitionKeys: []string{"dt", "hm"}, Parallelism: 1,
		Mem: memory.DefaultAllocator, Options: map[string]string{"path": dir, "format": "csv"}}
	ctx := context.Background()
	open := func() exec.Sink {
		s, err := registry.Sink(filesystem.Name, spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	put := func(s exec.Sink, rows ...string) {
		b, err := conntest.ParseBatch(partSchema, rows)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Rec.Release()
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	s := open()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	put(s, "1, d1, a", "2, d2, b")
	h, err := s.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	put(s, "3, d1, a") // after the checkpoint: lost with the crash
	// The crash: no Commit, no Close. A new instance commits the handle
	// before Open, then writes again.
	r := open()
	if err := r.Commit(ctx, 1, h); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	put(r, "3, d1, a")
	if err := r.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"dt=d1/hm=a/part-0-0.csv", "dt=d1/hm=a/part-0-3.csv", "dt=d2/hm=b/part-0-1.csv"}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	src, err := registry.Source(filesystem.Name, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	rows, _, err := conntest.Drain(ctx, src, partSchema)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	if want := []string{"+I[1, d1, a]", "+I[2, d2, b]", "+I[3, d1, a]"}; !slices.Equal(rows, want) {
		t.Fatalf("read back %q, want %q", rows, want)
	}
}
