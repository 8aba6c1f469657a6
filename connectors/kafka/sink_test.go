package kafka

import (
	"context"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
)

func TestSinkAtLeastOnceJSONWithKey(t *testing.T) {
	kafkatest.EachBroker(t, func(t *testing.T) {
		addr := startCluster(t, 1, []string{"out"})
		sch := mustSchema(t, "id BIGINT, name STRING")
		sp := spec(sch, map[string]string{"properties.bootstrap.servers": addr, "topic": "out", "format": "json",
			"key.format": "json", "key.fields": "id"})
		snk, err := NewSink(sp)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := snk.Open(ctx); err != nil {
			t.Fatal(err)
		}
		b := batch(t, sch, "1, a", "2, NULL")
		if err := snk.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		b.Rec.Release()
		// The handle of at-least-once names the topic's id only.
		h, err := snk.PreCommit(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		hd, err := decodeHandle("t", h)
		if err != nil || hd.TopicID == "" || len(hd.Txns) != 0 {
			t.Fatalf("handle %s: %v", h, err)
		}
		// Flushed at the pre-commit: visible before any commit.
		got := values(readTopic(t, addr, "out", true))
		want := []string{`{"id":1}|{"id":1,"name":"a"}`, `{"id":2}|{"id":2,"name":null}`}
		if !slices.Equal(got, want) {
			t.Fatalf("got %q want %q", got, want)
		}
		if err := snk.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		if err := snk.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
