package kafka

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// binary is the streamsql binary TestMain builds; kcatPath is kcat's.
var binary, kcatPath string

// seedEnv names the environment variable that fixes the seed of the
// random kill moments.
const seedEnv = "STREAMSQL_KAFKA_SEED"

// buildTime is how long TestMain took to build the binary.
var buildTime time.Duration

// seed is the seed of this test binary's random kill moments.
var seed uint64

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	if kcatPath, err = exec.LookPath("kcat"); err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests: kcat is not installed (Debian: apt-get install kcat; test.sh installs it)")
		return 1
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "streamsql-kafka-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "streamsql")
	start := time.Now()
	build := exec.Command("go", "build", "-o", binary, "./cmd/streamsql")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "kafka tests: building streamsql: %v\n%s", err, out)
		return 1
	}
	buildTime = time.Since(start).Round(time.Millisecond)
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv(seedEnv); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "kafka tests: %s=%q is not a number\n", seedEnv, s)
			return 1
		}
	}
	return m.Run()
}

// repoRoot is the directory of the module's go.mod.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the streamsql module")
	}
	return filepath.Dir(mod), nil
}

// newRand returns the random source of one test: the package seed mixed
// with the test's name, so each test replays alone with the same seed.
func newRand(t *testing.T) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	t.Logf("seed %d (%s=%d replays these kill moments)", seed, seedEnv, seed)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// protocols are the two transaction protocols kafka-dev serves; every test
// runs against both.
var protocols = []struct {
	name    string
	classic bool
}{
	{"kip890", false},
	{"classic", true},
}

// forEachProtocol runs fn as a subtest per transaction protocol, each with
// its own broker.
func forEachProtocol(t *testing.T, partitions int, topics []string, fn func(t *testing.T, b *broker)) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			if buildTime > 0 {
				t.Logf("(the streamsql binary was built in %v)", buildTime)
				buildTime = 0
			}
			start := time.Now()
			b := startBroker(t, partitions, p.classic, topics...)
			fn(t, b)
			t.Logf("%s took %v", t.Name(), time.Since(start).Round(time.Millisecond))
		})
	}
}
