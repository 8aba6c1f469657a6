package kafka

import (
	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"

	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Every Arrow buffer a source allocates is released: by the consumer for
// the batches, by Close for the builders, also on the path that drops a
// half-decoded message.
func TestSourceReleasesArrowMemory(t *testing.T) {
	kafkatest.EachBroker(t, func(t *testing.T) {
		addr := startCluster(t, 1, []string{"in", "up"})
		produce(t, addr, "in", 0, `{"id":1}|{"v":"a"}`, `bad key|{"v":"b"}`, `{"id":3}|{"v":"c"}`, `{"id":4}|bad value`)
		produce(t, addr, "up", 0, `{"id":1}|{"id":1,"v":"a"}`, `{"id":1}|{"id":1,"v":"b"}`, `{"id":1}|bad`, `{"id":1}|<nil>`)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		sch := mustSchema(t, "id BIGINT, v STRING")
		for _, tc := range []struct {
			upsert bool
			opts   map[string]string
		}{
			{false, map[string]string{"topic": "in", "key.format": "json", "key.fields": "id", "value.format": "json",
				"value.fields-include": "EXCEPT_KEY", "key.json.ignore-parse-errors": "true", "value.json.ignore-parse-errors": "true"}},
			{true, map[string]string{"topic": "up", "key.format": "json", "key.fields": "id", "value.format": "json",
				"value.json.ignore-parse-errors": "true"}},
		} {
			tc.opts["properties.bootstrap.servers"] = addr
			tc.opts["scan.bounded.mode"] = "latest-offset"
			sp := spec(sch, tc.opts)
			sp.Mem = mem
			src, err := newSource(sp, tc.upsert)
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := drain(t, src, sp)
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			t.Log(got, src.SkippedRecords())
			if src.SkippedRecords() != 2 && !tc.upsert || tc.upsert && src.SkippedRecords() != 1 {
				t.Fatalf("skipped %d", src.SkippedRecords())
			}
		}
	})
}
