package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker kinds (--broker).
const (
	kindKafkaDev = "kafka-dev"
	kindApache   = "apache"
)

// broker is the Kafka broker of one part of a run: a `streamsql kafka-dev`
// process, or Apache Kafka started with scripts/apache-kafka.sh. stop
// stops it and waits until it has.
type broker struct {
	kind string
	addr string
	// desc names the broker in the results ("kafka-dev (KIP-890
	// transactions)", "Apache Kafka 4.4.0 ...").
	desc string
	stop func()
	// pid is the broker's process (the JVM for Apache Kafka), whose CPU
	// time the table shows next to each contender's.
	pid int
}

// cpu is the broker process's CPU time so far (user+sys, from
// /proc/PID/stat; 0 where that cannot be read).
func (b *broker) cpu() time.Duration {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(b.pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th, in clock ticks
	// (USER_HZ, 100 on Linux).
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	stt, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+stt) * (time.Second / 100)
}

// startBroker starts a broker of the given kind with every topic created
// with the given partition count.
func startBroker(c config, kind, work string, topics ...string) (*broker, error) {
	switch kind {
	case kindKafkaDev:
		return startKafkaDev(c.streamsql, c.partitions, c.classic, topics...)
	case kindApache:
		return startApache(c, work, topics...)
	}
	return nil, fmt.Errorf("unknown broker %q", kind)
}

// kafkaDev is a `streamsql kafka-dev` process.
type kafkaDev struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

// startKafkaDev starts kafka-dev on a free port and waits until it serves.
func startKafkaDev(bin string, partitions int, classic bool, topics ...string) (*broker, error) {
	port, err := freePort(false)
	if err != nil {
		return nil, err
	}
	args := []string{"kafka-dev", "--port", strconv.Itoa(port), "--partitions", strconv.Itoa(partitions)}
	mode := "KIP-890 transactions"
	if classic {
		args = append(args, "--classic-txn")
		mode = "classic transactions"
	}
	for _, t := range topics {
		args = append(args, "--topic", t)
	}
	k := &kafkaDev{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stdout, err := k.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	k.cmd.Stderr = k.cmd.Stdout
	if err := k.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			k.mu.Lock()
			k.out.WriteString(sc.Text() + "\n")
			k.mu.Unlock()
			if !seen && strings.HasPrefix(sc.Text(), "kafka-dev: serving Kafka on") {
				seen = true
				ready <- true
			}
		}
		if !seen {
			ready <- false
		}
		k.cmd.Wait()
		close(k.done)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-k.done
			return nil, fmt.Errorf("%s %s exited: %s", bin, strings.Join(args, " "), k.output())
		}
	case <-time.After(30 * time.Second):
		k.cmd.Process.Kill()
		return nil, fmt.Errorf("kafka-dev not ready after 30s: %s", k.output())
	}
	return &broker{
		kind: kindKafkaDev,
		addr: "127.0.0.1:" + strconv.Itoa(port),
		desc: fmt.Sprintf("kafka-dev (%s)", mode),
		stop: k.stop,
		pid:  k.cmd.Process.Pid,
	}, nil
}

func (k *kafkaDev) output() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.out.String()
}

func (k *kafkaDev) stop() {
	k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		k.cmd.Process.Kill()
		<-k.done
	}
}

// startApache starts a single-node Apache Kafka broker with
// scripts/apache-kafka.sh (its controller on the next port) in a directory
// under work and creates the topics.
func startApache(c config, work string, topics ...string) (*broker, error) {
	if c.classic {
		return nil, fmt.Errorf("--classic-txn is a kafka-dev option; Apache Kafka 4.4 picks its transaction protocol itself")
	}
	script := filepath.Join(c.repo, "scripts", "apache-kafka.sh")
	port, err := freePort(true)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(work, "apache-kafka")
	var stderr bytes.Buffer
	cmd := exec.Command(script, "start", strconv.Itoa(port), dir, "--partitions", strconv.Itoa(c.partitions))
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	stop := func() {
		if err := exec.Command(script, "stop", dir).Run(); err != nil {
			logf("stopping Apache Kafka: %v", err)
		}
	}
	if err != nil {
		stop()
		return nil, fmt.Errorf("%s start: %v: %s", script, err, stderr.String())
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		stop()
		return nil, fmt.Errorf("%s start printed no address", script)
	}
	b := &broker{
		kind: kindApache,
		addr: lines[len(lines)-1],
		desc: fmt.Sprintf("Apache Kafka %s (single node, KRaft, scripts/apache-kafka.sh)", apacheVersion(c.repo)),
		stop: stop,
	}
	if pid, err := os.ReadFile(filepath.Join(dir, "broker.pid")); err == nil {
		b.pid, _ = strconv.Atoi(strings.TrimSpace(string(pid)))
	}
	logf("Apache Kafka started in %v", time.Since(start).Round(time.Millisecond))
	if err := createTopics(b.addr, c.partitions, topics); err != nil {
		stop()
		return nil, err
	}
	return b, nil
}

// apacheVersion is the broker version scripts/apache-kafka/pom.xml names.
func apacheVersion(repo string) string {
	pom, err := os.ReadFile(filepath.Join(repo, "scripts", "apache-kafka", "pom.xml"))
	if err != nil {
		return "(version unknown)"
	}
	m := regexp.MustCompile(`<kafka.version>([^<]+)</kafka.version>`).FindSubmatch(pom)
	if m == nil {
		return "(version unknown)"
	}
	return string(m[1])
}

// createTopics creates the topics with one replica each.
func createTopics(addr string, partitions int, topics []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopics(ctx, int32(partitions), 1, nil, topics...)
	if err != nil {
		return fmt.Errorf("creating the topics: %w", err)
	}
	return res.Error()
}

// freePort is a TCP port free on 127.0.0.1 (and the next one too when
// withNext: Apache Kafka's controller listens there).
func freePort(withNext bool) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !withNext {
			l.Close()
			return port, nil
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
		l.Close()
		if err == nil {
			l2.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no two free consecutive ports found")
}
