package testenv

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Proc is one run of a program under test (the streamsql binary): its
// stdout and stderr are captured together, and it is killed, failing the
// test at Wait, when it runs longer than its timeout (a hang is a bug too).
type Proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     SyncBuffer
	timeout time.Duration
	timer   *time.Timer
	// timedOut is set when the run was killed for taking the timeout.
	timedOut atomic.Bool
	done     chan struct{}
	// Start is when the run started; End and Err (of cmd.Wait) are set
	// before Done closes.
	Start, End time.Time
	Err        error
}

// StartProc starts program with args and the extra environment variables
// env ("NAME=value").
func StartProc(t *testing.T, timeout time.Duration, env []string, program string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, cmd: exec.Command(program, args...), timeout: timeout, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.Start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", program, err)
	}
	p.timer = time.AfterFunc(timeout, func() {
		p.timedOut.Store(true)
		p.cmd.Process.Kill()
	})
	go func() {
		p.Err = p.cmd.Wait()
		p.End = time.Now()
		p.timer.Stop()
		close(p.done)
	}()
	return p
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns the error of cmd.Wait
// (nil for exit status 0). A run killed for its timeout fails the test.
func (p *Proc) Wait() error {
	<-p.done
	if p.timedOut.Load() {
		p.t.Fatalf("%s still running after %v; killed. Output:\n%s", p.cmd.Path, p.timeout, p.Output())
	}
	return p.Err
}

// Output is what the process printed so far.
func (p *Proc) Output() string { return p.out.String() }

// Took is how long the run lasted (once it has exited).
func (p *Proc) Took() time.Duration { return p.End.Sub(p.Start).Round(time.Millisecond) }

// Args are the program and its arguments.
func (p *Proc) Args() []string { return p.cmd.Args }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// KillAfter sends SIGKILL d after the start unless the process exits first.
// It reports whether the signal killed a running process; either way the
// process has exited when it returns.
func (p *Proc) KillAfter(d time.Duration) bool {
	select {
	case <-p.done:
		return false
	case <-time.After(time.Until(p.Start.Add(d))):
	}
	err := p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return err == nil && KilledBySignal(p.Err, syscall.SIGKILL)
}

// KilledBySignal says whether err (of cmd.Wait) means the process died of
// signal sig.
func KilledBySignal(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
