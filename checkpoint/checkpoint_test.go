package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestMetadataRoundTripAndDamage(t *testing.T) {
	s := NewStorage(t.TempDir())
	for id := int64(1); id <= 3; id++ {
		dir, err := s.Prepare(id)
		if err != nil {
			t.Fatal(err)
		}
		md := &Metadata{Job: "j", ID: id, MaxParallelism: 128, Operators: []*OperatorState{
			{ID: "op", Name: "Source", Parallelism: 1, Subtasks: []SubtaskState{{Inline: []byte("pos")}}}}}
		if err := WriteMetadata(dir, md); err != nil {
			t.Fatal(err)
		}
	}
	// A directory without _metadata (a crash mid-checkpoint) is no checkpoint.
	if _, err := s.Prepare(4); err != nil {
		t.Fatal(err)
	}
	next, _ := s.NextID()
	if next != 5 {
		t.Fatalf("NextID = %d, want 5", next)
	}
	done, warnings, err := s.Completed()
	if err != nil || len(done) != 3 || len(warnings) != 0 || done[0].ID != 3 || string(done[0].Operator("op").Subtasks[0].Inline) != "pos" {
		t.Fatalf("Completed = %v %v %v", done, warnings, err)
	}
	// Truncated and garbage metadata are skipped with a warning each.
	path := filepath.Join(s.Dir(3), MetadataFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)/2], 0o644)
	os.WriteFile(filepath.Join(s.Dir(2), MetadataFile), []byte("{}"), 0o644)
	done, warnings, _ = s.Completed()
	if len(done) != 1 || done[0].ID != 1 || len(warnings) != 2 {
		t.Fatalf("after damage: %d completed (first %v), warnings %q", len(done), done, warnings)
	}
	if _, err := ReadMetadata(s.Dir(3)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated metadata: %v, want ErrCorrupt", err)
	}
	// Retain keeps the newest n completed, and drops older incomplete dirs.
	if err := s.Retain(1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir(1)); err != nil {
		t.Fatalf("newest completed checkpoint was removed: %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{KeyInterval: "200 ms", KeyMode: "at_least_once", KeyTolerable: "2", KeyRetention: "DELETE_ON_CANCELLATION"})
	if err != nil || o.Interval != 200*time.Millisecond || o.Mode != AtLeastOnce || o.TolerableFailures != 2 || o.RetainOnCancel || o.NumRetained != 1 {
		t.Fatalf("ParseOptions = %+v, %v", o, err)
	}
	for _, bad := range []map[string]string{{KeyInterval: "soon"}, {KeyMode: "twice"}, {KeyMaxConcurrent: "0"}} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("ParseOptions(%v) accepted a bad value", bad)
		}
	}
}

func TestRestartStrategies(t *testing.T) {
	now := time.Unix(0, 0)
	fixed, _ := ParseRestart(map[string]string{KeyRestartType: "fixed-delay", "restart-strategy.fixed-delay.attempts": "2", "restart-strategy.fixed-delay.delay": "5s"}, true)
	for i, want := range []bool{true, true, false} {
		if d, ok := fixed.Next(now); ok != want || (ok && d != 5*time.Second) {
			t.Fatalf("fixed-delay attempt %d: %v %v", i, d, ok)
		}
	}
	rate, _ := ParseRestart(map[string]string{KeyRestartType: "failure-rate", "restart-strategy.failure-rate.max-failures-per-interval": "2",
		"restart-strategy.failure-rate.failure-rate-interval": "1 min"}, true)
	rate.Next(now)
	rate.Next(now.Add(time.Second))
	if _, ok := rate.Next(now.Add(2 * time.Second)); ok {
		t.Fatal("failure-rate allowed a third failure within the interval")
	}
	if _, ok := rate.Next(now.Add(3 * time.Minute)); !ok {
		t.Fatal("failure-rate refused after the interval passed")
	}
	exp, _ := ParseRestart(map[string]string{}, true)
	var delays []time.Duration
	for i := 0; i < 8; i++ {
		d, ok := exp.Next(now.Add(time.Duration(i) * time.Second))
		if !ok {
			t.Fatal("exponential-delay gave up")
		}
		delays = append(delays, d)
	}
	if delays[0] != time.Second || delays[1] != 2*time.Second || delays[7] != time.Minute {
		t.Fatalf("exponential delays %v", delays)
	}
	none, _ := ParseRestart(map[string]string{}, false)
	if _, ok := none.Next(now); ok {
		t.Fatal("without checkpointing the default must not restart")
	}
	if _, err := ParseRestart(map[string]string{KeyRestartType: "sometimes"}, true); err == nil {
		t.Fatal("bad restart-strategy.type accepted")
	}
}

