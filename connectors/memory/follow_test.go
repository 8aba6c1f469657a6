package memory_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	memtable "github.com/streamsql/streamsql/connectors/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

func followSpec(dir string, batchSize int, pk ...string) exec.TableSpec {
	s := spec(dir)
	s.BatchSize, s.PrimaryKey = batchSize, pk
	s.Options = map[string]string{memtable.OptScanMode: memtable.ModeFollow}
	return s
}

// commit writes rows with their ops through the table's sink as one
// commit (a bounded INSERT's Finish).
func commit(t testing.TB, sp exec.TableSpec, ops []exec.RowKind, rows ...[]types.Value) {
	t.Helper()
	ctx := context.Background()
	sp.Options = nil
	s, err := registry.Sink(memtable.Name, sp)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, rows), Ops: ops}
	err = s.Write(ctx, b)
	b.Rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
}

// read returns the changes src has now, until it has none ready.
func read(t testing.TB, src exec.Source) []string {
	t.Helper()
	var out []string
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, exec.ErrNoData) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rowfmt.Lines(schema, b)...)
		b.Rec.Release()
	}
}

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func row(id int64, s any) []types.Value { return []types.Value{id, s} }

var (
	ins = []exec.RowKind{exec.Insert}
	del = []exec.RowKind{exec.Delete}
)

// A followed table is read as its rows, then each later commit's changes
// in commit order; a restored follower goes on from its position, exactly
// once, also after the session restarted while nothing was committed; a
// commit made in a session the follower's position did not see is an
// error, never a silent gap.
func TestFollowSnapshotThenChanges(t *testing.T) {
	dir := t.TempDir()
	sp := followSpec(dir, 4)
	commit(t, sp, nil, row(1, "a"), row(1, "a"), row(2, nil))

	src, err := conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	expect(t, read(t, src), "+I[1, a]", "+I[1, a]", "+I[2, NULL]")
	expect(t, read(t, src)) // nothing more: the scan waits

	// A multiset: a -D removes one equal row; the changes come as written.
	commit(t, sp, []exec.RowKind{exec.Delete, exec.Insert, exec.UpdateBefore, exec.UpdateAfter},
		row(1, "a"), row(3, "c"), row(2, nil), row(2, "b"))
	commit(t, sp, nil, row(4, nil))
	expect(t, read(t, src), "-D[1, a]", "+I[3, c]", "-U[2, NULL]", "+U[2, b]", "+I[4, NULL]")
	pos, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	src.Close()

	// Restored in the same session after a commit it had not read.
	commit(t, sp, del, row(4, nil))
	restore := func(state []byte) (exec.Source, error) {
		return conntest.Reopen(context.Background(), memtable.Name, sp, func(s exec.Source) error { return s.Restore(state) })
	}
	src, err = restore(pos)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, read(t, src), "-D[4, NULL]")
	pos, _ = src.Snapshot()
	src.Close()

	// A new session (process) on the same data dir, nothing committed
	// since the position: the follower goes on.
	memtable.Reset(dir)
	src, err = restore(pos)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, read(t, src))
	commit(t, sp, ins, row(5, "e"))
	expect(t, read(t, src), "+I[5, e]")
	pos, _ = src.Snapshot()
	src.Close()

	// A commit in a new session before the follower is restored: its
	// change is not kept, the restore fails and says so.
	memtable.Reset(dir)
	commit(t, sp, ins, row(6, "f"))
	if _, err := restore(pos); !errors.Is(err, memtable.ErrChangesGone) {
		t.Fatalf("restore past a lost commit: got %v, want ErrChangesGone", err)
	}

	// A new job reads the table as it is now.
	src, err = conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := read(t, src)
	slices.Sort(got) // a table is a multiset: its order is the store's
	expect(t, got, "+I[1, a]", "+I[2, b]", "+I[3, c]", "+I[5, e]", "+I[6, f]")
}

// A follower restored while it was reading the rows as of its start reads
// the rest of those rows (pinned, though later commits changed the table)
// and then the later commits: every row once.
func TestFollowRestoredInsideItsSnapshot(t *testing.T) {
	dir := t.TempDir()
	sp := followSpec(dir, 1)
	commit(t, sp, nil, row(1, "a"), row(2, "b"), row(3, "c"))
	src, err := conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	b, err := conntest.Next(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rowfmt.Lines(schema, b), "+I[1, a]")
	b.Rec.Release()
	pos, _ := src.Snapshot()
	src.Close()

	commit(t, sp, []exec.RowKind{exec.Delete, exec.Insert}, row(2, "b"), row(4, "d"))
	src, err = conntest.Reopen(context.Background(), memtable.Name, sp, func(s exec.Source) error { return s.Restore(pos) })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	expect(t, read(t, src), "+I[2, b]", "+I[3, c]", "-D[2, b]", "+I[4, d]")
}

// A table with a primary key upserts; its follower sees what each commit
// did to each key: a new key +I, a replaced row -U and +U, a removed key
// -D of the row it held (whatever the -D carried besides the key).
func TestFollowKeyedTable(t *testing.T) {
	dir := t.TempDir()
	sp := followSpec(dir, 4, "id")
	commit(t, sp, nil, row(1, "a"), row(2, "b"))
	src, err := conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	expect(t, read(t, src), "+I[1, a]", "+I[2, b]")
	commit(t, sp, nil, row(1, "x"), row(3, "c"), row(3, nil))
	commit(t, sp, []exec.RowKind{exec.Delete, exec.UpdateAfter}, row(2, "whatever"), row(4, "d"))
	expect(t, read(t, src), "-U[1, a]", "+U[1, x]", "+I[3, c]", "-U[3, c]", "+U[3, NULL]", "-D[2, b]", "+I[4, d]")
}

// Replay reads the rows as of its start in batches of at most the batch
// size, then ends; it follows nothing.
func TestReplayEnds(t *testing.T) {
	dir := t.TempDir()
	sp := followSpec(dir, 2)
	sp.Options[memtable.OptScanMode] = memtable.ModeReplay
	commit(t, sp, nil, row(1, "a"), row(2, "b"), row(3, "c"))
	src, err := conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	lines, batches, err := conntest.Drain(context.Background(), src, schema)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, lines, "+I[1, a]", "+I[2, b]", "+I[3, c]")
	if batches != 2 {
		t.Fatalf("%d batches, want 2 of at most 2 rows", batches)
	}
}

// A commit that replaces rows of a table held in several batches: the
// follower sees the rows the keys held, from whichever batch.
func TestFollowKeyedTableOfSeveralBatches(t *testing.T) {
	dir := t.TempDir()
	sp := followSpec(dir, 8, "id")
	commit(t, sp, nil, row(1, "a"))
	commit(t, sp, nil, row(2, "b"))
	commit(t, sp, nil, row(3, "c"))
	src, err := conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	expect(t, read(t, src), "+I[1, a]", "+I[2, b]", "+I[3, c]")
	commit(t, sp, nil, row(3, "z"))
	expect(t, read(t, src), "-U[3, c]", "+U[3, z]")
}
