package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// javaPeer is a contender written in Java: a main class of bench/peers,
// the Maven module of every Java peer, built by bench/peers/build.sh and
// run with `java -cp`.
type javaPeer struct {
	name      string // build.sh's name of the peer
	mainClass string
	classpath string // target/classes and the resolved jars in ~/.m2
	built     time.Duration
	offline   bool // built with `mvn -o` (everything was in ~/.m2)
}

// buildPeer builds bench/peers (`bench/peers/build.sh NAME`: offline first, and
// with Maven Central when something is missing from the local repository,
// the first run) and takes the class path it prints.
func buildPeer(repo, name, mainClass string) (*javaPeer, error) {
	root := filepath.Join(repo, "bench", "peers")
	start := time.Now()
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "build.sh"), name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("building bench/peers: %v\n%s", err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		logf("%s", bytes.TrimSpace(stderr.Bytes()))
	}
	resolved, _ := os.ReadFile(filepath.Join(root, "target", "resolved-"+name))
	return &javaPeer{
		name:      name,
		mainClass: mainClass,
		classpath: string(bytes.TrimSpace(out)),
		built:     time.Since(start),
		offline:   string(bytes.TrimSpace(resolved)) == "offline",
	}, nil
}

func (p *javaPeer) String() string {
	how := "offline"
	if !p.offline {
		how = "resolving from Maven Central"
	}
	return fmt.Sprintf("bench/peers (%s) built in %.1f s (%s)", p.mainClass, p.built.Seconds(), how)
}

// java is the command running the peer's main with args: a heap of
// c.javaHeap, the JVM's temporary files (RocksDB's and Flink's local
// directories among them) under tmp, slf4j-simple logging warnings.
func (p *javaPeer) java(c config, tmp string, args ...string) *exec.Cmd {
	jargs := []string{"-Xmx" + c.javaHeap, "-Djava.io.tmpdir=" + tmp,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", p.classpath, p.mainClass}
	return exec.Command("java", append(jargs, args...)...)
}

// runKStreams runs the Kafka Streams program (KStreamsCount of bench/peers) on its
// own application id and output topic, killed once its output is complete.
func runKStreams(ctx context.Context, c config, b *broker, in *input, work string, p *javaPeer, round int) result {
	label := nameKStreams
	app, topic := fmt.Sprintf("bench-kstreams-%d", round), fmt.Sprintf("pv_kstreams_%d", round)
	dir := filepath.Join(work, app)
	tmp, state := filepath.Join(dir, "tmp"), filepath.Join(dir, "state")
	for _, d := range []string{tmp, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return result{name: label, err: err}
		}
	}
	out := &lockedBuffer{}
	cmd := p.java(c, tmp, b.addr, app, "clicks", topic, state)
	cmd.Stdout, cmd.Stderr = out, out
	note := fmt.Sprintf("exactly_once_v2, 1s commits, RocksDB store, 1 stream thread and 10 MiB cache (defaults), counts by record key; JVM -Xmx%s", c.javaHeap)
	return runChild(ctx, b, in, child{label: label, note: note, cmd: cmd, out: out, topic: topic})
}

// runFlink runs the Flink SQL program (FlinkSqlCount of bench/peers): a MiniCluster
// in one JVM, ending when its bounded source is read.
func runFlink(ctx context.Context, c config, b *broker, in *input, work string, p *javaPeer, round int) result {
	label := nameFlink
	name, topic := fmt.Sprintf("bench-flink-%d", round), fmt.Sprintf("pv_flink_%d", round)
	dir := filepath.Join(work, name)
	tmp, chk := filepath.Join(dir, "tmp"), filepath.Join(dir, "checkpoints")
	for _, d := range []string{tmp, chk} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return result{name: label, err: err}
		}
	}
	out := &lockedBuffer{}
	cmd := p.java(c, tmp, b.addr, name, "clicks", topic, chk)
	cmd.Stdout, cmd.Stderr = out, out
	note := fmt.Sprintf("parallelism 2, 1s exactly-once checkpoints, RocksDB, local MiniCluster, mini-batches of 1 s / 50,000 rows (as streamsql); JVM -Xmx%s", c.javaHeap)
	r := runChild(ctx, b, in, child{label: label, note: note, cmd: cmd, out: out, topic: topic, endsItself: true})
	if r.err == nil && !strings.Contains(out.String(), "flink: job finished") {
		r.err = fmt.Errorf("flink exited without finishing its job:\n%s", tail(out.String()))
	}
	return r
}
