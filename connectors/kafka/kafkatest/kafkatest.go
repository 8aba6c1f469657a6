// Package kafkatest holds what the tests of the kafka and upsert-kafka
// connectors share: an in-process Kafka broker (kfake) on a loopback port,
// producing and reading messages with a plain client, and a datadriven
// harness that drives sources and sinks through their registered
// factories.
package kafkatest

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamsql/streamsql/internal/testenv"
)

// Protocol is a transaction protocol a broker speaks.
type Protocol struct {
	Name string
	Opts []kfake.Opt
}

// Protocols are KIP-890 (kfake's default) and the classic protocol
// (Kafka 3.9 and before); transactional tests run under both.
var Protocols = []Protocol{
	{"kip890", nil},
	{"classic", []kfake.Opt{kfake.MaxVersions(kversion.V3_9_0())}},
}

// EachProtocol runs f as a subtest per protocol and, with
// STREAMSQL_TEST_KAFKA=apache, as subtest "apache" against the shared
// Apache Kafka broker (see RunApache; opts are nil there).
func EachProtocol(t *testing.T, f func(t *testing.T, opts []kfake.Opt)) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) { f(t, p.Opts) })
	}
	if ApacheWanted(t) {
		RunApache(t, func(t *testing.T) { f(t, nil) })
	}
}

// EachBroker runs f on t (kfake, through Start) and, with
// STREAMSQL_TEST_KAFKA=apache, again as subtest "apache" against the
// shared Apache Kafka broker: for tests that do not depend on the
// transaction protocol.
func EachBroker(t *testing.T, f func(t *testing.T)) {
	f(t)
	if ApacheWanted(t) {
		RunApache(t, f)
	}
}

// Start starts a one-broker cluster on a loopback port, with topics of
// partitions partitions each (also the default for auto-created topics),
// closed when the test ends. It returns the broker's address. Inside
// RunApache it empties the shared Apache Kafka broker instead (Reset),
// creates the topics there and ignores opts (kfake's); the broker's
// auto-created topics have 4 partitions, EnsureTopic creates one with
// partitions.
func Start(t testing.TB, partitions int32, topics []string, opts ...kfake.Opt) string {
	return StartBroker(t, partitions, topics, opts...).Addr
}

// Broker is a one-broker kfake cluster on a loopback port.
type Broker struct {
	Addr string
	t    testing.TB
	c    *kfake.Cluster
	opts []kfake.Opt
	// Apache is the Apache Kafka broker (nil: kfake).
	Apache     *testenv.ApacheKafka
	partitions int32
}

// StartBroker is Start, returning the broker, which can be restarted.
func StartBroker(t testing.TB, partitions int32, topics []string, opts ...kfake.Opt) *Broker {
	t.Helper()
	if onApache(t) {
		k := Apache(t)
		if err := Reset(k.Addr); err != nil {
			t.Fatalf("emptying Apache Kafka on %s: %v", k.Addr, err)
		}
		if err := CreateTopics(k.Addr, partitions, topics...); err != nil {
			t.Fatal(err)
		}
		return &Broker{Addr: k.Addr, t: t, Apache: k, partitions: partitions}
	}
	all := append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(int(partitions))}, opts...)
	b := &Broker{t: t, opts: all}
	if len(topics) > 0 {
		all = append(all, kfake.SeedTopics(partitions, topics...))
	}
	b.start(all)
	b.Addr = b.c.ListenAddrs()[0]
	t.Cleanup(func() { b.c.Close() })
	return b
}

func (b *Broker) start(opts []kfake.Opt) {
	b.t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.c = c
}

// EnsureTopic creates the topics of a 'topic' option ("a" or "a;b")
// with the broker's partition count, those that do not exist: kfake
// auto-creates topics with it, Apache Kafka with its own default. A no-op
// on kfake.
func (b *Broker) EnsureTopic(topics string) {
	b.t.Helper()
	if b.Apache == nil || topics == "" {
		return
	}
	var names []string
	for _, n := range strings.Split(topics, ";") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if err := CreateTopics(b.Addr, b.partitions, names...); err != nil {
		b.t.Fatal(err)
	}
}

