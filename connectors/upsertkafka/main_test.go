package upsertkafka

import (
	"os"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
)

// TestMain stops the Apache Kafka broker the tests shared, if they
// started one (STREAMSQL_TEST_KAFKA=apache), and the schema registry.
func TestMain(m *testing.M) {
	code := kafkatest.Main(m)
	testenv.StopRegistry()
	os.Exit(code)
}
