package kafka

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// protocols are the transaction protocols the transactional tests run
// under: KIP-890 (kfake's default) and the classic one.
var protocols = []struct {
	name string
	opts []kfake.Opt
}{
	{"kip890", nil},
	{"classic", []kfake.Opt{kfake.MaxVersions(kversion.V3_9_0())}},
}

// startCluster starts an in-process broker on a loopback port with topics
// of partitions partitions each, and returns its address.
func startCluster(t testing.TB, partitions int32, topics []string, opts ...kfake.Opt) string {
	t.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(int(partitions))}, opts...)
	if len(topics) > 0 {
		all = append(all, kfake.SeedTopics(partitions, topics...))
	}
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes messages to topic: "value", "key|value", with '<nil>' for
// a missing key or value; partition -1 lets the client choose.
func produce(t testing.TB, addr, topic string, partition int32, msgs ...string) {
	t.Helper()
	cl := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if partition < 0 {
		cl = client(t, addr)
	}
	var recs []*kgo.Record
	for _, m := range msgs {
		r := &kgo.Record{Topic: topic, Partition: partition}
		k, v, ok := strings.Cut(m, "|")
		if !ok {
			k, v = "<nil>", m
		}
		if k != "<nil>" {
			r.Key = []byte(k)
		}
		if v != "<nil>" {
			r.Value = []byte(v)
		}
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readTopic returns the messages of topic a reader with the isolation
// level sees, "p/offset key|value" per message, in partition and offset
// order, reading up to the end offsets (the last stable offsets for
// read_committed) listed when it starts.
func readTopic(t testing.TB, addr, topic string, committed bool) []string {
	t.Helper()
	ctx := context.Background()
	adm := kadm.NewClient(client(t, addr))
	list := adm.ListEndOffsets
	iso := kgo.ReadUncommitted()
	if committed {
		list, iso = adm.ListCommittedOffsets, kgo.ReadCommitted()
	}
	ends, err := list(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			remaining[o.Partition] = o.Offset
		}
	})
	cl := client(t, addr, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	var out []string
	deadline := time.Now().Add(5 * time.Second)
	for len(remaining) > 0 && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		f := cl.PollFetches(pctx)
		cancel()
		f.EachRecord(func(r *kgo.Record) {
			if end, ok := remaining[r.Partition]; ok && r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			k, v := "<nil>", "<nil>"
			if r.Key != nil {
				k = string(r.Key)
			}
			if r.Value != nil {
				v = string(r.Value)
			}
			out = append(out, fmt.Sprintf("%d/%d %s|%s", r.Partition, r.Offset, k, v))
		})
	}
	if len(remaining) > 0 {
		t.Fatalf("reading topic %s: partitions %v did not reach their end", topic, remaining)
	}
	sort.SliceStable(out, func(i, j int) bool {
		var pi, oi, pj, oj int
		fmt.Sscanf(out[i], "%d/%d", &pi, &oi)
		fmt.Sscanf(out[j], "%d/%d", &pj, &oj)
		if pi != pj {
			return pi < pj
		}
		return oi < oj
	})
	return out
}

// values drops the "p/offset " prefix of readTopic's lines.
func values(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		_, out[i], _ = strings.Cut(l, " ")
	}
	return out
}

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