// TestExponentialDelayReset: the backoff starts again from the initial
// delay once the job ran 'reset-backoff-threshold' since its last restart
// (the failure plus its delay) without failing, not before; a backoff
// carried over from failures at start-up does not grow later ones.
func TestExponentialDelayReset(t *testing.T) {
	exp, err := ParseRestart(map[string]string{"restart-strategy.exponential-delay.reset-backoff-threshold": "10 min"}, true)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, 0)
	// Five failures at start-up, each as soon as the job runs again.
	for i, want := range []time.Duration{1, 2, 4, 8, 16} {
		d, ok := exp.Next(at)
		if !ok || d != want*time.Second {
			t.Fatalf("failure %d: delay %v %v, want %v", i+1, d, ok, want*time.Second)
		}
		at = at.Add(d)
	}
	// at is the last restart. More than ten minutes since the last
	// failure, but the job ran 8 s less: not reset.
	if d, _ := exp.Next(at.Add(10*time.Minute - 8*time.Second)); d != 32*time.Second {
		t.Fatalf("a failure before the threshold: delay %v, want 32s", d)
	}
	at = at.Add(10*time.Minute - 8*time.Second + 32*time.Second)
	// Ten minutes of running since that restart: reset.
	if d, _ := exp.Next(at.Add(10 * time.Minute)); d != time.Second {
		t.Fatalf("a failure after ten minutes of running: delay %v, want the initial 1s", d)
	}
}

// fakeJob is a Job whose sources never send a barrier.
type fakeJob struct{ triggered atomic.Int64 }

func (j *fakeJob) TriggerCheckpoint(int64, bool) error { j.triggered.Add(1); return nil }
func (*fakeJob) NotifyComplete(int64)                  {}
func (*fakeJob) NotifyAborted(int64)                   {}

