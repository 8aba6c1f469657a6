package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/exec"
)

// TestWaitsForLeader: a topic created a moment ago, whose partitions have
// no leader yet (Metadata answers LEADER_NOT_AVAILABLE, as Apache Kafka
// does right after CreateTopics), is waited for like a topic not created:
// the source opens, says it waits, and reads the topic once it has a
// leader.
func TestWaitsForLeader(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "later"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	host, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	kafkatest.Produce(t, addr, "later", 0, "a")
	// The next Metadata request that names the topic (the source's) is
	// answered without a leader.
	c.ControlKey(int16(kmsg.Metadata), func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.MetadataRequest)
		named := false
		for _, rt := range req.Topics {
			named = named || rt.Topic != nil && *rt.Topic == "later"
		}
		if !named {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 0, host, int32(port)
		resp.Brokers = append(resp.Brokers, b)
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = kmsg.StringPtr("later")
		rt.ErrorCode = kerr.LeaderNotAvailable.Code
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	sp := spec(mustSchema(t, "s STRING"), map[string]string{"properties.bootstrap.servers": addr, "topic": "later", "format": "raw",
		"scan.topic-partition-discovery.interval": "100ms"})
	src, err := NewSource(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := src.(exec.Waiter).Waiting(); w != "kafka t waits for topic 'later' to be created" {
		t.Fatalf("Waiting() = %q", w)
	}
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, exec.ErrNoData) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := b.Rec.NumRows(); n != 1 {
			t.Fatalf("%d rows, want 1", n)
		}
		b.Rec.Release()
		break
	}
	if w := src.(exec.Waiter).Waiting(); w != "" {
		t.Fatalf("Waiting() = %q after the topic was read", w)
	}
}
