package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
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
// user+sys CPU time and ru_maxrss, the peak resident set of that process
// (Linux reports KiB).
func childUsage(cmd *exec.Cmd) usage {
	st := cmd.ProcessState
	if st == nil {
		return usage{}
	}
	u := usage{cpu: st.UserTime() + st.SystemTime()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.maxRSS = int64(ru.Maxrss) * 1024
	}
	return u
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
		u.maxRSS = vmHWM()
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

// vmHWM is the VmHWM line of /proc/self/status in bytes (0 if unknown).
func vmHWM() int64 {
	st, err := os.ReadFile("/proc/self/status")
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