// TestTriggerFailureCounts: a checkpoint whose directory cannot be made
// (here the checkpoints' root is a file) fails, counts against the
// tolerable failures with its cause, and past them fails the job with
// ErrTooManyFailures wrapping that cause.
func TestTriggerFailureCounts(t *testing.T) {
	root := filepath.Join(t.TempDir(), "checkpoints")
	if err := os.WriteFile(root, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	var reported atomic.Int64
	job := &fakeJob{}
	c := NewCoordinator(Config{Job: job, JobName: "j", Storage: NewStorage(root),
		Options: Options{Interval: time.Millisecond, Timeout: time.Minute, MaxConcurrent: 1, TolerableFailures: 2},
		Tasks:   []Task{{Operator: "op", Name: "Source", Parallelism: 1}},
		Fail: func(err error) {
			select {
			case failed <- err:
			default: // later failures past the limit: the first one counts
			}
		},
		Failed: func(id int64, err error, inRow int) {
			if !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("checkpoint %d failed with %v, want ENOTDIR", id, err)
			}
			reported.Add(1)
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	// The callbacks run on Run's goroutine: the test ends only after it,
	// so none reports into a finished test.
	defer func() { cancel(); <-ran }()
	go func() { defer close(ran); c.Run(ctx) }()
	var err error
	select {
	case err = <-failed:
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not fail; stats %+v", c.Stats())
	}
	cancel()
	<-ran
	if !errors.Is(err, ErrTooManyFailures) || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("job failed with %v, want ErrTooManyFailures wrapping ENOTDIR", err)
	}
	if st := c.Stats(); st.Failed < 3 || st.Completed != 0 {
		t.Fatalf("stats %+v: want 3 failed checkpoints (2 tolerated)", st)
	}
	if reported.Load() < 3 || job.triggered.Load() != 0 {
		t.Fatalf("%d failures reported, %d checkpoints triggered: want >= 3 and 0", reported.Load(), job.triggered.Load())
	}
	if _, err := c.Checkpoint(context.Background()); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("a forced checkpoint: %v, want ENOTDIR", err)
	}
}

// TestExpiredCheckpointFailsJob: a checkpoint no subtask acknowledges (one
// blocked in its state's disk, say) expires after the timeout and, past the
// tolerable failures, fails the job naming the expiry.
func TestExpiredCheckpointFailsJob(t *testing.T) {
	failed := make(chan error, 1)
	c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: NewStorage(t.TempDir()),
		Options: Options{Interval: time.Millisecond, Timeout: 20 * time.Millisecond, MaxConcurrent: 1},
		Tasks:   []Task{{Operator: "op", Name: "Source", Parallelism: 1}},
		Fail: func(err error) {
			select {
			case failed <- err:
			default: // later failures past the limit: the first one counts
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	// Run writes into the test's directory: the test ends after it.
	defer func() { cancel(); <-ran }()
	go func() { defer close(ran); c.Run(ctx) }()
	select {
	case err := <-failed:
		if !errors.Is(err, ErrTooManyFailures) || !strings.Contains(err.Error(), "expired after 20ms") {
			t.Fatalf("job failed with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not fail; stats %+v", c.Stats())
	}
}

// TestSavepointSubsumesPendingCheckpoint: a savepoint forced while
// checkpoint 1 is still aligning completes first. Checkpoint 1 is then
// subsumed: it ends with ErrSubsumed and counts as no failure (before, the
// savepoint's pruning removed its directory and its late completion failed
// writing _metadata, which failed a job that tolerates no failure).
func TestSavepointSubsumesPendingCheckpoint(t *testing.T) {
	var failed atomic.Int64
	task := Task{Operator: "op", Name: "Source", Parallelism: 1}
	c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: NewStorage(t.TempDir()),
		Options: Options{Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 1},
		Tasks:   []Task{task},
		Fail:    func(error) { failed.Add(1) },
	})
	first, err := c.trigger(false, FormatNative, true)
	if err != nil || first == nil {
		t.Fatalf("checkpoint 1: %v", err)
	}
	sp, err := c.trigger(true, FormatCanonical, true)
	if err != nil || sp == nil {
		t.Fatalf("savepoint: %v", err)
	}
	c.Ack(sp.id, task, SubtaskState{})
	if r := <-sp.done; r.err != nil {
		t.Fatalf("savepoint %d: %v", sp.id, r.err)
	}
	c.Ack(first.id, task, SubtaskState{}) // too late: nothing pending
	select {
	case r := <-first.done:
		if !errors.Is(r.err, ErrSubsumed) {
			t.Fatalf("checkpoint 1 ended with %v, want ErrSubsumed", r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("checkpoint 1 never ended")
	}
	if st := c.Stats(); st.Failed != 0 || st.Completed != 1 || failed.Load() != 0 {
		t.Fatalf("stats %+v, job failed %d times: want 1 completed, no failure", st, failed.Load())
	}
}

// TestHistory: completed and failed checkpoints enter the history in
// order with their alignment (the longest of their subtasks'), a failure
// with its cause; completed durations are counted into DurationBuckets;
// the history keeps the newest HistorySize. Config.Recorded is told of
// each record before the checkpoint's waiter returns.
func TestHistory(t *testing.T) {
	a := Task{Operator: "op", Name: "Join", Subtask: 0, Parallelism: 2}
	b := Task{Operator: "op", Name: "Join", Subtask: 1, Parallelism: 2}
	var mu sync.Mutex
	var recorded []Record
	c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: NewStorage(t.TempDir()),
		Options: Options{Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 1, TolerableFailures: 1000},
		Tasks:   []Task{a, b},
		Recorded: func(r Record) {
			mu.Lock()
			recorded = append(recorded, r)
			mu.Unlock()
		}})
	p, err := c.trigger(false, FormatNative, true)
	if err != nil {
		t.Fatal(err)
	}
	c.Ack(p.id, a, SubtaskState{Alignment: 3 * time.Millisecond})
	c.Ack(p.id, b, SubtaskState{Alignment: 7 * time.Millisecond})
	if r := <-p.done; r.err != nil {
		t.Fatal(r.err)
	}
	q, err := c.trigger(false, FormatNative, true)
	if err != nil {
		t.Fatal(err)
	}
	c.Abort(q.id, errors.New("disk full"))
	<-q.done
	h := c.History()
	if len(h) != 2 || h[0].ID != p.id || h[0].Status != StatusCompleted || h[0].Alignment != 7*time.Millisecond ||
		h[1].ID != q.id || h[1].Status != StatusFailed || h[1].Failure != "disk full" {
		t.Fatalf("history %+v", h)
	}
	mu.Lock()
	if !reflect.DeepEqual(recorded, h) {
		t.Fatalf("Recorded was told of %+v, the history is %+v", recorded, h)
	}
	mu.Unlock()
	d := c.Stats().Durations
	if d.Count != 1 || d.Buckets[len(d.Buckets)-1] != 1 {
		t.Fatalf("durations %+v: want one completed checkpoint counted", d)
	}
	for i := 0; i < HistorySize+5; i++ {
		r, err := c.trigger(false, FormatNative, true)
		if err != nil {
			t.Fatal(err)
		}
		c.Abort(r.id, errors.New("again"))
		<-r.done
	}
	if h := c.History(); len(h) != HistorySize || h[len(h)-1].ID != q.id+HistorySize+5 {
		t.Fatalf("history of %d, newest %d: want the newest %d", len(h), h[len(h)-1].ID, HistorySize)
	}
}
