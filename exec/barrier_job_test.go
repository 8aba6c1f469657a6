package exec_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// stepSource is a source whose pace the test sets: it emits the rows of
// its table (each row is the table's name) as many as fed, and its
// position is the number of rows emitted. While held, Next blocks until
// rows are fed, so that the source serves no checkpoint trigger meanwhile:
// its barriers wait for the test. While idle it returns ErrNoData when
// nothing is fed (and serves triggers). Once free, it emits the rest of
// its total and ends.
type stepSource struct {
	ctl  *stepControl
	spec exec.TableSpec
	pos  int64
}

// stepControl drives the stepSource of one table.
type stepControl struct {
	total int64
	feed  chan int64
	mu    sync.Mutex
	mode  stepMode
	// snaps counts the snapshots taken; nexts signals each call of Next
	// with the snapshots taken before it: a source calls Next again only
	// after it sent the barriers of those snapshots.
	snaps int
	nexts chan int
}

type stepMode int

const (
	stepHeld stepMode = iota
	stepIdle
	stepFree
)

func (c *stepControl) setMode(m stepMode) {
	c.mu.Lock()
	c.mode = m
	c.mu.Unlock()
}

var stepSources = struct {
	sync.Mutex
	m map[string]*stepControl
}{m: map[string]*stepControl{}}

func init() {
	exec.RegisterConnector(catalog.Connector{Name: "step-test", Source: true}, func(spec exec.TableSpec) (exec.Source, error) {
		stepSources.Lock()
		defer stepSources.Unlock()
		c := stepSources.m[spec.Table]
		if c == nil {
			return nil, fmt.Errorf("no step control for table %s", spec.Table)
		}
		return &stepSource{ctl: c, spec: spec}, nil
	}, nil)
}

func (s *stepSource) Open(context.Context) error { return nil }
func (s *stepSource) Close() error               { return nil }

func (s *stepSource) Snapshot() ([]byte, error) {
	s.ctl.mu.Lock()
	s.ctl.snaps++
	s.ctl.mu.Unlock()
	return binary.AppendVarint(nil, s.pos), nil
}

func (s *stepSource) Restore(st []byte) error {
	pos, n := binary.Varint(st)
	if n <= 0 {
		return errors.New("bad step source position")
	}
	s.pos = pos
	return nil
}

func (s *stepSource) Next(ctx context.Context) (exec.Batch, error) {
	c := s.ctl
	c.mu.Lock()
	mode, snaps := c.mode, c.snaps
	c.mu.Unlock()
	select {
	case c.nexts <- snaps:
	default:
	}
	var n int64
	switch mode {
	case stepHeld:
		select {
		case n = <-c.feed:
		case <-ctx.Done():
			return exec.Batch{}, ctx.Err()
		}
	case stepIdle:
		// Polls for rows as a connector polls its input; not a
		// synchronization: the test waits on conditions.
		select {
		case n = <-c.feed:
		case <-time.After(5 * time.Millisecond):
			return exec.Batch{}, exec.ErrNoData
		case <-ctx.Done():
			return exec.Batch{}, ctx.Err()
		}
	case stepFree:
		if s.pos == c.total {
			return exec.Batch{}, io.EOF
		}
		n = c.total - s.pos
	}
	b := array.NewStringBuilder(s.spec.Mem)
	defer b.Release()
	for range n {
		b.Append(s.spec.Table)
	}
	s.pos += n
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	return exec.Batch{Rec: array.NewRecordBatch(schema, []arrow.Array{col}, n)}, nil
}

// waitNext waits until c's source calls Next after at least snaps snapshots.
func waitNext(t *testing.T, c *stepControl, snaps int) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case got := <-c.nexts:
			if got >= snaps {
				return
			}
		case <-deadline:
			t.Fatalf("the source did not get past %d snapshots", snaps)
		}
	}
}

