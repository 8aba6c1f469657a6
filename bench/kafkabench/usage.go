package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// usage is what a contender cost: CPU time (user+sys) and peak resident
// memory, with what the numbers cover.
type usage struct {
	cpu    time.Duration
	maxRSS int64 // bytes; 0 when unknown
	// inProcess: measured on this benchmark process (a contender running
	// in it), so the numbers include the checker and the rest of the
	// program; otherwise the contender's own process.
	inProcess bool
}

// childUsage is the rusage of an exited (or killed) child process: its
// user+sys CPU time, with peak, the peak resident set sampled from the
// process while it ran (see rssSampler).
//
// Not ru_maxrss: Go starts a child with vfork (CLONE_VM|CLONE_VFORK), and
// the kernel folds the high-water mark of the memory the child shared
// until its exec, this benchmark process's, into the child's ru_maxrss, so
// a small child of a large parent reports the parent's peak.
func childUsage(cmd *exec.Cmd, peak int64) usage {
	st := cmd.ProcessState
	if st == nil {
		return usage{}
	}
	return usage{cpu: st.UserTime() + st.SystemTime(), maxRSS: peak}
}

// rssSampler reads a running process's peak resident set (VmHWM of
// /proc/PID/status, which the kernel keeps for the process since its exec)
// every 100ms until stopped; the peak is the last value read, so growth
// in the last 100ms of the process's life is missed.
type rssSampler struct {
	pid  int
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// sample reads the peak once (a zombie or gone process has none).
func (s *rssSampler) sample() {
	if v := vmHWM("/proc/" + strconv.Itoa(s.pid) + "/status"); v > s.peak.Load() {
		s.peak.Store(v)
	}
}

// finish stops sampling and returns the peak in bytes (0: never read).
func (s *rssSampler) finish() int64 {
	close(s.stop)
	<-s.done
	return s.peak.Load()
}

// selfMeter measures this process while an in-process contender runs:
// the delta of getrusage(RUSAGE_SELF) user+sys, and the peak resident set
// since it started (the kernel's high-water mark VmHWM, reset through
// /proc/self/clear_refs; unknown where that fails).
type selfMeter struct {
	cpu      time.Duration
	hwmReset bool
}

func startSelfMeter() *selfMeter {
	m := &selfMeter{cpu: selfCPU()}
	// "5" resets the peak RSS (Linux 4.0 and later).
	m.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	return m
}

func (m *selfMeter) stop() usage {
	u := usage{cpu: selfCPU() - m.cpu, inProcess: true}
	if m.hwmReset {
		u.maxRSS = vmHWM("/proc/self/status")
	}
	return u
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmHWM is the VmHWM line of a /proc/PID/status file in bytes (0 if
// unknown).
func vmHWM(path string) int64 {
	st, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(st, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
