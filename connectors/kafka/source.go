package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// maxSnaps bounds the positions kept for commits to the consumer group
// while no checkpoint completes.
const maxSnaps = 16

// pollWait bounds how long Next waits for records before it returns
// exec.ErrNoData, so that the runtime can inject barriers.
const pollWait = 100 * time.Millisecond

// tp names a partition.
type tp struct {
	topic     string
	partition int32
}

// partState is where the source stands in one assigned partition.
type partState struct {
	tp
	// next is the offset of the next message to read (every message before
	// it, control records included, has been consumed): the position.
	next int64
	// end is the offset the partition is read up to, exclusive (-1: no end).
	end  int64
	done bool
	// id names the partition as a split of the source ("topic-3").
	id string
	// upsert is the last value of every key of the partition (upsert-kafka).
	upsert map[string][]byte
	// fetchedEnd is the partition's end as of the last fetch of it: the
	// high watermark, or the last stable offset reading committed (-1: no
	// fetch yet); pub is next as of the end of the last batch. Both are
	// for Lag, from any goroutine.
	fetchedEnd, pub atomic.Int64
}

// Source is one subtask of a kafka or upsert-kafka scan. The package
// documentation describes it.
type Source struct {
	cfg   *config
	spec  exec.TableSpec
	batch int
	dec   *rowDecoder

	adm    *kgo.Client // metadata, offsets, group commits
	kadm   *kadm.Client
	cl     *kgo.Client // the consumer; nil until a partition is assigned
	parts  []*partState
	byTP   map[tp]*partState
	last   *partState
	buf    []*kgo.Record
	bufPos int
	// runs says which partition the rows of the batch being built came
	// from; splits lists the partitions not yet read to their end (nil:
	// to be listed again).
	runs   []exec.SplitRun
	splits []string

	restored *snapshot
	skipped  atomic.Int64
	// tombstones counts the messages without a value the plain kafka
	// source skipped (an append-only table has no row for them).
	tombstones atomic.Int64
	// upsert is set for upsert-kafka: each partition keeps the last value
	// of its keys.
	upsert bool

	// topicIDs are the ids of the topics the source reads, as the broker
	// first answered them.
	topicIDs map[string][16]byte

	nextDiscovery time.Time
	// opened is set once Open has assigned the partitions there were:
	// every partition assigned after it (discovered, or of a topic waited
	// for) is read from its earliest offset, whatever the startup mode.
	opened bool
	// waiting says what the source waits for (a topic not created yet),
	// empty when nothing; for Waiting, from any goroutine.
	waiting atomic.Pointer[string]
	// snaps are the positions of the snapshots taken and not yet committed
	// to the consumer group, oldest first.
	snaps []kadm.Offsets
	// The commits to the consumer group run on a goroutine of their own,
	// one at a time, so that the source reads on meanwhile (a commit is a
	// round trip to the broker): under commitMu, commitNext is the newest
	// positions waiting for the running commit to end (committing stands
	// for that goroutine) and groupCommitErr the last commit's outcome.
	// Close waits for it (commits).
	commitMu       sync.Mutex
	committing     bool
	commitNext     *groupCommit
	groupCommitErr error
	commits        sync.WaitGroup

	// lagParts are the assigned partitions, for Lag (appended to under
	// lagMu, never changed otherwise).
	lagMu    sync.Mutex
	lagParts []*partState
}

// snapshot is the state of a source subtask, as JSON after the header of
// snapshotVersion (checkpoint.AppendStateHeader). Versions: 1, the fields
// below.
type snapshot struct {
	Partitions []snapPart `json:"partitions"`
	Skipped    int64      `json:"skipped,omitempty"`
	Tombstones int64      `json:"tombstones,omitempty"`
	// TopicIDs are the ids of the topics read (base64), by name: a topic
	// deleted and created again under the same name has a new id, and the
	// positions do not belong to it.
	TopicIDs map[string]string `json:"topic_ids,omitempty"`
}

type snapPart struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Next      int64  `json:"next"`
	End       *int64 `json:"end,omitempty"`
	// Upsert is the upsert source's last value of each key of the
	// partition: pairs of uvarint-length-prefixed key and value, in key
	// order.
	Upsert []byte `json:"upsert,omitempty"`
}

func newSource(spec exec.TableSpec, upsert bool) (*Source, error) {
	opts := spec.Options
	if upsert {
		var err error
		if opts, err = upsertOptions(spec.Schema, opts); err != nil {
			return nil, fmt.Errorf("upsert-kafka table %s: %w", spec.Table, err)
		}
	}
	c, err := parse(spec.Table, spec.Schema, opts, upsert)
	if err != nil {
		return nil, fmt.Errorf("%s table %s: %w", connectorName(upsert), spec.Table, err)
	}
	s := &Source{cfg: c, spec: spec, batch: spec.BatchSize, byTP: map[tp]*partState{}, upsert: upsert}
	if s.batch <= 0 {
		s.batch = exec.DefaultBatchSize
	}
	return s, nil
}