// TestAtLeastOnceBarriersPerCheckpoint runs SELECT k, COUNT(*) over a
// UNION ALL of two sources in AT_LEAST_ONCE mode with two checkpoints in
// flight. Source a sends barriers n and n+1 while source b is held; b then
// sends 2 rows and only then its barriers n and n+1. The operators with
// both channels must snapshot checkpoint n only after b's barrier n: a
// snapshot taken after a's barrier n+1 would miss b's 2 rows, which b's
// position in checkpoint n (and n+1) covers, and a restore would lose
// them. Each checkpoint must complete, and a job restored from it must
// count every row exactly once (a sends nothing after its barriers and b
// nothing between its two, so at-least-once adds no duplicate here).
func TestAtLeastOnceBarriersPerCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE step_a (k STRING) WITH ('connector' = 'step-test')",
		"CREATE TABLE step_b (k STRING) WITH ('connector' = 'step-test')",
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const query = "SELECT k, COUNT(*) AS c FROM (SELECT k FROM step_a UNION ALL SELECT k FROM step_b) GROUP BY k"
	plan := func() *planner.Graph {
		sts, err := sql.Parse(query)
		if err != nil {
			t.Fatal(err)
		}
		jo, err := planner.ParseJobOptions(s.Options())
		if err != nil {
			t.Fatal(err)
		}
		p := &planner.Planner{Catalog: s.Catalog(), Options: jo}
		sink, err := p.Query(sts[0], sts[0].(*sql.Select).Query)
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Physical([]*planner.Sink{sink})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a := &stepControl{total: 5, feed: make(chan int64), nexts: make(chan int, 1)}
	b := &stepControl{total: 9, feed: make(chan int64), nexts: make(chan int, 1)}
	stepSources.Lock()
	stepSources.m["step_a"], stepSources.m["step_b"] = a, b
	stepSources.Unlock()
	defer func() {
		stepSources.Lock()
		delete(stepSources.m, "step_a")
		delete(stepSources.m, "step_b")
		stepSources.Unlock()
	}()

	storage := checkpoint.NewStorage(t.TempDir())
	opts := checkpoint.Options{Mode: checkpoint.AtLeastOnce, MaxConcurrent: 2, NumRetained: 10,
		Timeout: 10 * time.Minute, RetainOnCancel: true}
	var counts map[string]int64
	var mu sync.Mutex
	collect := func(bt exec.Batch) error {
		mu.Lock()
		defer mu.Unlock()
		ks, cs := bt.Rec.Column(0).(*array.String), bt.Rec.Column(1).(*array.Int64)
		for i := range int(bt.Rec.NumRows()) {
			if bt.Ops == nil || bt.Ops[i] == exec.Insert || bt.Ops[i] == exec.UpdateAfter {
				counts[ks.Value(i)] = cs.Value(i)
			} else {
				delete(counts, ks.Value(i))
			}
		}
		return nil
	}
	start := func(restore *checkpoint.Metadata) *exec.Job {
		counts = map[string]int64{}
		o := exec.Options{Collect: collect, Restore: restore, StateDir: t.TempDir(),
			Checkpoint: &exec.CheckpointOptions{JobName: "step", Storage: storage, Options: opts}}
		j, err := exec.Start(ctx, plan(), o)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}

	// The first run: a emits 2 rows and then serves the triggers; b emits
	// 3 and is held.
	a.setMode(stepIdle)
	b.setMode(stepHeld)
	j := start(nil)
	a.feed <- 2
	b.feed <- 3
	waitNext(t, b, 0) // b emitted its 3 rows and is held in Next
	coord := j.Coordinator()
	type result struct {
		md  *checkpoint.Metadata
		err error
	}
	cps := make([]chan result, 2)
	for i := range cps {
		cps[i] = make(chan result, 1)
		go func() {
			md, err := coord.Checkpoint(ctx)
			cps[i] <- result{md, err}
		}()
		// a serves the trigger (and sends the barrier) before the next one
		// is triggered, so that the ids reach it in order.
		waitNext(t, a, i+1)
	}
	// a sent barriers n and n+1 (its Next runs after them); b, held, sent
	// none. b now emits 2 rows, then serves both triggers.
	b.setMode(stepIdle)
	b.feed <- 2
	var done []*checkpoint.Metadata
	for i, c := range cps {
		r := <-c
		if r.err != nil {
			t.Errorf("checkpoint %d of 2 did not complete: %v", i+1, r.err)
			continue
		}
		done = append(done, r.md)
	}
	j.Cancel()
	j.Wait()

	// Restore from each checkpoint that completed (newest first): the
	// sources emit the rest (a up to 5 rows, b up to 9) and end.
	a.setMode(stepFree)
	b.setMode(stepFree)
	for i := len(done) - 1; i >= 0; i-- {
		md := done[i]
		j := start(md)
		if err := j.Wait(); err != nil {
			t.Fatalf("restored from checkpoint %d: %v", md.ID, err)
		}
		mu.Lock()
		got := fmt.Sprint(counts)
		mu.Unlock()
		if want := "map[step_a:5 step_b:9]"; got != want {
			t.Errorf("restored from checkpoint %d: counts %s, want %s", md.ID, got, want)
		}
	}
	if len(done) != 2 {
		t.Fatalf("%d of the 2 checkpoints completed", len(done))
	}
}
