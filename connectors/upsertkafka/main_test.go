package upsertkafka

import (
	"os"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
)

// TestMain stops the Apache Kafka broker the tests shared, if they
// started one (STREAMSQL_TEST_KAFKA=apache).
func TestMain(m *testing.M) { os.Exit(kafkatest.Main(m)) }
