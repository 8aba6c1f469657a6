package upsertkafka

import (
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
)

// TestDataDriven runs testdata/; kafkatest.RunDataDriven lists the commands.
func TestDataDriven(t *testing.T) { kafkatest.RunDataDriven(t, "testdata") }
