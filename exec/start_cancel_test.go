package exec_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// errAfter is a context whose Err reports it canceled from its after-th
// call on: Start must look at it while it builds, not only before.
type errAfter struct {
	context.Context
	calls, after int64
}

func (c *errAfter) Err() error {
	if atomic.AddInt64(&c.calls, 1) >= c.after {
		return context.Canceled
	}
	return nil
}

// TestStartStopsWhenCanceled: a context done while a job of many subtasks
// is being built (a shutdown, a client gone) stops the building with the
// context's error; nothing runs.
func TestStartStopsWhenCanceled(t *testing.T) {
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE clicks (app_id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10')",
		"SET 'parallelism.default' = '64'",
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sts, err := sql.Parse("SELECT app_id, COUNT(*) FROM clicks GROUP BY app_id")
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
	// How often Start looks at a context that stays live: at the end of
	// the build loop, its last look.
	live := &errAfter{Context: context.Background(), after: 1 << 62}
	j, err := exec.Start(live, g, exec.Options{Collect: func(exec.Batch) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	n := atomic.LoadInt64(&live.calls)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if n < int64(len(g.Operators)) {
		t.Fatalf("Start looked at its context %d times for %d operators", n, len(g.Operators))
	}
	for _, after := range []int64{1, n / 3, 2 * n / 3, n} {
		c := &errAfter{Context: context.Background(), after: after}
		j, err := exec.Start(c, g, exec.Options{Collect: func(exec.Batch) error { return nil }})
		if err == nil {
			j.Cancel()
			j.Wait()
			t.Fatalf("canceled at its look %d of %d: Start built and started the job", after, n)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled at its look %d of %d: got %v, want context.Canceled", after, n, err)
		}
	}
}
