package kafka

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

var (
	startCluster = kafkatest.Start
	client       = kafkatest.Client
	produce      = kafkatest.Produce
	readTopic    = kafkatest.Read
	values       = kafkatest.Values
	ongoing      = kafkatest.Ongoing
	eachProtocol = kafkatest.EachProtocol
)

func mustSchema(t testing.TB, s string) types.Schema {
	t.Helper()
	sch, err := conntest.ParseSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func spec(schema types.Schema, opts map[string]string) exec.TableSpec {
	return exec.TableSpec{Table: "t", Schema: schema, Options: opts, Parallelism: 1, BatchSize: 4,
		Mem: memory.DefaultAllocator, Job: "job", OperatorID: "op1", CheckpointInterval: time.Second, ExactlyOnce: true}
}

func batch(t testing.TB, schema types.Schema, rows ...string) exec.Batch {
	t.Helper()
	b, err := conntest.ParseBatch(schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
