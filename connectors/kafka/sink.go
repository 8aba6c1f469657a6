package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// Sink is one subtask of a kafka or upsert-kafka sink. The package
// documentation describes the delivery guarantees and the transactions.
type Sink struct {
	cfg    *config
	spec   exec.TableSpec
	enc    *rowEncoder
	upsert bool
	topic  string
	popts  []kgo.Opt // options of every producer client

	// cl is the producer of 'none' and 'at-least-once'.
	cl *kgo.Client

	// Exactly-once.
	prefix string
	adm    *kgo.Client // plain client: commits of restored transactions, aborts
	// seq numbers the next transaction of this subtask (its transactional id
	// is prefix-subtask-seq); set when the sink recovers.
	seq     int64
	cur     *txn   // open: the rows since the last barrier
	pending []*txn // pre-committed, not yet committed, oldest first
	// committed are the transactional ids this instance committed (the
	// cumulative handles name them again).
	committed map[string]bool
	// restored are the handles committed before the first transaction: a
	// restore, which tells where the old instances stood.
	restored  []handle
	recovered bool
	// superseded are the transactional ids recover cleaned, which sweep
	// keeps clean; lastSweep is when it last did.
	superseded map[[2]string]*scope
	lastSweep  time.Time

	// topicID is the id of the sink topic when the sink first saw it
	// (zero: not yet, or a broker without topic ids); started is set by
	// the first Write or PreCommit (a handle Commit gets before is a
	// restored one).
	topicID [16]byte
	started bool
	// restoredTopic is the topic id of the restored handle being committed.
	restoredTopic string

	mu  sync.Mutex
	err error // the first failed produce

	spans   []span
	bufHint int
}

// span locates the key and the value of one message in a batch's buffer.
type span struct {
	ks, ke, vs, ve int
	noKey, noValue bool
}

// txn is one transaction of the exactly-once sink, with the client that
// owns its transactional id.
type txn struct {
	ref
	cl *kgo.Client
}

// ref is what a handle records of a pre-committed transaction.
type ref struct {
	ID         string `json:"id"`
	Seq        int64  `json:"seq"`
	ProducerID int64  `json:"producer_id"`
	Epoch      int16  `json:"epoch"`
}

// handle is what PreCommit returns and Commit takes: every transaction of
// the subtask pre-committed and not yet committed when the barrier came,
// oldest first, and where the subtask's sequence of transactional ids
// stood. It is JSON after the header of handleVersion
// (checkpoint.AppendStateHeader). Versions: 1, the fields below.
type handle struct {
	Prefix      string `json:"prefix,omitempty"`
	Subtask     int    `json:"subtask"`
	Parallelism int    `json:"parallelism,omitempty"`
	// Next is the sequence number of the subtask's next transaction: every
	// transaction begun before the barrier has a smaller one.
	Next int64 `json:"next,omitempty"`
	Txns []ref `json:"txns,omitempty"`
	// TopicID is the id of the sink topic when the barrier came (base64;
	// empty while the topic did not exist): a restore checks that the topic
	// is still that one. Every delivery guarantee records it.
	TopicID string `json:"topic_id,omitempty"`
}

const (
	minHandleVersion = 1
	handleVersion    = 1
)

func encodeHandle(h handle) ([]byte, error) { return statecodec.EncodeJSON(handleVersion, h) }

// decodeHandle reads a commit handle of the sink: an unknown version or a
// layout that does not fit is checkpoint.ErrIncompatibleState naming owner.
func decodeHandle(owner string, b []byte) (handle, error) {
	var h handle
	_, err := statecodec.DecodeJSON(b, owner, minHandleVersion, handleVersion, &h)
	return h, err
}

// owner names the sink's state in errors.
func (s *Sink) owner() string {
	return connectorName(s.upsert) + " table " + s.spec.Table + " (sink)"
}

func txnID(prefix string, subtask int, seq int64) string {
	return fmt.Sprintf("%s-%d-%d", prefix, subtask, seq)
}

