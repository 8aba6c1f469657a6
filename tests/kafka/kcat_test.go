package kafka

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// kcatTimeout bounds one kcat run.
const kcatTimeout = 2 * time.Minute

// produceFile sends the lines of file to topic with kcat. With keyed, each
// line is "key:value" (kcat -K:); partition >= 0 sends every line to that
// partition, otherwise kcat's partitioner (by key) chooses.
func produceFile(t *testing.T, b *broker, topic, file string, keyed bool, partition int) {
	t.Helper()
	b.ensureTopic(t, topic)
	args := []string{"-P", "-b", b.addr, "-t", topic, "-l", file,
		"-X", "linger.ms=20", "-X", "batch.num.messages=10000", "-X", "queue.buffering.max.messages=1000000"}
	if keyed {
		args = append(args, "-K:")
	}
	if partition >= 0 {
		args = append(args, "-p", strconv.Itoa(partition))
	}
	start := time.Now()
	out, err := runKcat(args...)
	if err != nil || strings.Contains(out, "ERROR") {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kcat produced %s into %s in %v", file, topic, time.Since(start).Round(time.Millisecond))
}

// produceTombstones writes n messages with a key and no value (kcat -Z
// sends an empty value as null) into topic, an independent client's
// tombstones.
func produceTombstones(t *testing.T, b *broker, topic, dir string, n int) {
	t.Helper()
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, fmt.Sprintf("gone-%d:", i))
	}
	file := writeLines(t, dir, "tombstones.txt", lines)
	args := []string{"-P", "-b", b.addr, "-t", topic, "-l", file, "-K:", "-Z"}
	if out, err := runKcat(args...); err != nil || strings.Contains(out, "ERROR") {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// runKcat runs kcat to the end and returns its combined output.
func runKcat(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kcatTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcatPath, args...).CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("kcat still running after %v", kcatTimeout)
	}
	return string(out), err
}

var queryRE = regexp.MustCompile(`(?m)^(\S+) \[(\d+)\] offset (-?\d+)$`)

// endOffsets returns the high watermark of each partition of topic (kcat
// -Q with timestamp -1).
func endOffsets(t *testing.T, b *broker, topic string) []int64 {
	t.Helper()
	args := []string{"-Q", "-b", b.addr}
	for p := 0; p < b.partitions; p++ {
		args = append(args, "-t", fmt.Sprintf("%s:%d:-1", topic, p))
	}
	out, err := runKcat(args...)
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	ends := make([]int64, b.partitions)
	seen := 0
	for _, m := range queryRE.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[2])
		off, _ := strconv.ParseInt(m[3], 10, 64)
		if m[1] == topic && p < len(ends) {
			ends[p] = off
			seen++
		}
	}
	if seen != b.partitions {
		t.Fatalf("kcat %s: want %d partition offsets, got:\n%s", strings.Join(args, " "), b.partitions, out)
	}
	return ends
}

// record is one record read back with kcat.
type record struct {
	partition int32
	offset    int64
	key       []byte // nil: a NULL key
	value     []byte // nil: a NULL value (a tombstone)
}

// consumeCommitted reads every committed record of topic from the
// beginning to the end (read_committed: the last stable offset) with kcat
// and calls fn with each, in the order of each partition. The record's
// slices are only valid during the call.
func consumeCommitted(t *testing.T, b *broker, topic string, fn func(r record) error) int {
	t.Helper()
	b.settle(t, topic)
	// -Z prints NULL keys and values as NULL; -u unbuffered is not needed.
	args := []string{"-C", "-b", b.addr, "-t", topic, "-o", "beginning", "-e", "-q", "-Z",
		"-X", "isolation.level=read_committed", "-f", `%p\t%o\t%k\t%s\n`}
	ctx, cancel := context.WithTimeout(context.Background(), kcatTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcatPath, args...)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("kcat: %v", err)
	}
	r := bufio.NewReaderSize(stdout, 1<<20)
	n := 0
	var fnErr error
	for {
		line, err := r.ReadSlice('\n')
		if len(line) == 0 && err != nil {
			break
		}
		if err == bufio.ErrBufferFull {
			fnErr = fmt.Errorf("a record longer than 1 MiB")
			break
		}
		rec, perr := parseKcatLine(bytes.TrimSuffix(line, []byte("\n")))
		if perr != nil {
			fnErr = fmt.Errorf("kcat output line %d: %v: %q", n+1, perr, line)
			break
		}
		n++
		if err := fn(rec); err != nil {
			fnErr = fmt.Errorf("%s [%d] offset %d: %w (key %s, value %s)", topic, rec.partition, rec.offset, err, rec.key, rec.value)
			break
		}
	}
	if fnErr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(fnErr)
	}
	if err := cmd.Wait(); err != nil || strings.Contains(stderr.String(), "ERROR") {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Logf("kcat read %d committed records of %s in %v", n, topic, time.Since(start).Round(time.Millisecond))
	return n
}

// parseKcatLine splits "partition\toffset\tkey\tvalue".
func parseKcatLine(l []byte) (record, error) {
	var rec record
	f := bytes.SplitN(l, []byte("\t"), 4)
	if len(f) != 4 {
		return rec, fmt.Errorf("want 4 tab-separated fields")
	}
	p, err1 := strconv.ParseInt(string(f[0]), 10, 32)
	o, err2 := strconv.ParseInt(string(f[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return rec, fmt.Errorf("bad partition or offset")
	}
	rec.partition, rec.offset = int32(p), o
	if string(f[2]) != "NULL" {
		rec.key = f[2]
	}
	if string(f[3]) != "NULL" {
		rec.value = f[3]
	}
	return rec, nil
}
