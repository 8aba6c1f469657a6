package kafka

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
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
	dir, err := os.MkdirTemp("", "streamsql-kafka-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	if binary, err = testenv.BuildStreamsql(dir); err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	buildTime = time.Since(start).Round(time.Millisecond)
	if seed, err = testenv.Seed(seedEnv); err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	if _, err := testenv.ApacheKafkaWanted(); err != nil {
		fmt.Fprintln(os.Stderr, "kafka tests:", err)
		return 1
	}
	code := kafkatest.Main(m) // stops the shared Apache Kafka broker
	testenv.StopS3()          // and the S3 server, if a test started it
	testenv.StopPG()          // and the PostgreSQL server
	testenv.StopRegistry()    // and the schema registry
	return code
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
// its own kafka-dev broker, and, with STREAMSQL_TEST_KAFKA=apache, as
// subtest "apache" on the shared Apache Kafka broker (emptied first).
func forEachProtocol(t *testing.T, partitions int, topics []string, fn func(t *testing.T, b *broker)) {
	forKafkaDev(t, partitions, topics, fn)
	onApache(t, partitions, topics, fn)
}

// onApache runs fn as subtest "apache" on the shared Apache Kafka broker,
// emptied, with topics of partitions partitions, when
// STREAMSQL_TEST_KAFKA=apache.
func onApache(t *testing.T, partitions int, topics []string, fn func(t *testing.T, b *broker)) {
	if !kafkatest.ApacheWanted(t) {
		return
	}
	t.Run(kafkatest.ApacheName, func(t *testing.T) {
		start := time.Now()
		b := startApache(t, partitions, topics...)
		fn(t, b)
		t.Logf("%s took %v", t.Name(), time.Since(start).Round(time.Millisecond))
	})
}

// onApacheApart is onApache on a broker of the test's own whose KRaft
// controller runs in a process apart (kafkatest.ApacheApart), for a test
// that kills the broker and starts it again.
func onApacheApart(t *testing.T, partitions int, topics []string, fn func(t *testing.T, b *broker)) {
	if !kafkatest.ApacheWanted(t) {
		return
	}
	t.Run(kafkatest.ApacheName, func(t *testing.T) {
		start := time.Now()
		k := kafkatest.ApacheApart(t, partitions)
		if err := kafkatest.CreateTopics(k.Addr, int32(partitions), topics...); err != nil {
			t.Fatal(err)
		}
		fn(t, &broker{addr: k.Addr, partitions: partitions, apache: k})
		t.Logf("%s took %v", t.Name(), time.Since(start).Round(time.Millisecond))
	})
}

// forKafkaDev is forEachProtocol on kafka-dev only, for the tests of what
// only kafka-dev does (losing its data when restarted).
func forKafkaDev(t *testing.T, partitions int, topics []string, fn func(t *testing.T, b *broker)) {
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