func newSink(spec exec.TableSpec, upsert bool) (*Sink, error) {
	opts := spec.Options
	if upsert {
		var err error
		if opts, err = upsertOptions(spec.Schema, opts); err != nil {
			return nil, fmt.Errorf("upsert-kafka table %s: %w", spec.Table, err)
		}
	}
	name := connectorName(upsert)
	c, err := parse(spec.Table, spec.Schema, opts, upsert)
	if err != nil {
		return nil, fmt.Errorf("%s table %s: %w", name, spec.Table, err)
	}
	if err := c.checkSink(spec.CheckpointInterval); err != nil {
		return nil, fmt.Errorf("%s table %s: %w", name, spec.Table, err)
	}
	enc, err := newRowEncoder(c, spec.Subtask)
	if err != nil {
		return nil, fmt.Errorf("%s table %s: %w", name, spec.Table, err)
	}
	s := &Sink{cfg: c, spec: spec, enc: enc, upsert: upsert, topic: c.topics[0], committed: map[string]bool{}}
	if c.guarantee == GuaranteeExactlyOnce {
		s.prefix = c.txnPrefix
		if s.prefix == "" {
			if spec.Job == "" && spec.OperatorID == "" {
				return nil, fmt.Errorf("%s table %s: set '%s': the job has no name to derive transactional ids from", name, spec.Table, OptTransactionalIDPrefix)
			}
			s.prefix = spec.Job + "-" + spec.OperatorID
		}
	}
	s.popts = []kgo.Opt{kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(c.newPartitioner(spec.Subtask))}
	if c.compression != "none" {
		s.popts = append(s.popts, kgo.ProducerBatchCompression(map[string]kgo.CompressionCodec{
			"gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
		}[c.compression]))
	}
	// 'properties.linger.ms' is 0 unless set, as it says: franz-go's own
	// default (10 ms) would hold every record back that long.
	s.popts = append(s.popts, kgo.ProducerLinger(c.linger))
	return s, nil
}

// newPartitioner returns the partitioner 'sink.partitioner' names.
func (c *config) newPartitioner(subtask int) kgo.Partitioner {
	switch c.partitioner {
	case partFixed:
		return fixedPartitioner(subtask)
	case partRoundRobin:
		return kgo.RoundRobinPartitioner()
	}
	// Kafka's default: murmur2 of the key, sticky for messages without one.
	return kgo.StickyKeyPartitioner(nil)
}

// fixedPartitioner writes every message of sink subtask i to partition
// i mod the number of partitions (Flink's FlinkFixedPartitioner).
type fixedPartitioner int

func (f fixedPartitioner) ForTopic(string) kgo.TopicPartitioner { return f }
func (f fixedPartitioner) RequiresConsistency(*kgo.Record) bool { return true }
func (f fixedPartitioner) Partition(_ *kgo.Record, n int) int   { return int(f) % n }

// Open looks up the sink topic's id (see checkTopic), prepares the
// formats (format.Preparer: avro-confluent registers its schema) and starts the
// producer of 'none' and 'at-least-once'; the exactly-once sink makes a
// client per transaction, when it begins one.
func (s *Sink) Open(ctx context.Context) error {
	if err := s.checkTopic(ctx, ""); err != nil {
		return err
	}
	// A format with a schema registry registers its schema now.
	if err := s.enc.ready(ctx); err != nil {
		return s.errorf("%v", err)
	}
	switch s.cfg.guarantee {
	case GuaranteeNone:
		opts := append([]kgo.Opt{kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck())}, s.popts...)
		cl, err := s.cfg.newClient(opts...)
		if err != nil {
			return s.errorf("%v", err)
		}
		s.cl = cl
	case GuaranteeAtLeastOnce:
		cl, err := s.cfg.newClient(s.popts...)
		if err != nil {
			return s.errorf("%v", err)
		}
		s.cl = cl
	}
	return nil
}

func (s *Sink) errorf(format string, args ...any) error {
	return fmt.Errorf("%s table %s: %s", connectorName(s.upsert), s.spec.Table, fmt.Sprintf(format, args...))
}

// wrap names the table in err, which errors.Is and errors.As still see.
func (s *Sink) wrap(err error) error {
	return fmt.Errorf("%s table %s: %w", connectorName(s.upsert), s.spec.Table, err)
}

// promise records the first failed produce; Write, PreCommit and Finish
// return it.
func (s *Sink) promise(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = s.errorf("producing to topic '%s': %v", r.Topic, err)
	}
	s.mu.Unlock()
}

