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

// javaPeer is a contender written in Java under bench/peers/<dir>, built
// with Maven and run with `java -cp`.
type javaPeer struct {
	dir       string // under bench/peers
	mainClass string
	classpath string // target/classes and the resolved jars in ~/.m2
	built     time.Duration
	offline   bool // built with `mvn -o` (everything was in ~/.m2)
}

// buildPeer compiles a peer and writes its class path (`mvn compile
// dependency:build-classpath`): offline first, and with Maven Central when
// something is missing from the local repository (the first run).
func buildPeer(repo, dir, mainClass string) (*javaPeer, error) {
	p := &javaPeer{dir: dir, mainClass: mainClass}
	root := filepath.Join(repo, "bench", "peers", dir)
	cpFile := filepath.Join(root, "target", "classpath.txt")
	args := []string{"-B", "-q", "compile", "dependency:build-classpath",
		"-Dmdep.outputFile=" + cpFile, "-Dmdep.includeScope=runtime"}
	start := time.Now()
	mvn := func(extra ...string) ([]byte, error) {
		cmd := exec.Command("mvn", append(extra, args...)...)
		cmd.Dir = root
		return cmd.CombinedOutput()
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return nil, fmt.Errorf("Maven (mvn) is needed to build bench/peers/%s", dir)
	}
	if _, err := mvn("-o"); err == nil {
		p.offline = true
	} else {
		logf("bench/peers/%s: resolving with Maven from Maven Central", dir)
		if out, err := mvn(); err != nil {
			return nil, fmt.Errorf("building bench/peers/%s with Maven: %v\n%s", dir, err, out)
		}
	}
	p.built = time.Since(start)
	jars, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	p.classpath = filepath.Join(root, "target", "classes") + string(os.PathListSeparator) + string(bytes.TrimSpace(jars))
	return p, nil
}

func (p *javaPeer) String() string {
	how := "offline"
	if !p.offline {
		how = "resolving from Maven Central"
	}
	return fmt.Sprintf("bench/peers/%s built in %.1f s (%s)", p.dir, p.built.Seconds(), how)
}

// java is the command running the peer's main with args: a heap of
// c.javaHeap, the JVM's temporary files (RocksDB's and Flink's local
// directories among them) under tmp, slf4j-simple logging warnings.
func (p *javaPeer) java(c config, tmp string, args ...string) *exec.Cmd {
	jargs := []string{"-Xmx" + c.javaHeap, "-Djava.io.tmpdir=" + tmp,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", p.classpath, p.mainClass}
	return exec.Command("java", append(jargs, args...)...)
}

// runKStreams runs the Kafka Streams program (bench/peers/kstreams) on its
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

// runFlink runs the Flink SQL program (bench/peers/flink): a MiniCluster
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
