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

// nexmarkPeer is the Flink side of the benchmark: NexmarkSql of
// bench/peers, the Maven module of every Java peer, built by
// bench/peers/build.sh and run with `java -cp` from target/classes and the
// jars in ~/.m2.
type nexmarkPeer struct {
	classpath string
	built     time.Duration
	offline   bool // built with `mvn -o` (everything was in ~/.m2)
}

const nexmarkPeerMain = "io.streamsql.bench.nexmark.NexmarkSql"

// buildNexmarkPeer builds bench/peers (`bench/peers/build.sh nexmark`: offline first,
// and with Maven Central when something is missing from the local
// repository, the first build) and takes the class path it prints.
func buildNexmarkPeer(repo string) (*nexmarkPeer, error) {
	root := filepath.Join(repo, "bench", "peers")
	start := time.Now()
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "build.sh"), "nexmark")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("building bench/peers: %v\n%s", err, stderr.Bytes())
	}
	resolved, _ := os.ReadFile(filepath.Join(root, "target", "resolved-nexmark"))
	return &nexmarkPeer{
		classpath: string(bytes.TrimSpace(out)),
		built:     time.Since(start),
		offline:   string(bytes.TrimSpace(resolved)) == "offline",
	}, nil
}

func (p *nexmarkPeer) String() string {
	how := "offline"
	if !p.offline {
		how = "resolving from Maven Central"
	}
	return fmt.Sprintf("bench/peers built in %.1f s (%s)", p.built.Seconds(), how)
}

// command is `java ... NexmarkSql args...`: a heap of heap, the JVM's
// temporary files (RocksDB's and Flink's local directories) under tmp,
// slf4j-simple logging warnings only.
func (p *nexmarkPeer) command(heap, tmp string, args ...string) *exec.Cmd {
	jargs := []string{"-Xmx" + heap, "-Djava.io.tmpdir=" + tmp,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", p.classpath, nexmarkPeerMain}
	return exec.Command("java", append(jargs, args...)...)
}

// run runs a query on Flink: `NexmarkSql run DDL QUERY P CHECKPOINTS`. The
// state size is that of the checkpoint directory at the end, which holds
// the job's latest checkpoint (retained when the job ends), if it
// completed any (checkpointed).
func (p *nexmarkPeer) run(ctx context.Context, heap string, parallelism int, work, ddl, query string) (cost childCost, state int64, checkpointed bool, err error) {
	tmp, chk := filepath.Join(work, "tmp"), filepath.Join(work, "checkpoints")
	for _, d := range []string{tmp, chk} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return childCost{}, 0, false, err
		}
	}
	ddlFile, queryFile := filepath.Join(work, "ddl.sql"), filepath.Join(work, "query.sql")
	if err := os.WriteFile(ddlFile, []byte(ddl), 0o644); err != nil {
		return childCost{}, 0, false, err
	}
	if err := os.WriteFile(queryFile, []byte(query), 0o644); err != nil {
		return childCost{}, 0, false, err
	}
	cmd := p.command(heap, tmp, "run", ddlFile, queryFile, fmt.Sprint(parallelism), chk)
	cost, out, err := runMeasured(ctx, cmd, "flink: job submitted")
	if err != nil {
		return cost, 0, false, err
	}
	if !strings.Contains(out, "flink: job finished") {
		return cost, 0, false, fmt.Errorf("flink exited without finishing its job:\n%s", lastLines(out, 40))
	}
	// CHECKPOINTS/<job id>/chk-N, shared/, taskowned/; a chk-N without
	// _metadata is one the job's end cut short.
	done, _ := filepath.Glob(filepath.Join(chk, "*", "chk-*", "_metadata"))
	return cost, dirSize(chk), len(done) > 0, nil
}
