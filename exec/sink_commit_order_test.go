package exec_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	preCommits chan int64 // the ids pre-committed (a test's signal)
}

var orderSinks = struct {
	sync.Mutex
	m map[string]*orderSink
}{m: map[string]*orderSink{}}

func init() {
	exec.RegisterConnector(catalog.Connector{Name: "commit-order-test", Sink: true}, nil, func(spec exec.TableSpec) (exec.Sink, error) {
		orderSinks.Lock()
		defer orderSinks.Unlock()
		s := orderSinks.m[fmt.Sprintf("%s/%d", spec.Table, spec.Subtask)]
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
	for _, p := range s.pending {
		if p < id {
			s.violations = append(s.violations, fmt.Sprintf("pre-commit of checkpoint %d while %d was neither committed nor aborted", id, p))
		}
	}
	s.pending = append(s.pending, id)
	hook := s.hook
	s.mu.Unlock()
	select {
	case s.preCommits <- id:
	default:
	}
	if hook != nil {
		hook(id)
	}
	return []byte{1}, nil
}

func (s *orderSink) Commit(_ context.Context, id int64, _ []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = slices.DeleteFunc(s.pending, func(p int64) bool { return p <= id })
	return nil
}

func (s *orderSink) Finish(context.Context) error { return nil }

// CommitBeforeNextPreCommit: the sink is an exec.OrderedCommitter.
func (s *orderSink) CommitBeforeNextPreCommit() bool { return true }
func (s *orderSink) Close() error                    { return nil }

// startOrderJob runs INSERT INTO order_out SELECT k FROM order_in: a
// step source, idle (it serves triggers between polls), into an
// orderSink per subtask, at parallelism; checkpoints taken when the test
// asks, at most maxConcurrent at a time.
func startOrderJob(t *testing.T, maxConcurrent, parallelism int) (*stepControl, []*orderSink, *checkpoint.Coordinator) {
	ctx := context.Background()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, q := range []string{
		fmt.Sprintf("SET 'parallelism.default' = '%d'", parallelism),
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
	sinks := make([]*orderSink, parallelism)
	for i := range sinks {
		sinks[i] = &orderSink{gate: make(chan struct{}), preCommits: make(chan int64, 1000)}
	}
	stepSources.Lock()
	stepSources.m["order_in"] = src
	stepSources.Unlock()
	orderSinks.Lock()
	for i := range parallelism {
		orderSinks.m[fmt.Sprintf("order_out/%d", i)] = sinks[i]
	}
	orderSinks.Unlock()
	t.Cleanup(func() {
		stepSources.Lock()
		delete(stepSources.m, "order_in")
		stepSources.Unlock()
		orderSinks.Lock()
		clear(orderSinks.m)
		orderSinks.Unlock()
	})
	opts := checkpoint.Options{Mode: checkpoint.ExactlyOnce, MaxConcurrent: maxConcurrent, NumRetained: 2, Timeout: 10 * time.Minute}
	j, err := exec.Start(ctx, g, exec.Options{StateDir: t.TempDir(),
		Checkpoint: &exec.CheckpointOptions{JobName: "order", Storage: checkpoint.NewStorage(t.TempDir()), Options: opts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, snk := range sinks {
			close(snk.gate) // a Write that waits goes on
		}
		j.Cancel()
		j.Wait()
	})
	return src, sinks, j.Coordinator()
}

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
	src, sinks, coord := startOrderJob(t, 1, 1)
	snk := sinks[0]
	ctx := context.Background()
	hook := func(int64) {
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
	snk.mu.Lock()
	snk.hook = hook
	snk.mu.Unlock()
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

// TestOrderedSinkWaitsForOutcome: two sink subtasks; with two checkpoints
// in flight, subtask 0 gets the barriers of n and n+1 while subtask 1 has
// not yet acknowledged n (its PreCommit is slow), so n is not complete:
// an OrderedCommitter pre-commits n+1 only after n completed and it
// committed n (a jdbc sink's transaction of n+1 would wait for the rows
// n's prepared transaction holds). Subtask 1's PreCommit of n waits until
// subtask 0 pre-committed n+1 or for 200 ms: with the wait, subtask 0
// cannot, and n completes once subtask 1 is done; without it, subtask 0
// pre-commits n+1 while n is undecided (a busy machine can only hide
// that, never fail the test).
func TestOrderedSinkWaitsForOutcome(t *testing.T) {
	_, sinks, coord := startOrderJob(t, 2, 2)
	ctx := context.Background()
	a, b := sinks[0], sinks[1]
	b.mu.Lock()
	b.hook = func(id int64) {
		deadline := time.After(200 * time.Millisecond)
		for {
			select {
			case got := <-a.preCommits:
				if got > id {
					return
				}
			case <-deadline:
				return
			}
		}
	}
	b.mu.Unlock()
	const rounds = 10
	for n := 1; n <= 2*rounds; n += 2 {
		var dones []chan error
		for range 2 {
			done := make(chan error, 1)
			go func() {
				_, err := coord.Checkpoint(ctx)
				done <- err
			}()
			dones = append(dones, done)
		}
		for _, done := range dones {
			// The newer of two checkpoints in flight may complete first
			// and subsume the older.
			if err := <-done; err != nil && !errors.Is(err, checkpoint.ErrSubsumed) {
				t.Fatal(err)
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.violations) > 0 {
		t.Fatalf("%d of %d rounds:\n%v", len(a.violations), rounds, a.violations)
	}
}
