package exec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// TestJobEndsAfterItsFinalCheckpoint: once every source of a checkpointed
// job has reached its end, the job takes its final checkpoint from a
// goroutine of its own. A job canceled (or failed) while that checkpoint
// makes its directory must not end before it: Wait returns once nothing
// the job started writes under its checkpoints any more (a session
// removes them after a canceled job, a test's TempDir cleanup after the
// session closed), and the canceled checkpoint's directory is gone.
//
// The test runs in a synctest bubble: synctest.Wait returns once every
// goroutine of the job is blocked, so a job that would end without its
// checkpoint goroutine has ended by then.
func TestJobEndsAfterItsFinalCheckpoint(t *testing.T) {
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Execute(context.Background(), "CREATE TABLE step_end (k STRING) WITH ('connector' = 'step-test')"); err != nil {
		t.Fatal(err)
	}
	sts, err := sql.Parse("SELECT k FROM step_end")
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
	c := &stepControl{total: 3, mode: stepFree, feed: make(chan int64), nexts: make(chan int, 1)}
	stepSources.Lock()
	stepSources.m["step_end"] = c
	stepSources.Unlock()
	defer func() {
		stepSources.Lock()
		delete(stepSources.m, "step_end")
		stepSources.Unlock()
	}()

	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		// The final checkpoint's directory is held in the making until the
		// test lets it go.
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		uninstall := fsutil.Install(root, fsutil.Inject(fsutil.OS, func(op fsutil.Op) error {
			if op.Kind == fsutil.OpMkdirAll && strings.HasPrefix(filepath.Base(op.Path), "chk-") {
				once.Do(func() { close(entered) })
				<-release
			}
			return nil
		}))
		defer uninstall()

		o := exec.Options{Collect: func(exec.Batch) error { return nil }, StateDir: t.TempDir(),
			Checkpoint: &exec.CheckpointOptions{JobName: "step-end", Storage: checkpoint.NewStorage(root),
				Options: checkpoint.Options{MaxConcurrent: 1, NumRetained: 1, Timeout: 10 * time.Minute}}}
		j, err := exec.Start(context.Background(), g, o)
		if err != nil {
			t.Fatal(err)
		}
		<-entered // the source ended; the final checkpoint makes its directory
		j.Cancel()
		synctest.Wait()
		select {
		case <-j.Done():
			t.Error("the job ended while its final checkpoint was still making its directory")
		default:
		}
		close(release)
		if err := j.Wait(); !errors.Is(err, exec.ErrStopped) {
			t.Errorf("Wait: %v, want %v", err, exec.ErrStopped)
		}
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("left under the checkpoints of the canceled job: %s", e.Name())
		}
	})
}
