package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// child is a contender that runs as a process of its own.
type child struct {
	label, note string
	cmd         *exec.Cmd
	out         *lockedBuffer // the process's stdout and stderr
	topic       string        // its output topic
	// endsItself: the process exits by itself once its job is done
	// (streamsql and Flink with a bounded source); otherwise (Kafka
	// Streams) it is killed as soon as its output is complete.
	endsItself bool
	// started, if set, is called once the process has started: it drives
	// it (a server is sent its job) and returns a function, called once
	// the output is complete or the run failed, that ends what it started
	// and returns a note on it. An error fails the run.
	started func(ctx context.Context) (stop func() string, err error)
}

// runChild starts the process and measures from its start until the
// checker has seen the complete committed output. The usage is the
// process's own rusage: from its start until it exited by itself, or
// until it was killed (SIGKILL) when its output was complete.
func runChild(ctx context.Context, b *broker, in *input, ch child) result {
	r := result{name: ch.label, note: ch.note}
	chk, err := startChecker(b.addr, ch.topic, in.counts)
	if err != nil {
		r.err = err
		return r
	}
	defer chk.close()
	start := time.Now()
	if err := ch.cmd.Start(); err != nil {
		r.err = err
		return r
	}
	rss := startRSSSampler(ch.cmd.Process.Pid)
	exited := make(chan error, 1)
	var exitedAt time.Time
	go func() {
		err := ch.cmd.Wait()
		exitedAt = time.Now()
		exited <- err
	}()
	stopStarted := func() {}
	if ch.started != nil {
		stop, err := ch.started(ctx)
		if err != nil {
			ch.cmd.Process.Kill()
			<-exited
			rss.finish()
			r.err = fmt.Errorf("%s: %w; output:\n%s", ch.label, err, tail(ch.out.String()))
			return r
		}
		stopStarted = func() {
			if note := stop(); note != "" {
				r.note += "; " + note
			}
		}
	}
	name := ch.label
	var exitErr error
	processDone := false
	err = chk.wait(ctx, func() error {
		if processDone {
			return fmt.Errorf("%s exited (%v) before the output was complete (%d output records read); output:\n%s", name, exitErr, chk.recs.Load(), tail(ch.out.String()))
		}
		select {
		case exitErr = <-exited:
			processDone = true
			if exitErr != nil || !ch.endsItself {
				return fmt.Errorf("%s exited: %v; output:\n%s", name, exitErr, tail(ch.out.String()))
			}
		default:
		}
		return nil
	})
	stopStarted() // before the process is killed
	if err != nil {
		ch.cmd.Process.Kill()
		rss.finish()
		if !processDone {
			<-exited
			err = fmt.Errorf("%w; output of %s:\n%s", err, name, tail(ch.out.String()))
		}
		r.err = err
		return r
	}
	r.elapsed = chk.at.Sub(start)
	r.outRecs = chk.recs.Load()
	killed := false
	if !processDone {
		if !ch.endsItself {
			rss.sample()
			ch.cmd.Process.Kill()
			killed = true
			<-exited
			exitErr = nil
		} else {
			select {
			case exitErr = <-exited:
			case <-time.After(60 * time.Second):
				ch.cmd.Process.Kill()
				exitErr = fmt.Errorf("still running 60s after its output was complete")
				<-exited
			}
		}
	}
	r.usage = childUsage(ch.cmd, rss.finish())
	if exitErr != nil {
		r.err = fmt.Errorf("%s: %v; output:\n%s", name, exitErr, tail(ch.out.String()))
		return r
	}
	if killed {
		r.note += "; killed once its output was complete"
	} else {
		r.note += fmt.Sprintf("; the process ran %v in all", exitedAt.Sub(start).Round(time.Millisecond))
	}
	return r
}

// tail is the last 40 lines of a process's output.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = append([]string{"..."}, lines[len(lines)-40:]...)
	}
	return strings.Join(lines, "\n")
}
