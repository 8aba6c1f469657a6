package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// childCost is what a benchmark run cost, measured on the process that ran
// it: wall time from its start to its exit, CPU time (user+sys, its rusage
// as wait4 returns it, all its threads), and peak resident memory.
type childCost struct {
	wall, cpu time.Duration
	// peakRSS is the process's VmHWM (/proc/PID/status) in bytes, read
	// every 10 ms in its first second and every 100 ms after while it ran
	// (growth in its last 100 ms is missed).
	// Not ru_maxrss: Go starts a child with vfork, and Linux folds the
	// high-water mark of the memory shared until the exec (this process's)
	// into the child's ru_maxrss.
	peakRSS int64
	// startCPU is the CPU time the process had used when it printed its
	// submitted line (runMeasured's submitted), its start-up; 0 when it
	// printed none.
	startCPU time.Duration
}

// runMeasured runs cmd to its end (killing it when ctx ends) and returns
// its cost, its output and, when it failed, an error with the end of its
// output. When the output first contains submitted (unless ""), the
// process's CPU time so far is read from /proc/PID/stat as its start-up.
func runMeasured(ctx context.Context, cmd *exec.Cmd, submitted string) (childCost, string, error) {
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return childCost{}, "", err
	}
	pid := cmd.Process.Pid
	var startCPU atomic.Int64
	if submitted != "" {
		out.onWrite = func(all []byte) {
			if startCPU.Load() == 0 && bytes.Contains(all, []byte(submitted)) {
				startCPU.Store(int64(procCPU(pid)))
			}
		}
	}
	var peak atomic.Int64
	sample := func() {
		if v := vmHWM(pid); v > peak.Load() {
			peak.Store(v)
		}
	}
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		// Every 10 ms for the first second, so a short run has its peak
		// read too, then every 100 ms.
		for i := 0; ; i++ {
			sample()
			every := 100 * time.Millisecond
			if i < 100 {
				every = 10 * time.Millisecond
			}
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		cmd.Process.Kill()
		<-exited
		err = fmt.Errorf("killed: %w", ctx.Err())
	}
	wall := time.Since(start)
	close(stop)
	<-sampled
	c := childCost{wall: wall, peakRSS: peak.Load(), startCPU: time.Duration(startCPU.Load())}
	if st := cmd.ProcessState; st != nil {
		c.cpu = st.UserTime() + st.SystemTime()
	}
	if err != nil {
		return c, out.String(), fmt.Errorf("%s: %v; output:\n%s", filepath.Base(cmd.Path), err, lastLines(out.String(), 40))
	}
	return c, out.String(), nil
}

// vmHWM is the VmHWM of a process in bytes, its peak resident set (0
// when unknown: gone, or a zombie).
func vmHWM(pid int) int64 { return procStatusBytes(pid, "VmHWM:") }

// vmRSS is the VmRSS of a process in bytes, its resident set now (0 when
// unknown).
func vmRSS(pid int) int64 { return procStatusBytes(pid, "VmRSS:") }

// procStatusBytes is a field of /proc/PID/status given in kB ("VmHWM:"),
// in bytes; 0 when unknown.
func procStatusBytes(pid int, field string) int64 {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(st, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			if f := bytes.Fields(v); len(f) >= 1 {
				if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// procCPU is a running process's user+sys CPU time from /proc/PID/stat
// (0 if unknown), in clock ticks of 10 ms (USER_HZ is 100 on Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses: state
	// is the first, utime the 12th and stime the 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// dirSize is the total size of the regular files under dir (0 if none).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// syncBuffer collects a process's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// onWrite, if set, is called with all the output after each write.
	onWrite func(all []byte)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.onWrite != nil {
		b.onWrite(b.buf.Bytes())
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
