package checkpoint

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSavepointFormat: a savepoint is canonical unless asked for NATIVE, a
// checkpoint always native; the subtasks learn it from Canonical while it
// is pending; the metadata records the format and the backend, and a
// savepoint written from it keeps both.
func TestSavepointFormat(t *testing.T) {
	task := Task{Operator: "op", Name: "Source", Parallelism: 1}
	c := NewCoordinator(Config{Job: &fakeJob{}, JobName: "j", Storage: NewStorage(t.TempDir()),
		Options: Options{Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 3},
		Tasks:   []Task{task}, Backend: "pebble", Fail: func(error) {},
	})
	for _, tc := range []struct {
		savepoint bool
		asked     Format
		want      Format
	}{
		{false, FormatNative, FormatNative},
		{true, "", FormatCanonical},
		{true, FormatCanonical, FormatCanonical},
		{true, FormatNative, FormatNative},
	} {
		f := tc.asked
		if f == "" {
			f = FormatCanonical // what wait makes of ""
		}
		p, err := c.trigger(tc.savepoint, f, true)
		if err != nil || p == nil {
			t.Fatalf("trigger: %v", err)
		}
		if got := c.Canonical(p.id); got != (tc.want == FormatCanonical) {
			t.Errorf("savepoint %v %q: Canonical(%d) = %v", tc.savepoint, tc.asked, p.id, got)
		}
		c.Ack(p.id, task, SubtaskState{})
		r := <-p.done
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.md.Format != tc.want || r.md.Backend != "pebble" {
			t.Errorf("savepoint %v %q: metadata says format %q backend %q, want %q pebble", tc.savepoint, tc.asked, r.md.Format, r.md.Backend, tc.want)
		}
		md, err := ReadMetadata(r.md.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if md.StateFormat() != tc.want || md.Backend != "pebble" {
			t.Errorf("written metadata: format %q backend %q", md.StateFormat(), md.Backend)
		}
		if c.Canonical(p.id) {
			t.Errorf("Canonical(%d) after it completed", p.id)
		}
		if tc.savepoint {
			dir, err := WriteSavepoint(r.md, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			sp, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if sp.StateFormat() != tc.want || sp.Backend != "pebble" || !sp.Savepoint {
				t.Errorf("savepoint metadata: format %q backend %q savepoint %v", sp.StateFormat(), sp.Backend, sp.Savepoint)
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatCanonical, "canonical": FormatCanonical, "NATIVE": FormatNative, " Native ": FormatNative} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFormat("rocksdb"); err == nil || !strings.Contains(err.Error(), "unknown savepoint format 'rocksdb' (CANONICAL or NATIVE)") {
		t.Errorf("ParseFormat(rocksdb): %v", err)
	}
}

// TestCheckBackend: native store state restores only under the backend
// that wrote it, with an error that says how to move it; canonical state,
// metadata that names no backend, and state without stores, under any.
func TestCheckBackend(t *testing.T) {
	stores := []*OperatorState{{ID: "op", Subtasks: []SubtaskState{{Subtask: 0, Dir: "op-0"}}}}
	inline := []*OperatorState{{ID: "src", Subtasks: []SubtaskState{{Subtask: 0, Inline: []byte{1}}}}}
	native := &Metadata{ID: 7, Savepoint: true, Format: FormatNative, Backend: "pebble", Dir: "/sp", Operators: stores}
	if err := native.CheckBackend("pebble"); err != nil {
		t.Errorf("same backend: %v", err)
	}
	err := native.CheckBackend("hashmap")
	if !errors.Is(err, ErrIncompatibleState) || !strings.Contains(err.Error(), "savepoint 7 at /sp is in the native format of the 'pebble' state backend and cannot be restored under 'hashmap'") ||
		!strings.Contains(err.Error(), "take a canonical savepoint") {
		t.Errorf("native under another backend: %v", err)
	}
	ckpt := &Metadata{ID: 3, Backend: "hashmap", Dir: "/chk-3", Operators: stores}
	if err := ckpt.CheckBackend("pebble"); err == nil || !strings.Contains(err.Error(), "checkpoint 3 at /chk-3") {
		t.Errorf("checkpoint under another backend: %v", err)
	}
	for _, md := range []*Metadata{
		{Format: FormatCanonical, Backend: "pebble", Operators: stores},
		{Savepoint: true, Operators: stores},
		{ID: 4, Backend: "pebble", Operators: inline},
	} {
		if err := md.CheckBackend("hashmap"); err != nil {
			t.Errorf("%+v: %v", md, err)
		}
	}
}

// ackingJob acknowledges every checkpoint for its one task at once.
type ackingJob struct {
	c    *Coordinator
	task Task
}

func (j *ackingJob) TriggerCheckpoint(id int64, _ bool) error {
	go j.c.Ack(id, j.task, SubtaskState{})
	return nil
}
func (*ackingJob) NotifyComplete(int64) {}
func (*ackingJob) NotifyAborted(int64)  {}

// TestSavepointHoldsPeriodicCheckpoints: from a savepoint's trigger until
// its caller releases it, no periodic checkpoint starts, so none prunes
// the savepoint's directory (NumRetained 1) while the caller copies it.
func TestSavepointHoldsPeriodicCheckpoints(t *testing.T) {
	task := Task{Operator: "op", Name: "Source", Parallelism: 1}
	job := &ackingJob{task: task}
	c := NewCoordinator(Config{Job: job, JobName: "j", Storage: NewStorage(t.TempDir()),
		Options: Options{Interval: time.Hour, Timeout: time.Minute, MaxConcurrent: 1, NumRetained: 1},
		Tasks:   []Task{task}, Fail: func(error) {},
	})
	job.c = c
	md, release, err := c.Savepoint(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.trigger(false, FormatNative, false); p != nil || err != nil {
		t.Fatalf("a periodic checkpoint started while the savepoint is held: %v %v", p, err)
	}
	if _, err := WriteSavepoint(md, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	release()
	release() // a second call changes nothing
	p, err := c.trigger(false, FormatNative, false)
	if err != nil || p == nil {
		t.Fatalf("no periodic checkpoint after the release: %v", err)
	}
	if r := <-p.done; r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := os.Stat(md.Dir); !os.IsNotExist(err) {
		t.Errorf("the savepoint's checkpoint directory outlived the next checkpoint with NumRetained 1: %v", err)
	}
}
