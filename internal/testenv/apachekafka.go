package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KafkaEnv names the environment variable that chooses the brokers of the
// Kafka tests: unset or empty, kafka-dev (kfake) only; "apache", also an
// Apache Kafka broker started with scripts/apache-kafka.sh (Java and
// Maven needed).
const KafkaEnv = "STREAMSQL_TEST_KAFKA"

// ApacheKafkaWanted reports whether the Kafka tests also run against
// Apache Kafka. Another value of KafkaEnv than "" or "apache" is an error.
func ApacheKafkaWanted() (bool, error) {
	switch v := os.Getenv(KafkaEnv); v {
	case "":
		return false, nil
	case "apache":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want \"apache\" (also run against Apache Kafka) or nothing (kafka-dev only)", KafkaEnv, v)
	}
}

// ApacheKafka is a single-node Apache Kafka broker (KRaft) started with
// scripts/apache-kafka.sh on 127.0.0.1:Port (its controller on Port+1),
// its log dir, logs and pid file under Dir. A watchdog process stops it
// when the test binary exits, however it exits.
type ApacheKafka struct {
	Addr       string
	Port       int
	Dir        string
	Partitions int // of auto-created topics
	// ControllerApart: the KRaft controller runs in a process of its own
	// (--separate-controller), which Kill and Signal leave alone.
	// Otherwise one process is broker and controller.
	ControllerApart bool
	script          string
}

// ApacheBrokerSessionTimeout is how long the controller of a broker
// started with StartApacheKafkaApart waits for its heartbeats before it
// fences it (scripts/apache-kafka.sh --separate-controller).
const ApacheBrokerSessionTimeout = 2 * time.Second

// apacheStartTimeout bounds a start of the broker (the JVM on a busy
// machine; the jars are resolved before, without a bound).
const apacheStartTimeout = 300

// StartApacheKafka starts a broker on a free pair of ports with its data
// under dir, auto-creating topics of partitions partitions; one process is
// broker and controller.
func StartApacheKafka(dir string, partitions int) (*ApacheKafka, error) {
	return startApacheKafka(dir, partitions, false)
}

// StartApacheKafkaApart is StartApacheKafka with the controller in a
// process apart from the broker's, as in a cluster with dedicated
// controllers: the broker can be killed and started again while its
// controller stays up.
func StartApacheKafkaApart(dir string, partitions int) (*ApacheKafka, error) {
	return startApacheKafka(dir, partitions, true)
}

func startApacheKafka(dir string, partitions int, apart bool) (*ApacheKafka, error) {
	script, err := apacheScript()
	if err != nil {
		return nil, err
	}
	// Resolving the jars (a minute when the Maven cache is cold) before
	// the start, which is bounded.
	if out, err := exec.Command(script, "resolve").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s resolve: %v\n%s", script, err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken in between
		port, err := freePortPair()
		if err != nil {
			return nil, err
		}
		k := &ApacheKafka{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, Partitions: partitions,
			ControllerApart: apart, script: script}
		if lastErr = k.Start(); lastErr == nil {
			if err := k.watchdog(); err != nil {
				k.Stop()
				return nil, err
			}
			return k, nil
		}
		os.RemoveAll(filepath.Join(dir, "logs")) // formatted for the failed start
	}
	return nil, lastErr
}

// Start starts the broker (again) on its port and log dir: a restart
// keeps every topic, committed offset and transaction.
func (k *ApacheKafka) Start() error {
	args := []string{"start", strconv.Itoa(k.Port), k.Dir,
		"--partitions", strconv.Itoa(k.Partitions), "--timeout", strconv.Itoa(apacheStartTimeout)}
	if k.ControllerApart {
		args = append(args, "--separate-controller")
	}
	cmd := exec.Command(k.script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("apache-kafka.sh start %d %s: %v\n%s", k.Port, k.Dir, err, stderr.String())
	}
	if got := strings.TrimSpace(string(out)); got != k.Addr {
		return fmt.Errorf("apache-kafka.sh start: printed %q, want %q", got, k.Addr)
	}
	return nil
}

// Stop stops the broker (SIGTERM: a clean shutdown), and its controller
// when it runs apart.
func (k *ApacheKafka) Stop() error {
	if out, err := exec.Command(k.script, "stop", k.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("apache-kafka.sh stop %s: %v\n%s", k.Dir, err, out)
	}
	return nil
}

// Pid is the broker's process id (the controller's too unless it runs
// apart).
func (k *ApacheKafka) Pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(k.Dir, "broker.pid"))
	if err != nil {
		return 0, fmt.Errorf("the broker of %s does not run: %w", k.Dir, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Signal sends sig to the broker process.
func (k *ApacheKafka) Signal(sig syscall.Signal) error {
	pid, err := k.Pid()
	if err != nil {
		return err
	}
	return syscall.Kill(pid, sig)
}

// Kill kills the broker with SIGKILL and waits until the process is gone
// (its ports are then free for a Start on the same log dir).
func (k *ApacheKafka) Kill() error {
	pid, err := k.Pid()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the broker (pid %d) is still there a minute after SIGKILL", pid)
		}
	}
	return os.Remove(filepath.Join(k.Dir, "broker.pid"))
}

// watchdog starts a process of its own session that stops the broker when
// this process exits, so that a test binary killed at its timeout leaves
// no broker behind.
func (k *ApacheKafka) watchdog() error {
	cmd := exec.Command("bash", "-c", `tail --pid="$1" -f /dev/null; exec "$2" stop "$3"`, "watchdog",
		strconv.Itoa(os.Getpid()), k.script, k.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the broker's watchdog: %v", err)
	}
	return cmd.Process.Release()
}

// apacheScript finds scripts/apache-kafka.sh of this module.
func apacheScript() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the streamsql module")
	}
	return filepath.Join(filepath.Dir(mod), "scripts", "apache-kafka.sh"), nil
}

// freePortPair finds a free port p on 127.0.0.1 with p+1 free too (the
// broker's controller listener).
func freePortPair() (int, error) {
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p, nil
		}
	}
	return 0, errors.New("no free pair of adjacent ports on 127.0.0.1")
}