// Restart stops the broker and starts an empty one on the same port, as
// kafka-dev restarted: every topic, message and transaction is gone. Only
// kfake: Apache Kafka keeps its data across a restart.
func (b *Broker) Restart() {
	b.t.Helper()
	if b.Apache != nil {
		b.t.Fatalf("restart-cluster empties kafka-dev, which keeps its data in memory; Apache Kafka keeps its log dir across a restart: a kafka-dev only test")
	}
	b.c.Close()
	_, port, err := net.SplitHostPort(b.Addr)
	if err != nil {
		b.t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		b.t.Fatal(err)
	}
	// The port is free again once the old listener is closed; a client's
	// connection still open to it may hold it briefly.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := kfake.NewCluster(append(b.opts, kfake.Ports(p))...)
		if err == nil {
			b.c = c
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("restarting the broker on port %d: %v", p, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client returns a client of the broker at addr, closed when the test ends.
func Client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Record parses a message: "value", or "key|value"; '<nil>' stands for a
// missing key or value.
func Record(topic string, partition int32, m string) *kgo.Record {
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
	return r
}

// Produce writes messages (see Record) to a partition of topic (-1: the
// client's default partitioner chooses).
func Produce(t testing.TB, addr, topic string, partition int32, msgs ...string) {
	t.Helper()
	if err := ProduceTxn(addr, topic, partition, "", msgs...); err != nil {
		t.Fatal(err)
	}
}

// ProduceTxn writes messages in a transaction that ends as end says:
// "commit", "abort" or "open" (left open: the client is closed without
// ending it); "" writes without a transaction.
func ProduceTxn(addr, topic string, partition int32, end string, msgs ...string) error {
	return produceAt(addr, topic, partition, end, 0, msgs...)
}

// produceAt is ProduceTxn, with message i stamped ts+i (milliseconds; 0:
// now).
func produceAt(addr, topic string, partition int32, end string, ts int64, msgs ...string) error {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DisableClientMetrics()}
	if partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	if end != "" {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("test-%s-%d", end, time.Now().UnixNano())))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	if end != "" {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
	}
	var recs []*kgo.Record
	for i, m := range msgs {
		r := Record(topic, partition, m)
		if ts > 0 {
			r.Timestamp = time.UnixMilli(ts + int64(i))
		}
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return err
	}
	switch end {
	case "commit":
		return cl.EndTransaction(ctx, kgo.TryCommit)
	case "abort":
		return cl.EndTransaction(ctx, kgo.TryAbort)
	}
	return nil
}

// Read returns the messages of topic a reader with the isolation level
// sees, "partition/offset key|value" per message, in partition and offset
// order, reading up to the end offsets (the last stable offsets with
// committed) listed when it starts.
func Read(t testing.TB, addr, topic string, committed bool) []string {
	t.Helper()
	out, err := read(addr, topic, committed)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadRecords is Read's records themselves, in the order of each
// partition (partition 0 first), for messages that are not text.
func ReadRecords(t testing.TB, addr, topic string, committed bool) []*kgo.Record {
	t.Helper()
	out, err := readRecords(addr, topic, committed)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func read(addr, topic string, committed bool) ([]string, error) {
	recs, err := readRecords(addr, topic, committed)
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%d/%d %s|%s", r.Partition, r.Offset, show(r.Key), show(r.Value))
	}
	return out, err
}

func readRecords(addr, topic string, committed bool) ([]*kgo.Record, error) {
	ctx := context.Background()
	if committed && isApache(addr) {
		if err := WaitTxnsSettled(addr); err != nil {
			return nil, err
		}
	}
	acl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
	if err != nil {
		return nil, err
	}
	defer acl.Close()
	adm := kadm.NewClient(acl)
	list := adm.ListEndOffsets
	iso := kgo.ReadUncommitted()
	if committed {
		list, iso = adm.ListCommittedOffsets, kgo.ReadCommitted()
	}
	ends, err := list(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, err
	}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			remaining[o.Partition] = o.Offset
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics(), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var msgs []*kgo.Record
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
			msgs = append(msgs, r)
		})
	}
	if len(remaining) > 0 {
		return nil, fmt.Errorf("reading topic %s: partitions %v did not reach their end", topic, remaining)
	}
	sort.Slice(msgs, func(i, j int) bool {
		if msgs[i].Partition != msgs[j].Partition {
			return msgs[i].Partition < msgs[j].Partition
		}
		return msgs[i].Offset < msgs[j].Offset
	})
	return msgs, nil
}

func show(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

// Values drops the "partition/offset " prefix of Read's lines.
func Values(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		_, out[i], _ = strings.Cut(l, " ")
	}
	return out
}

// Ongoing lists the transactional ids with an open transaction.
func Ongoing(t testing.TB, addr string) []string {
	t.Helper()
	l, err := kadm.NewClient(Client(t, addr)).ListTransactions(context.Background(), nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range l.Sorted() {
		if x.State == "Ongoing" {
			out = append(out, x.TxnID)
		}
	}
	return out
}
