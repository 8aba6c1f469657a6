package kafka

import (
	"hash/fnv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// newClient returns a kgo client for the table's brokers with opts added.
func (c *config) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(c.servers...),
		kgo.ClientID(c.clientID),
		kgo.DisableClientMetrics(),
	}
	return kgo.NewClient(append(base, opts...)...)
}

// owner is the source subtask (of parallelism n) that reads a partition:
// the partitions of a topic go round-robin over the subtasks from a start
// that depends on the topic's name, as Flink's KafkaSourceEnumerator
// assigns them. The owner of a partition never changes when partitions or
// topics are added, so discovery does not move partitions.
func owner(topic string, partition int32, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(topic))
	start := int(h.Sum32()&0x7fffffff) % n
	return (start + int(partition)) % n
}
