// Package failpoint lets tests crash the process at named places, the way a
// kill -9 would, to prove that recovery loses and duplicates nothing.
//
// The environment variable STREAMSQL_FAILPOINT names the failpoints to arm,
// comma-separated; "name@n" fires on the n-th time the place is reached
// (default the first). A fired failpoint kills the process with SIGKILL: no
// deferred function, no flush, no exit handler runs.
//
// HoldAtEnd is of another kind: armed, it changes what the process does
// (Armed) instead of killing it.
package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// EnvVar is the environment variable that arms failpoints.
const EnvVar = "STREAMSQL_FAILPOINT"

// The failpoints of the checkpoint protocol.
const (
	// AfterPreCommit fires in a sink right after it pre-committed a checkpoint.
	AfterPreCommit = "after-sink-precommit"
	// AfterMetadata fires after _metadata is durable, before any commit.
	AfterMetadata = "after-metadata-before-commit"
	// BetweenCommits fires after the first sink subtask committed and
	// before the others do.
	BetweenCommits = "between-sink-commits"
	// DuringRestore fires while a job restores, after its state is read and
	// before it runs.
	DuringRestore = "during-restore"
	// AfterRestoreCommit fires in a sink subtask of a restored job right
	// after it committed again what the restored checkpoint pre-committed,
	// before it writes anything (a transactional sink cleans up what no
	// checkpoint names when it begins its first transaction).
	AfterRestoreCommit = "after-restore-commit"
	// HoldAtEnd, armed, keeps a checkpointed job whose sources have all
	// reached the end of their bounded input from finishing: it goes on
	// taking checkpoints, idle, until it is killed. A kill test arms it in
	// the runs it kills at random moments, so that each kill lands in a
	// running job however fast the machine works through the input.
	HoldAtEnd = "hold-at-end"
)

var (
	once  sync.Once
	mu    sync.Mutex
	armed map[string]int // name -> hits left before it fires
)

func load() {
	armed = map[string]int{}
	for _, f := range strings.Split(os.Getenv(EnvVar), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, n := f, 1
		if i := strings.IndexByte(f, '@'); i >= 0 {
			name = f[:i]
			if k, err := strconv.Atoi(f[i+1:]); err == nil && k > 0 {
				n = k
			}
		}
		armed[name] = n
	}
}

// Hit marks that the process reached the named place; if that failpoint is
// armed and its count is reached, the process dies on the spot.
func Hit(name string) {
	once.Do(load)
	if len(armed) == 0 {
		return
	}
	mu.Lock()
	n, ok := armed[name]
	if ok {
		n--
		armed[name] = n
	}
	mu.Unlock()
	if ok && n == 0 {
		fmt.Fprintf(os.Stderr, "failpoint %s: killing the process\n", name)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is delivered asynchronously
	}
}

// Armed reports whether the named failpoint is armed (for the failpoints
// that change behaviour, like HoldAtEnd, rather than kill).
func Armed(name string) bool {
	once.Do(load)
	mu.Lock()
	defer mu.Unlock()
	_, ok := armed[name]
	return ok
}
