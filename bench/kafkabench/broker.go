package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// broker is a `streamsql kafka-dev` process.
type broker struct {
	addr    string
	classic bool
	cmd     *exec.Cmd
	mu      sync.Mutex
	out     bytes.Buffer
	done    chan struct{}
}

func (b *broker) mode() string {
	if b.classic {
		return "classic transactions"
	}
	return "KIP-890 transactions"
}

// startBroker starts kafka-dev on a free port and waits until it serves.
func startBroker(bin string, partitions int, classic bool, topics ...string) (*broker, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{"kafka-dev", "--port", strconv.Itoa(port), "--partitions", strconv.Itoa(partitions)}
	if classic {
		args = append(args, "--classic-txn")
	}
	for _, t := range topics {
		args = append(args, "--topic", t)
	}
	b := &broker{addr: "127.0.0.1:" + strconv.Itoa(port), classic: classic, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	b.cmd.Stderr = b.cmd.Stdout
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			b.mu.Lock()
			b.out.WriteString(sc.Text() + "\n")
			b.mu.Unlock()
			if !seen && strings.HasPrefix(sc.Text(), "kafka-dev: serving Kafka on") {
				seen = true
				ready <- true
			}
		}
		if !seen {
			ready <- false
		}
		b.cmd.Wait()
		close(b.done)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-b.done
			return nil, fmt.Errorf("%s %s exited: %s", bin, strings.Join(args, " "), b.output())
		}
	case <-time.After(30 * time.Second):
		b.cmd.Process.Kill()
		return nil, fmt.Errorf("kafka-dev not ready after 30s: %s", b.output())
	}
	return b, nil
}

func (b *broker) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

func (b *broker) stop() {
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
	}
}