func (s *Sink) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Write encodes the rows of b into messages and produces them (in the
// open transaction of the exactly-once sink).
func (s *Sink) Write(ctx context.Context, b exec.Batch) error {
	if err := s.failed(); err != nil {
		return err
	}
	s.started = true
	n := b.Len()
	if n == 0 {
		return nil
	}
	cl := s.cl
	if s.cfg.guarantee == GuaranteeExactlyOnce {
		if err := s.begin(ctx); err != nil {
			return err
		}
		cl = s.cur.cl
	}
	v, k := s.enc.project(b.Rec)
	defer v.Release()
	if k != nil {
		defer k.Release()
	}
	// Every key and value goes into one buffer per batch, which the
	// messages slice; it is not reused, as the client holds the messages
	// until they are acknowledged.
	buf := make([]byte, 0, s.bufHint)
	s.spans = s.spans[:0]
	for i := range n {
		kind := b.Op(i)
		switch {
		case s.upsert && kind == exec.UpdateBefore:
			continue // an upsert topic keeps the last value of a key
		case !s.upsert && kind != exec.Insert && s.enc.valueLog == nil:
			return s.errorf("the sink is append-only with format '%s' but got a %s row", s.cfg.value.Name, kind)
		}
		var sp span
		if k != nil {
			sp.ks = len(buf)
			buf, sp.noKey = s.enc.appendKey(buf, k, i)
			sp.ke = len(buf)
		} else {
			sp.noKey = true
		}
		if s.upsert && kind == exec.Delete {
			sp.noValue = true // a tombstone
		} else {
			sp.vs = len(buf)
			buf, sp.noValue = s.enc.appendValue(buf, v, i, kind)
			sp.ve = len(buf)
		}
		s.spans = append(s.spans, sp)
	}
	s.bufHint = max(s.bufHint, len(buf))
	recs := make([]kgo.Record, len(s.spans))
	for j, sp := range s.spans {
		r := &recs[j]
		r.Topic = s.topic
		if !sp.noKey {
			r.Key = buf[sp.ks:sp.ke:sp.ke]
		}
		if !sp.noValue {
			r.Value = buf[sp.vs:sp.ve:sp.ve]
		}
		cl.Produce(ctx, r, s.promise)
	}
	return s.failed()
}

// PreCommit flushes: with exactly-once, the open transaction becomes
// pending and the handle lists every pending transaction of the subtask.
func (s *Sink) PreCommit(ctx context.Context, checkpointID int64) ([]byte, error) {
	s.started = true
	switch s.cfg.guarantee {
	case GuaranteeNone, GuaranteeAtLeastOnce:
		if s.cfg.guarantee == GuaranteeAtLeastOnce {
			if err := s.cl.Flush(ctx); err != nil {
				return nil, s.errorf("flushing for checkpoint %d: %v", checkpointID, err)
			}
		}
		if err := s.checkTopic(ctx, ""); err != nil {
			return nil, err
		}
		if err := s.failed(); err != nil {
			return nil, err
		}
		if s.topicID == ([16]byte{}) {
			return nil, nil
		}
		return encodeHandle(handle{Subtask: s.spec.Subtask, TopicID: formatTopicID(s.topicID)})
	}
	if err := s.recover(ctx); err != nil {
		return nil, err
	}
	if err := s.sweep(ctx, false); err != nil {
		return nil, err
	}
	if t := s.cur; t != nil {
		if err := t.cl.Flush(ctx); err != nil {
			return nil, s.errorf("flushing transaction %s for checkpoint %d: %v", t.ID, checkpointID, err)
		}
		if err := s.checkTopic(ctx, ""); err != nil {
			return nil, err
		}
		if err := s.failed(); err != nil {
			if unknownTxn(err) {
				return nil, s.lostError(ctx, -1, t.ref, err)
			}
			return nil, err
		}
		// The epoch is read after the flush: with KIP-890 it changes with
		// every transaction.
		pid, epoch, err := t.cl.ProducerID(ctx)
		if err != nil {
			return nil, s.errorf("transaction %s for checkpoint %d: %v", t.ID, checkpointID, err)
		}
		t.ProducerID, t.Epoch = pid, epoch
		s.pending = append(s.pending, t)
		s.cur = nil
	} else if err := s.checkTopic(ctx, ""); err != nil {
		return nil, err
	}
	h := handle{Prefix: s.prefix, Subtask: s.spec.Subtask, Parallelism: max(s.spec.Parallelism, 1), Next: s.seq}
	if s.topicID != ([16]byte{}) {
		h.TopicID = formatTopicID(s.topicID)
	}
	for _, t := range s.pending {
		h.Txns = append(h.Txns, t.ref)
	}
	return encodeHandle(h)
}

// Commit commits the transactions of a handle: those this instance
// pre-committed through their own clients, those of an earlier instance (a
// restore) through a raw EndTxn with the recorded producer id and epoch.
// A transaction committed before is skipped (or answers NONE); one the
// broker lost (timed out, fenced) is an error: its rows are not in the
// topic.
func (s *Sink) Commit(ctx context.Context, checkpointID int64, hb []byte) error {
	if len(hb) == 0 {
		return nil
	}
	h, err := decodeHandle(s.owner(), hb)
	if err != nil {
		return fmt.Errorf("commit handle of checkpoint %d: %w", checkpointID, err)
	}
	// A handle before the first Write or PreCommit is a restored one: the
	// topic must still be the one it names (checked after its
	// transactions, whose commit says more when the broker lost them).
	restored := !s.started
	if s.cfg.guarantee != GuaranteeExactlyOnce {
		if restored && h.TopicID != "" {
			return s.checkTopic(ctx, h.TopicID)
		}
		return nil
	}
	if !s.recovered {
		s.restored = append(s.restored, h)
	}
	if restored {
		s.restoredTopic = h.TopicID
		defer func() { s.restoredTopic = "" }()
	}
	for _, r := range h.Txns {
		if s.committed[r.ID] {
			continue
		}
		if i := s.pendingIndex(r.ID); i >= 0 {
			t := s.pending[i]
			if err := t.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				if lost(err) {
					return s.lostError(ctx, checkpointID, t.ref, err)
				}
				return s.errorf("the rows of checkpoint %d may be lost: committing transaction %s failed: %v", checkpointID, t.ID, err)
			}
			t.cl.Close()
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
		} else if err := s.commitRecovered(ctx, checkpointID, r); err != nil {
			return err
		}
		s.markCommitted(r.ID)
	}
	if restored && h.TopicID != "" {
		return s.checkTopic(ctx, h.TopicID)
	}
	return nil
}