func connectorName(upsert bool) string {
	if upsert {
		return "upsert-kafka"
	}
	return "kafka"
}

func (s *Source) errorf(format string, args ...any) error {
	return fmt.Errorf("%s table %s: %s", connectorName(s.upsert), s.spec.Table, fmt.Sprintf(format, args...))
}

// wrap names the table in err, which errors.Is and errors.As still see.
func (s *Source) wrap(err error) error {
	return fmt.Errorf("%s table %s: %w", connectorName(s.upsert), s.spec.Table, err)
}

const (
	minSnapshotVersion = 1
	snapshotVersion    = 1
)

// owner names the source's state in errors.
func (s *Source) owner() string {
	return connectorName(s.upsert) + " table " + s.spec.Table + " (source)"
}

// decodeSnapshot reads a snapshot of the source: an unknown version or a
// layout that does not fit is checkpoint.ErrIncompatibleState.
func decodeSnapshot(owner string, state []byte) (snapshot, error) {
	var snap snapshot
	_, err := statecodec.DecodeJSON(state, owner, minSnapshotVersion, snapshotVersion, &snap)
	return snap, err
}

// Restore takes the state Snapshot returned; it is called before Open.
func (s *Source) Restore(state []byte) error {
	snap, err := decodeSnapshot(s.owner(), state)
	if err != nil {
		return err
	}
	s.restored = &snap
	s.skipped.Store(snap.Skipped)
	s.tombstones.Store(snap.Tombstones)
	return nil
}

var (
	_ exec.CheckpointListener = (*Source)(nil)
	_ exec.Rescalable         = (*Source)(nil)
	_ exec.SkipCounter        = (*Source)(nil)
	_ exec.TombstoneCounter   = (*Source)(nil)
	_ exec.Waiter             = (*Source)(nil)
)

// RestoreRescaled restores from the snapshots of every subtask of a
// checkpoint taken at another parallelism (exec.Rescalable): the subtask
// resumes the partitions it owns now, wherever they were read before, with
// their upsert state; partitions no snapshot names start at their earliest
// offset. The skipped counts of old subtask j go to new subtask j mod P.
func (s *Source) RestoreRescaled(states [][]byte) error {
	all := &snapshot{}
	for j, st := range states {
		if len(st) == 0 {
			continue
		}
		snap, err := decodeSnapshot(s.owner(), st)
		if err != nil {
			return fmt.Errorf("old subtask %d: %w", j, err)
		}
		all.Partitions = append(all.Partitions, snap.Partitions...)
		if j%max(s.spec.Parallelism, 1) == s.spec.Subtask {
			all.Skipped += snap.Skipped
			all.Tombstones += snap.Tombstones
		}
		for t, id := range snap.TopicIDs {
			if all.TopicIDs == nil {
				all.TopicIDs = map[string]string{}
			}
			all.TopicIDs[t] = id
		}
	}
	s.restored = all
	s.skipped.Store(all.Skipped)
	s.tombstones.Store(all.Tombstones)
	return nil
}

// decodeUpsert reads the upsert state of a partition's snapshot.
func decodeUpsert(b []byte) (map[string][]byte, bool) {
	m := map[string][]byte{}
	for len(b) > 0 {
		k, rest, ok := readChunk(b)
		if !ok {
			return nil, false
		}
		v, rest, ok := readChunk(rest)
		if !ok {
			return nil, false
		}
		m[string(k)] = bytes.Clone(v)
		b = rest
	}
	return m, true
}

