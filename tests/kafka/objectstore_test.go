package kafka

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// objectStoreRows are the clicks of TestUpsertCountsNewMachines.
const objectStoreRows = 2_000_000

// TestUpsertCountsNewMachines is TestUpsertCounts with the job's
// checkpoints in the bucket of a real S3-compatible server
// (scripts/s3-server.sh) and every run on a new, empty data directory, as
// on a new machine: killed at every failpoint of the checkpoint protocol
// and at random moments, each run must restore the newest checkpoint in
// the bucket, and a read_committed reader must see the true count of each
// app as its last value.
func TestUpsertCountsNewMachines(t *testing.T) {
	srv := testenv.S3(t)
	forKafkaDev(t, partitions, []string{"clicks", "pv"}, func(t *testing.T, b *broker) {
		rng := testenv.NewRand(t, seed, seedEnv)
		c := writeClicks(t, t.TempDir(), objectStoreRows, apps)
		produceFile(t, b, "clicks", c.file, true, -1)
		prefix := fmt.Sprintf("kafka-%d", time.Now().UnixNano())
		r := newJobRun(t, b, jobSpec{name: "pv", kind: upsertCounts, guarantee: "exactly-once", out: "pv", sets: []string{parallel2,
			fmt.Sprintf("'execution.checkpointing.dir' = 's3://%s/%s'", testenv.S3Bucket, prefix),
			fmt.Sprintf("'s3.endpoint' = '%s'", srv.Endpoint), "'s3.path.style.access' = 'true'"}})
		r.s3, r.s3Prefix = srv, prefix
		r.killEverywhere(rng)
		checkCounts(t, b, "pv", c)
	})
}

// latestInBucket is the newest checkpoint of job whose _metadata is in the
// bucket of srv under prefix (0: none), read from the server's files (its
// POSIX backend keeps each object as a file).
func latestInBucket(t *testing.T, srv *testenv.S3Server, prefix, job string) int64 {
	t.Helper()
	dir := filepath.Join(srv.Dir, "data", testenv.S3Bucket, prefix, job)
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var newest int64
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), "chk-")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= newest {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata")); err == nil {
			newest = id
		}
	}
	return newest
}
