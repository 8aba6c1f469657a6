package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BuildStreamsql builds the streamsql binary of this module into dir and
// returns its path; the end-to-end tests run it as a subprocess.
func BuildStreamsql(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the streamsql module")
	}
	bin := filepath.Join(dir, "streamsql")
	build := exec.Command("go", "build", "-o", bin, "./cmd/streamsql")
	build.Dir = filepath.Dir(mod)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building streamsql: %v\n%s", err, out)
	}
	return bin, nil
}

// Seed is the seed of a test binary's random choices: the value of the
// environment variable env when set (to replay a run), else the clock.
func Seed(env string) (uint64, error) {
	s := os.Getenv(env)
	if s == "" {
		return uint64(time.Now().UnixNano()), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a number", env, s)
	}
	return n, nil
}

// NewRand returns the random source of one test: seed mixed with the test's
// name, so each test replays alone with the same seed. It logs how to
// replay it.
func NewRand(t testing.TB, seed uint64, env string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	t.Logf("seed %d (%s=%d replays these kill moments)", seed, env, seed)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// SyncBuffer is a bytes.Buffer safe for a process's writer goroutine and a
// reader.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