func readChunk(b []byte) ([]byte, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

// Open lists the partitions this subtask reads, finds where each starts
// (and ends, when bounded) and starts consuming.
func (s *Source) Open(ctx context.Context) error {
	var err error
	if s.dec, err = newRowDecoder(s.cfg, s.spec.Fields, s.spec.Mem, s.upsert); err != nil {
		return s.errorf("%v", err)
	}
	if s.adm, err = s.cfg.newClient(); err != nil {
		return s.errorf("%v", err)
	}
	s.kadm = kadm.NewClient(s.adm)
	mine, err := s.listPartitions(ctx)
	if err != nil {
		return err
	}
	if err := s.assign(ctx, mine, s.restored); err != nil {
		return err
	}
	s.opened = true
	s.scheduleDiscovery()
	return nil
}

// waitingPoll is how often a source that waits for a topic looks for it
// (or the discovery interval, if shorter).
const waitingPoll = time.Second

// scheduleDiscovery sets when the source looks for new partitions next:
// after the discovery interval, or sooner while it waits for a topic.
func (s *Source) scheduleDiscovery() {
	if s.cfg.bounded != ModeUnbounded || s.cfg.discovery <= 0 {
		return
	}
	d := s.cfg.discovery
	if s.Waiting() != "" {
		d = min(d, waitingPoll)
	}
	s.nextDiscovery = time.Now().Add(d)
}

// Waiting says what the source waits for: the topics of the table that do
// not exist yet, or a topic matching its 'topic-pattern' when none does;
// empty when it waits for nothing (exec.Waiter). It may be called from any
// goroutine.
func (s *Source) Waiting() string {
	if w := s.waiting.Load(); w != nil {
		return *w
	}
	return ""
}

func (s *Source) setWaiting(w string) {
	if w == s.Waiting() {
		return
	}
	s.waiting.Store(&w)
}

// waits reports whether the source waits for a topic that does not exist
// rather than fail: an unbounded read with partition discovery on, as
// Flink's KafkaSource finds topics created after the job started.
func (s *Source) waits() bool {
	return s.cfg.bounded == ModeUnbounded && s.cfg.discovery > 0
}

// knownTopic reports whether the source has read topic before: since Open,
// or in the checkpoint it restored. Such a topic missing now was deleted.
func (s *Source) knownTopic(topic string) (known, restored bool) {
	if _, ok := s.topicIDs[topic]; ok {
		return true, false
	}
	if s.restored != nil {
		if _, ok := s.restored.TopicIDs[topic]; ok {
			return true, true
		}
		for _, p := range s.restored.Partitions {
			if p.Topic == topic {
				return true, true
			}
		}
	}
	return false, false
}

// listPartitions returns the partitions of the table's topics this subtask
// owns, sorted. It asks the broker (no cached metadata), so that discovery
// sees new partitions at once.
func (s *Source) listPartitions(ctx context.Context) ([]tp, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	if s.cfg.pattern == nil {
		for _, t := range s.cfg.topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, err := req.RequestWith(ctx, s.adm)
	if err != nil {
		return nil, s.errorf("listing topics: %v", err)
	}
	var out []tp
	var missing []string
	matched := false
	for _, rt := range resp.Topics {
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
		}
		if s.cfg.pattern != nil && (rt.IsInternal || !s.cfg.pattern.MatchString(name)) {
			continue
		}
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			if known, _ := s.knownTopic(name); !known && errors.Is(err, kerr.LeaderNotAvailable) && s.waits() {
				// Created a moment ago: its partitions have no leader
				// yet. Looked for again like a topic not created yet.
				missing = append(missing, name)
				continue
			}
			if !errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil, s.errorf("topic '%s': %v", name, err)
			}
			if known, restored := s.knownTopic(name); known {
				old := s.topicIDs[name]
				if restored {
					old, _ = parseTopicID(s.restored.TopicIDs[name])
				}
				return nil, s.wrap(&TopicRecreatedError{Topic: name, Old: old, Source: true, Restored: restored})
			}
			if !s.waits() {
				why := "a bounded read does not wait for it"
				if s.cfg.bounded == ModeUnbounded {
					why = fmt.Sprintf("'%s' turns discovery off, so the source does not wait for it", OptPartitionDiscovery)
				}
				return nil, s.errorf("topic '%s' does not exist (%s)", name, why)
			}
			missing = append(missing, name)
			continue
		}
		matched = true
		if err := s.checkTopicID(name, rt.TopicID); err != nil {
			return nil, err
		}
		for _, p := range rt.Partitions {
			if owner(name, p.Partition, max(s.spec.Parallelism, 1)) == s.spec.Subtask {
				out = append(out, tp{name, p.Partition})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	switch {
	case len(missing) > 0:
		sort.Strings(missing)
		q := make([]string, len(missing))
		for i, m := range missing {
			q[i] = "'" + m + "'"
		}
		word := "topic"
		if len(q) > 1 {
			word = "topics"
		}
		s.setWaiting(fmt.Sprintf("%s %s waits for %s %s to be created", connectorName(s.upsert), s.spec.Table, word, strings.Join(q, ", ")))
	case s.cfg.pattern != nil && !matched && s.waits():
		s.setWaiting(fmt.Sprintf("%s %s waits for a topic matching '%s' to be created", connectorName(s.upsert), s.spec.Table, s.spec.Options[OptTopicPattern]))
	default:
		s.setWaiting("")
	}
	return out, nil
}

// checkTopicID fails when topic name has another id than the one the
// source read before (since Open, or in the restored snapshot): the topic
// was deleted and created again, and the positions of the old one mean
// nothing in it. A broker without topic ids (zero) is not checked.
func (s *Source) checkTopicID(name string, id [16]byte) error {
	if id == ([16]byte{}) {
		return nil
	}
	if s.topicIDs == nil {
		s.topicIDs = map[string][16]byte{}
	}
	if old, ok := s.topicIDs[name]; ok {
		if old != id {
			return s.wrap(&TopicRecreatedError{Topic: name, Old: old, New: id, Source: true})
		}
		return nil
	}
	if s.restored != nil {
		if enc, ok := s.restored.TopicIDs[name]; ok {
			if old, err := parseTopicID(enc); err == nil && old != id {
				return s.wrap(&TopicRecreatedError{Topic: name, Old: old, New: id, Source: true, Restored: true})
			}
		}
	}
	s.topicIDs[name] = id
	return nil
}

// assign starts reading new partitions: at their restored position, or
// where the startup mode says (a partition found by discovery: at its
// earliest offset).
func (s *Source) assign(ctx context.Context, parts []tp, restored *snapshot) error {
	var fresh []tp
	for _, p := range parts {
		if s.byTP[p] != nil {
			continue
		}
		fresh = append(fresh, p)
	}
	if len(fresh) == 0 {
		return nil
	}
	from := map[tp]snapPart{}
	if restored != nil {
		for _, sp := range restored.Partitions {
			from[tp{sp.Topic, sp.Partition}] = sp
		}
	}
	var unknown []tp
	for _, p := range fresh {
		if _, ok := from[p]; !ok {
			unknown = append(unknown, p)
		}
	}
	mode := s.cfg.startup
	if restored != nil || s.opened {
		mode = ModeEarliest // partitions new since the snapshot or since Open
	}
	starts, err := s.startOffsets(ctx, unknown, mode)
	if err != nil {
		return err
	}
	var ends map[tp]int64
	if s.cfg.bounded != ModeUnbounded {
		var need []tp
		for _, p := range fresh {
			if sp, ok := from[p]; !ok || sp.End == nil {
				need = append(need, p)
			}
		}
		if ends, err = s.endOffsets(ctx, need); err != nil {
			return err
		}
	}
	add := map[string]map[int32]kgo.Offset{}
	for _, p := range fresh {
		ps := &partState{tp: p, end: -1, id: fmt.Sprintf("%s-%d", p.topic, p.partition)}
		if s.upsert {
			ps.upsert = map[string][]byte{}
		}
		if sp, ok := from[p]; ok {
			ps.next = sp.Next
			if sp.End != nil {
				ps.end = *sp.End
			}
			if s.upsert && len(sp.Upsert) > 0 {
				var ok bool
				if ps.upsert, ok = decodeUpsert(sp.Upsert); !ok {
					return statecodec.Incompatible(s.owner(), snapshotVersion, "the upsert state of topic '%s' partition %d is not pairs of length-prefixed keys and values", p.topic, p.partition)
				}
			}
		} else {
			ps.next = starts[p]
		}
		if e, ok := ends[p]; ok {
			ps.end = e
		}
		ps.fetchedEnd.Store(-1)
		ps.pub.Store(ps.next)
		s.parts = append(s.parts, ps)
		s.byTP[p] = ps
		s.splits = nil
		s.lagMu.Lock()
		s.lagParts = append(s.lagParts, ps)
		s.lagMu.Unlock()
		if ps.end >= 0 && ps.next >= ps.end {
			ps.done = true
			continue
		}
		if add[p.topic] == nil {
			add[p.topic] = map[int32]kgo.Offset{}
		}
		add[p.topic][p.partition] = kgo.NewOffset().At(ps.next)
	}
	if len(add) == 0 {
		return nil
	}
	if s.cl != nil {
		s.cl.AddConsumePartitions(add)
		return nil
	}
	iso := kgo.ReadUncommitted()
	if s.cfg.readCommitted {
		iso = kgo.ReadCommitted()
	}
	// Control records are kept so that the position moves past the
	// markers of transactions (and past aborted batches, which end with
	// one): the position is then exact also where no data record follows.
	opts := []kgo.Opt{kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.ConsumePartitions(add)}
	if d := s.cfg.discovery; d > 0 && d < 5*time.Second {
		// The client learns of a discovered partition with its next
		// metadata refresh, at most this often (kgo's default: 5s).
		opts = append(opts, kgo.MetadataMinAge(max(d, 100*time.Millisecond)))
	}
	s.cl, err = s.cfg.newClient(opts...)
	if err != nil {
		return s.errorf("%v", err)
	}
	return nil
}

// listed turns a kadm listing into offsets of parts, failing on errors.
func (s *Source) listed(l kadm.ListedOffsets, err error, parts []tp, what string) (map[tp]int64, error) {
	if err != nil {
		return nil, s.errorf("listing %s offsets: %v", what, err)
	}
	out := make(map[tp]int64, len(parts))
	for _, p := range parts {
		o, ok := l.Lookup(p.topic, p.partition)
		switch {
		case !ok:
			return nil, s.errorf("listing %s offsets: no answer for topic '%s' partition %d", what, p.topic, p.partition)
		case o.Err != nil:
			return nil, s.errorf("listing %s offsets of topic '%s' partition %d: %v", what, p.topic, p.partition, o.Err)
		}
		out[p] = o.Offset
	}
	return out, nil
}

func topicsOf(parts []tp) []string {
	var out []string
	for _, p := range parts {
		if !slices.Contains(out, p.topic) {
			out = append(out, p.topic)
		}
	}
	return out
}

// latest lists the offsets a read of parts ends at now: the last stable
// offset when reading committed data, the high watermark otherwise.
func (s *Source) latest(ctx context.Context, parts []tp) (map[tp]int64, error) {
	if s.cfg.readCommitted {
		l, err := s.kadm.ListCommittedOffsets(ctx, topicsOf(parts)...)
		return s.listed(l, err, parts, "latest")
	}
	l, err := s.kadm.ListEndOffsets(ctx, topicsOf(parts)...)
	return s.listed(l, err, parts, "latest")
}

// startOffsets resolves where parts start under mode, as offsets, so that
// a snapshot taken before the first message names a position.
func (s *Source) startOffsets(ctx context.Context, parts []tp, mode string) (map[tp]int64, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	switch mode {
	case ModeLatest:
		return s.latest(ctx, parts)
	case ModeTimestamp:
		l, err := s.kadm.ListOffsetsAfterMilli(ctx, s.cfg.startupMillis, topicsOf(parts)...)
		return s.listed(l, err, parts, "timestamp")
	}
	l, err := s.kadm.ListStartOffsets(ctx, topicsOf(parts)...)
	earliest, err := s.listed(l, err, parts, "earliest")
	if err != nil || mode == ModeEarliest {
		return earliest, err
	}
	// group-offsets, or specific-offsets with the committed offset (else the
	// earliest) for a partition not listed.
	committed := map[tp]int64{}
	if s.cfg.groupID != "" {
		resp, err := s.kadm.FetchOffsets(ctx, s.cfg.groupID)
		if err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			err = nil // no offsets committed yet
		}
		if err != nil {
			return nil, s.errorf("fetching the offsets of consumer group '%s': %v", s.cfg.groupID, err)
		}
		for _, p := range parts {
			if o, ok := resp.Lookup(p.topic, p.partition); ok && o.At >= 0 {
				committed[p] = o.At
			}
		}
	}
	out := map[tp]int64{}
	var needLatest []tp
	for _, p := range parts {
		if o, ok := s.cfg.startupOffs[p.partition]; ok && mode == ModeSpecific {
			out[p] = o
			continue
		}
		if o, ok := committed[p]; ok {
			out[p] = o
			continue
		}
		switch {
		case mode == ModeSpecific || s.cfg.autoReset == "earliest":
			out[p] = earliest[p]
		case s.cfg.autoReset == "latest":
			needLatest = append(needLatest, p)
		default:
			return nil, s.errorf("consumer group '%s' has no committed offset for topic '%s' partition %d (set '%s' to 'earliest' or 'latest' to start there)",
				s.cfg.groupID, p.topic, p.partition, OptAutoOffsetReset)
		}
	}
	if len(needLatest) > 0 {
		l, err := s.latest(ctx, needLatest)
		if err != nil {
			return nil, err
		}
		for p, o := range l {
			out[p] = o
		}
	}
	return out, nil
}

// endOffsets resolves where a bounded read of parts ends.
func (s *Source) endOffsets(ctx context.Context, parts []tp) (map[tp]int64, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	switch s.cfg.bounded {
	case ModeTimestamp:
		l, err := s.kadm.ListOffsetsAfterMilli(ctx, s.cfg.boundedMillis, topicsOf(parts)...)
		return s.listed(l, err, parts, "timestamp")
	case ModeSpecific:
		latest, err := s.latest(ctx, parts)
		if err != nil {
			return nil, err
		}
		for p := range latest {
			if o, ok := s.cfg.boundedOffs[p.partition]; ok {
				latest[p] = o
			}
		}
		return latest, nil
	}
	return s.latest(ctx, parts)
}

// Next returns the next batch, exec.ErrNoData when no message came within
// about 100ms, or io.EOF when a bounded read has reached the end of every
// partition.
func (s *Source) Next(ctx context.Context) (exec.Batch, error) {
	defer s.publishPositions()
	if !s.nextDiscovery.IsZero() && time.Now().After(s.nextDiscovery) {
		if err := s.discover(ctx); err != nil {
			return exec.Batch{}, err
		}
	}
	s.runs = s.runs[:0]
	for s.dec.rows() < s.batch {
		if s.bufPos == len(s.buf) {
			if s.allDone() {
				break
			}
			if err := s.poll(ctx, s.dec.rows() == 0); err != nil {
				return exec.Batch{}, err
			}
			if s.bufPos == len(s.buf) {
				break
			}
		}
		r := s.buf[s.bufPos]
		s.buf[s.bufPos] = nil
		s.bufPos++
		if err := s.consume(r); err != nil {
			return exec.Batch{}, err
		}
	}
	if s.dec.rows() > 0 {
		b, err := s.dec.flush()
		if err != nil {
			return exec.Batch{}, s.errorf("%v", err)
		}
		return b, nil
	}
	if s.allDone() {
		return exec.Batch{}, io.EOF
	}
	return exec.Batch{}, exec.ErrNoData
}

// allDone reports whether a bounded read has read every partition to its end.
func (s *Source) allDone() bool {
	if s.cfg.bounded == ModeUnbounded {
		return false
	}
	for _, p := range s.parts {
		if !p.done {
			return false
		}
	}
	return true
}

// poll refills the buffer: with what the client has fetched already, or,
// when block is set, waiting for at most pollWait.
func (s *Source) poll(ctx context.Context, block bool) error {
	s.buf, s.bufPos = s.buf[:0], 0
	if s.cl == nil {
		if block {
			t := time.NewTimer(pollWait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
		return nil
	}
	var f kgo.Fetches
	if block {
		pctx, cancel := context.WithTimeout(ctx, pollWait)
		f = s.cl.PollRecords(pctx, s.batch)
		cancel()
	} else {
		f = s.cl.PollRecords(nil, s.batch)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var ferr error
	f.EachError(func(topic string, p int32, err error) {
		if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			ferr = s.errorf("fetching topic '%s' partition %d: %v", topic, p, err)
		}
	})
	if ferr != nil {
		return ferr
	}
	f.EachPartition(func(fp kgo.FetchTopicPartition) {
		p := s.byTP[tp{fp.Topic, fp.Partition}]
		if p == nil || fp.Err != nil {
			return
		}
		end := fp.HighWatermark
		if s.cfg.readCommitted {
			end = fp.LastStableOffset
		}
		if end >= 0 {
			p.fetchedEnd.Store(end)
		}
	})
	f.EachRecord(func(r *kgo.Record) { s.buf = append(s.buf, r) })
	return nil
}

// publishPositions makes the positions after a batch what Lag reports.
func (s *Source) publishPositions() {
	for _, p := range s.parts {
		p.pub.Store(p.next)
	}
}

// Lag is, per assigned partition fetched at least once, the records
// between the position after the last batch and the partition's end as of
// its last fetch: its high watermark, or its last stable offset when the
// source reads committed messages only (exec.LagReporter), or the end of a
// bounded read if that comes first.
func (s *Source) Lag() []exec.PartitionLag {
	s.lagMu.Lock()
	parts := s.lagParts
	s.lagMu.Unlock()
	out := make([]exec.PartitionLag, 0, len(parts))
	for _, p := range parts {
		end := p.fetchedEnd.Load()
		if end < 0 {
			continue
		}
		if p.end >= 0 {
			end = min(end, p.end)
		}
		out = append(out, exec.PartitionLag{Topic: p.topic, Partition: p.partition, Records: max(0, end-p.pub.Load())})
	}
	return out
}

// consume reads one message (or control record) into the batch.
func (s *Source) consume(r *kgo.Record) error {
	p := s.last
	if p == nil || p.partition != r.Partition || p.topic != r.Topic {
		if p = s.byTP[tp{r.Topic, r.Partition}]; p == nil {
			return nil
		}
		s.last = p
	}
	if p.done || r.Offset < p.next {
		return nil
	}
	if p.end >= 0 && r.Offset >= p.end {
		s.finish(p)
		return nil
	}
	p.next = r.Offset + 1
	if !r.Attrs.IsControl() {
		before := s.dec.rows()
		var err error
		switch {
		case s.upsert:
			err = s.upsertMessage(p, r)
		case r.Value == nil && !s.dec.nullValue:
			// A tombstone means nothing to an append-only table: it is
			// skipped, and counted.
			s.tombstones.Add(1)
		default:
			_, err = s.dec.appendRow(r.Key, r.Value, exec.Insert)
		}
		if err != nil {
			if errors.Is(err, errNoRow) || s.ignores(err) {
				s.skipped.Add(1)
			} else {
				return s.errorf("topic '%s' partition %d offset %d: %v%s", r.Topic, r.Partition, r.Offset, err, s.skipHint(err))
			}
		}
		s.addRun(p, before)
	}
	if p.end >= 0 && p.next >= p.end {
		s.finish(p)
	}
	return nil
}

// addRun extends the batch's runs with the rows p's message added after
// the first before.
func (s *Source) addRun(p *partState, before int) {
	n := s.dec.rows()
	if n <= before {
		return
	}
	if k := len(s.runs) - 1; k >= 0 && s.runs[k].Split == p.id {
		s.runs[k].End = n
		return
	}
	s.runs = append(s.runs, exec.SplitRun{Split: p.id, End: n})
}

// Splits lists the assigned partitions not yet read to their end
// (exec.SplitSource): each is a split with its own watermark.
func (s *Source) Splits() []string {
	if s.splits == nil {
		s.splits = make([]string, 0, len(s.parts))
		for _, p := range s.parts {
			if !p.done {
				s.splits = append(s.splits, p.id)
			}
		}
	}
	return s.splits
}

// BatchSplits says which partition each row of the last batch came from
// (exec.SplitSource).
func (s *Source) BatchSplits() []exec.SplitRun { return s.runs }

// ignores reports whether a bad message is skipped rather than an error:
// when the format of the part that failed ignores parse errors.
func (s *Source) ignores(err error) bool {
	if errors.Is(err, format.ErrService) {
		return false // not the record's fault
	}
	var pe *partError
	if !errors.As(err, &pe) {
		return false
	}
	if pe.part == errKeyPart {
		return s.dec.key != nil && s.dec.key.dec.IgnoreParseErrors() || s.dec.key == nil && s.dec.value.dec.IgnoreParseErrors()
	}
	return s.dec.value.dec.IgnoreParseErrors()
}

// skipHint says how to skip records like the one err is about, when the
// format of the part that failed can (format.SkipHint).
func (s *Source) skipHint(err error) string {
	if errors.Is(err, format.ErrService) {
		return "" // not skippable
	}
	var pe *partError
	if !errors.As(err, &pe) {
		return ""
	}
	if pe.part == errKeyPart && s.cfg.key != nil {
		return format.SkipHint(s.cfg.key, s.cfg.keyPrefix)
	}
	return format.SkipHint(s.cfg.value, s.cfg.valuePrefix)
}

// finish stops reading a partition that reached its end.
func (s *Source) finish(p *partState) {
	p.done = true
	s.splits = nil
	s.cl.RemoveConsumePartitions(map[string][]int32{p.topic: {p.partition}})
}

// upsertMessage turns one message of an upsert topic into changelog rows
// against the last value of its key: +I for a new key, -U/+U for a changed
// value, -D for a tombstone of a known key; nothing for an unchanged value
// or a tombstone of an unknown key.
func (s *Source) upsertMessage(p *partState, r *kgo.Record) error {
	if r.Key == nil {
		return &partError{errKeyPart, errors.New("an upsert-kafka message needs a key")}
	}
	old, known := p.upsert[string(r.Key)]
	switch {
	case r.Value == nil:
		if !known {
			return s.dec.checkKey(r.Key)
		}
		if _, err := s.dec.appendRow(r.Key, old, exec.Delete); err != nil {
			return err
		}
		delete(p.upsert, string(r.Key))
	case !known:
		if _, err := s.dec.appendRow(r.Key, r.Value, exec.Insert); err != nil {
			return err
		}
		p.upsert[string(r.Key)] = bytes.Clone(r.Value)
	case bytes.Equal(old, r.Value):
	default:
		if _, err := s.dec.appendRow(r.Key, old, exec.UpdateBefore); err != nil {
			return err
		}
		if _, err := s.dec.appendRow(r.Key, r.Value, exec.UpdateAfter); err != nil {
			s.dec.dropLast()
			return err
		}
		p.upsert[string(r.Key)] = bytes.Clone(r.Value)
	}
	return nil
}

// discover assigns the partitions (and, with a pattern, topics) created
// since Open that this subtask owns; they are read from their earliest
// offset.
func (s *Source) discover(ctx context.Context) error {
	mine, err := s.listPartitions(ctx)
	if err != nil {
		return err
	}
	s.scheduleDiscovery()
	return s.assign(ctx, mine, nil)
}

// Snapshot returns the position after the last batch: the next offset of
// every assigned partition (and the upsert state).
func (s *Source) Snapshot() ([]byte, error) {
	snap := snapshot{Skipped: s.skipped.Load(), Tombstones: s.tombstones.Load(), Partitions: make([]snapPart, 0, len(s.parts))}
	for t, id := range s.topicIDs {
		if snap.TopicIDs == nil {
			snap.TopicIDs = map[string]string{}
		}
		snap.TopicIDs[t] = formatTopicID(id)
	}
	offs := kadm.Offsets{}
	for _, p := range s.parts {
		sp := snapPart{Topic: p.topic, Partition: p.partition, Next: p.next}
		if p.end >= 0 {
			e := p.end
			sp.End = &e
		}
		if len(p.upsert) > 0 {
			sp.Upsert = encodeUpsert(p.upsert)
		}
		snap.Partitions = append(snap.Partitions, sp)
		offs.AddOffset(p.topic, p.partition, p.next, -1)
	}
	if s.cfg.groupID != "" {
		if len(s.snaps) == maxSnaps {
			s.snaps = append(s.snaps[:0], s.snaps[1:]...)
		}
		s.snaps = append(s.snaps, offs)
	}
	return statecodec.EncodeJSON(snapshotVersion, snap)
}

// encodeUpsert writes a partition's upsert state, keys in order.
func encodeUpsert(m map[string][]byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		v := m[k]
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// NotifyCheckpointComplete commits the positions of the completed
// checkpoint to the consumer group ('properties.group.id'), so that lag
// tools show the job's progress. The source does not read them back on a
// restore (the checkpoint has the positions); a failed commit is therefore
// not an error of the job: GroupCommitError reports the last one.
//
// The runtime does not say which snapshot belongs to which checkpoint; the
// positions committed are those of the last snapshot taken before the
// notification, which is the completed checkpoint's with at most one
// checkpoint in flight ('execution.checkpointing.max-concurrent-checkpoints'
// = 1, the default), because the runtime delivers the completion of
// checkpoint n to a source before the trigger of n+1.
func (s *Source) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	if len(s.snaps) == 0 {
		return nil
	}
	offs := s.snaps[len(s.snaps)-1]
	s.snaps = s.snaps[:0]
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	next := &groupCommit{checkpointID: checkpointID, offs: offs}
	if s.committing {
		s.commitNext = next // the running commit's goroutine takes it
		return nil
	}
	s.committing = true
	s.commits.Add(1)
	go s.commitLoop(ctx, next)
	return nil
}

// groupCommit is the positions of a completed checkpoint to commit to the
// consumer group.
type groupCommit struct {
	checkpointID int64
	offs         kadm.Offsets
}

// commitLoop commits c, then whatever positions came meanwhile, until
// none wait.
func (s *Source) commitLoop(ctx context.Context, c *groupCommit) {
	defer s.commits.Done()
	for c != nil {
		resp, err := s.kadm.CommitOffsets(ctx, s.cfg.groupID, c.offs)
		if err == nil {
			err = resp.Error()
		}
		s.commitMu.Lock()
		if err != nil {
			s.groupCommitErr = fmt.Errorf("committing the offsets of checkpoint %d to consumer group '%s': %w", c.checkpointID, s.cfg.groupID, err)
		} else {
			s.groupCommitErr = nil
		}
		c, s.commitNext = s.commitNext, nil
		s.committing = c != nil
		s.commitMu.Unlock()
	}
}

// WaitGroupCommits waits until the commits to the consumer group that
// NotifyCheckpointComplete started have ended. Not safe concurrently with
// NotifyCheckpointComplete (the source's goroutine calls both).
func (s *Source) WaitGroupCommits() { s.commits.Wait() }

// GroupCommitError is the error of the last commit of offsets to the
// consumer group, nil when it succeeded (or none ended yet).
func (s *Source) GroupCommitError() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.groupCommitErr
}

// SkippedRecords is the number of bad messages skipped because the
// format's ignore-parse-errors is set (kept in the snapshot).
// It may be called from any goroutine (exec.SkipCounter).
func (s *Source) SkippedRecords() int64 { return s.skipped.Load() }

// TombstonesSkipped is the number of messages without a value the plain
// kafka source skipped (kept in the snapshot); upsert-kafka reads them as
// deletes and counts none. It may be called from any goroutine
// (exec.TombstoneCounter).
func (s *Source) TombstonesSkipped() int64 { return s.tombstones.Load() }

// Close waits for the commit to the consumer group that runs, then closes
// the clients.
func (s *Source) Close() error {
	s.WaitGroupCommits()
	if s.cl != nil {
		s.cl.Close()
	}
	if s.adm != nil {
		s.adm.Close()
	}
	if s.dec != nil {
		s.dec.release()
	}
	return nil
}

// String names the subtask's partitions, for debugging.
func (s *Source) String() string {
	var b strings.Builder
	for i, p := range s.parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s/%d@%d", p.topic, p.partition, p.next)
	}
	return b.String()
}
