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

// nexmarkPeer is the Flink side of the benchmark: bench/peers/nexmark, a
// Maven project built with `mvn compile dependency:build-classpath` and run
// with `java -cp` from target/classes and the jars in ~/.m2.
type nexmarkPeer struct {
	classpath string
	built     time.Duration
	offline   bool // built with `mvn -o` (everything was in ~/.m2)
}

const nexmarkPeerMain = "io.streamsql.bench.nexmark.NexmarkSql"

// buildNexmarkPeer compiles bench/peers/nexmark and writes its class path:
// offline first, and with Maven Central when something is missing from the
// local repository (the first build).
func buildNexmarkPeer(repo string) (*nexmarkPeer, error) {
	if _, err := exec.LookPath("mvn"); err != nil {
		return nil, fmt.Errorf("Maven (mvn) is needed to build bench/peers/nexmark")
	}
	root := filepath.Join(repo, "bench", "peers", "nexmark")
	cpFile := filepath.Join(root, "target", "classpath.txt")
	args := []string{"-B", "-q", "compile", "dependency:build-classpath",
		"-Dmdep.outputFile=" + cpFile, "-Dmdep.includeScope=runtime"}
	mvn := func(extra ...string) ([]byte, error) {
		cmd := exec.Command("mvn", append(extra, args...)...)
		cmd.Dir = root
		return cmd.CombinedOutput()
	}
	p := &nexmarkPeer{}
	start := time.Now()
	if _, err := mvn("-o"); err == nil {
		p.offline = true
	} else if out, err := mvn(); err != nil {
		return nil, fmt.Errorf("building bench/peers/nexmark with Maven: %v\n%s", err, out)
	}
	p.built = time.Since(start)
	jars, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	p.classpath = filepath.Join(root, "target", "classes") + string(os.PathListSeparator) + string(bytes.TrimSpace(jars))
	return p, nil
}

func (p *nexmarkPeer) String() string {
	how := "offline"
	if !p.offline {
		how = "resolving from Maven Central"
	}
	return fmt.Sprintf("bench/peers/nexmark built in %.1f s (%s)", p.built.Seconds(), how)
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
