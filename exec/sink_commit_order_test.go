package exec_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// orderSink records the order of its pre-commits and commits. Its
// PreCommit calls hook (in the sink's goroutine); a Write after gated was
// set waits for gate.
type orderSink struct {
	mu         sync.Mutex
	pending    []int64 // pre-committed, not committed
	violations []string
	hook       func(id int64)
	gated      bool
	gate       chan struct{}
}

var orderSinks = struct {
	sync.Mutex
	m map[string]*orderSink
}{m: map[string]*orderSink{}}

func init() {
	exec.RegisterConnector(catalog.Connector{Name: "commit-order-test", Sink: true}, nil, func(spec exec.TableSpec) (exec.Sink, error) {
		orderSinks.Lock()
		defer orderSinks.Unlock()
		s := orderSinks.m[spec.Table]
		if s == nil {
			return nil, fmt.Errorf("no order sink for table %s", spec.Table)
		}
		return s, nil
	})
}

func (s *orderSink) Open(context.Context) error { return nil }
func (s *orderSink) Write(ctx context.Context, _ exec.Batch) error {
	s.mu.Lock()
	gated := s.gated
	s.gated = false
	s.mu.Unlock()
	if gated {
		select {
		case <-s.gate:
		case <-ctx.Done():
		}
	}
	return nil
}

func (s *orderSink) PreCommit(_ context.Context, id int64) ([]byte, error) {
	s.mu.Lock()
	if len(s.pending) > 0 {
		s.violations = append(s.violations, fmt.Sprintf("pre-commit of checkpoint %d before the commit of %v, which completed before it was triggered", id, s.pending))
	}
	s.pending = append(s.pending, id)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(id)
	}
	return []byte{1}, nil
}

func (s *orderSink) Commit(_ context.Context, id int64, _ []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.pending) > 0 && s.pending[0] <= id {
		s.pending = s.pending[1:]
	}
	return nil
}

func (s *orderSink) Finish(context.Context) error { return nil }
func (s *orderSink) Close() error                 { return nil }

// TestSinkCommitsBeforeNextPreCommit: a sink subtask told that checkpoint
// n completed commits it before it pre-commits checkpoint n+1, even when
// both the completion and the barrier of n+1 wait for it (it was busy
// writing a batch): a transactional sink's next transaction may need rows
// that n's transaction, prepared and not yet committed, holds (the jdbc
// sink's, whose writes would wait for its locks). Each round: the sink
// pre-commits n and, in its PreCommit, has the source send a batch behind
// the barrier, whose Write waits until n is complete (its completion
// delivered to the sink) and the barrier of n+1 is on its way; then the
// sink has both to serve.
func TestSinkCommitsBeforeNextPreCommit(t *testing.T) {
	ctx := context.Background()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		"CREATE TABLE order_in (k STRING) WITH ('connector' = 'step-test')",
		"CREATE TABLE order_out (k STRING) WITH ('connector' = 'commit-order-test')",
	} {
		if _, err := s.Execute(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sts, err := sql.Parse("INSERT INTO order_out SELECT k FROM order_in")
	if err != nil {
		t.Fatal(err)
	}
	jo, err := planner.ParseJobOptions(s.Options())
	if err != nil {
		t.Fatal(err)
	}
	p := &planner.Planner{Catalog: s.Catalog(), Options: jo}
	sink, err := p.Insert(sts[0].(*sql.Insert))
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Physical([]*planner.Sink{sink})
	if err != nil {
		t.Fatal(err)
	}
	src := &stepControl{total: 1 << 40, feed: make(chan int64), nexts: make(chan int, 1)}
	src.setMode(stepIdle)
	snk := &orderSink{gate: make(chan struct{})}
	snk.hook = func(id int64) {
		snk.mu.Lock()
		snk.gated = true
		snk.mu.Unlock()
		// A batch behind the barrier, in the sink's input before the
		// pre-commit returns: the source calls Next again once it sent
		// it (a report of an earlier call is dropped first).
		src.feed <- 1
		select {
		case <-src.nexts:
		default:
		}
		select {
		case <-src.nexts:
		case <-time.After(2 * time.Minute):
			snk.mu.Lock()
			snk.violations = append(snk.violations, "the source did not send the batch")
			snk.mu.Unlock()
		}
	}
	stepSources.Lock()
	stepSources.m["order_in"] = src
	stepSources.Unlock()
	orderSinks.Lock()
	orderSinks.m["order_out"] = snk
	orderSinks.Unlock()
	defer func() {
		stepSources.Lock()
		delete(stepSources.m, "order_in")
		stepSources.Unlock()
		orderSinks.Lock()
		delete(orderSinks.m, "order_out")
		orderSinks.Unlock()
	}()
	opts := checkpoint.Options{Mode: checkpoint.ExactlyOnce, MaxConcurrent: 1, NumRetained: 2, Timeout: 10 * time.Minute}
	j, err := exec.Start(ctx, g, exec.Options{StateDir: t.TempDir(),
		Checkpoint: &exec.CheckpointOptions{JobName: "order", Storage: checkpoint.NewStorage(t.TempDir()), Options: opts}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		j.Cancel()
		j.Wait()
	}()
	coord := j.Coordinator()
	checkpointAsync := func() chan error {
		done := make(chan error, 1)
		go func() {
			_, err := coord.Checkpoint(ctx)
			done <- err
		}()
		return done
	}
	const rounds = 40
	done := checkpointAsync()
	for n := 1; n <= rounds; n++ {
		// Checkpoint n completes once the sink pre-committed it; its
		// completion is then in the sink's queue (the coordinator
		// delivers it before Checkpoint returns), while the sink waits in
		// the Write of the batch its PreCommit had sent.
		if err := <-done; err != nil {
			t.Fatalf("checkpoint %d: %v", n, err)
		}
		// Checkpoint n+1: its barrier follows the batch to the sink.
		done = checkpointAsync()
		waitNext(t, src, n+1)
		snk.gate <- struct{}{}
	}
	if err := <-done; err != nil {
		t.Fatalf("checkpoint %d: %v", rounds+1, err)
	}
	snk.mu.Lock()
	defer snk.mu.Unlock()
	if len(snk.violations) > 0 {
		t.Fatalf("%d of %d rounds:\n%v", len(snk.violations), rounds, snk.violations)
	}
}