func (s *Sink) pendingIndex(id string) int {
	for i, t := range s.pending {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// markCommitted remembers a committed transaction; the oldest are
// forgotten (a handle names a transaction only while it is pending).
func (s *Sink) markCommitted(id string) {
	if len(s.committed) >= 4096 {
		clear(s.committed)
	}
	s.committed[id] = true
}

// begin opens a transaction for the rows after the last barrier, on a
// fresh transactional id with its own client.
func (s *Sink) begin(ctx context.Context) error {
	if s.cur != nil {
		return nil
	}
	if err := s.recover(ctx); err != nil {
		return err
	}
	id := txnID(s.prefix, s.spec.Subtask, s.seq)
	opts := append([]kgo.Opt{kgo.TransactionalID(id), kgo.TransactionTimeout(s.cfg.txnTimeout)}, s.popts...)
	cl, err := s.cfg.newClient(opts...)
	if err != nil {
		return s.errorf("%v", err)
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return s.errorf("beginning transaction %s: %v", id, err)
	}
	s.cur = &txn{ref: ref{ID: id, Seq: s.seq}, cl: cl}
	s.seq++
	return nil
}

// Finish commits everything: the open transaction and any pending one.
func (s *Sink) Finish(ctx context.Context) error {
	s.started = true
	if s.cfg.guarantee != GuaranteeExactlyOnce {
		if err := s.cl.Flush(ctx); err != nil {
			return s.errorf("flushing: %v", err)
		}
		if err := s.checkTopic(ctx, ""); err != nil {
			return err
		}
		return s.failed()
	}
	if err := s.recover(ctx); err != nil {
		return err
	}
	if err := s.sweep(ctx, true); err != nil {
		return err
	}
	if t := s.cur; t != nil {
		if err := t.cl.Flush(ctx); err != nil {
			return s.errorf("flushing transaction %s: %v", t.ID, err)
		}
		s.pending = append(s.pending, t)
		s.cur = nil
	}
	if err := s.checkTopic(ctx, ""); err != nil {
		return err
	}
	if err := s.failed(); err != nil {
		return err
	}
	for len(s.pending) > 0 {
		t := s.pending[0]
		if err := t.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			if lost(err) {
				return s.lostError(ctx, -1, t.ref, err)
			}
			return s.errorf("committing transaction %s at the end of the input: %v", t.ID, err)
		}
		t.cl.Close()
		s.markCommitted(t.ID)
		s.pending = s.pending[1:]
	}
	return nil
}

// Close aborts the open transaction (its rows are in no checkpoint) and
// closes every client; pending transactions stay open for a restored job
// to commit, or to abort when no checkpoint recorded them.
func (s *Sink) Close() error {
	if t := s.cur; t != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := t.cl.AbortBufferedRecords(ctx); err == nil {
			_ = t.cl.EndTransaction(ctx, kgo.TryAbort)
		}
		cancel()
		t.cl.Close()
		s.cur = nil
	}
	s.closeClients()
	return nil
}

// Abandon closes every client without ending any transaction, as a killed
// process leaves them: for crash tests.
func (s *Sink) Abandon() { s.closeClients() }

func (s *Sink) closeClients() {
	for _, t := range s.pending {
		t.cl.Close()
	}
	s.pending = nil
	if s.cur != nil {
		s.cur.cl.Close()
		s.cur = nil
	}
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	if s.adm != nil {
		s.adm.Close()
		s.adm = nil
	}
}
