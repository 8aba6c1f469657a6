package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeWindow bounds how many transactional ids the abort of lingering
// transactions probes when the broker cannot list transactions.
const probeWindow = 1000

// admin returns the plain client of the exactly-once sink.
func (s *Sink) admin() (*kgo.Client, error) {
	if s.adm == nil {
		cl, err := s.cfg.newClient()
		if err != nil {
			return nil, s.errorf("%v", err)
		}
		s.adm = cl
	}
	return s.adm, nil
}

// retriable reports whether a transaction coordinator's answer means "try
// again shortly".
func retriable(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator)
}

// lost reports whether an answer to the commit of a pre-committed
// transaction means that the broker no longer has it open: it forgot the
// transaction (unknown), or aborted it (its timeout, a fence).
func lost(err error) bool {
	return unknownTxn(err) || errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerEpoch)
}

// unknownTxn reports whether the broker answered that it does not know the
// transactional id or its producer id: INVALID_PRODUCER_ID_MAPPING (EndTxn,
// AddPartitionsToTxn and Produce of a transactional id or producer id the
// coordinator has no state for), TRANSACTIONAL_ID_NOT_FOUND
// (DescribeTransactions) or UNKNOWN_PRODUCER_ID (Produce, a partition
// without the producer's state). Apache Kafka and kfake answer so after
// they lost their transaction state (a broker restarted without its data)
// or expired the id ('transactional.id.expiration.ms'), not after a
// timeout: a timed-out transaction is aborted and its epoch bumped, so its
// commit is answered PRODUCER_FENCED or INVALID_TXN_STATE.
func unknownTxn(err error) bool {
	return errors.Is(err, kerr.InvalidProducerIDMapping) || errors.Is(err, kerr.TransactionalIDNotFound) ||
		errors.Is(err, kerr.UnknownProducerID)
}

// lostError is the error of a transaction the broker no longer has open:
// what the broker's answer err means, and that the rows of the checkpoint
// (or, for checkpointID < 0, those written since the last checkpoint) are
// not committed. The topic's id is looked up too: a broker that lost its
// data has lost the topic, and the rows committed before with it.
func (s *Sink) lostError(ctx context.Context, checkpointID int64, r ref, err error) error {
	whose := fmt.Sprintf("the rows of checkpoint %d are lost: they were not committed", checkpointID)
	if checkpointID < 0 {
		whose = "the rows written since the last checkpoint were not committed (the job restarts from its last checkpoint)"
	}
	var why string
	switch {
	case unknownTxn(err):
		why = fmt.Sprintf("the broker no longer knows transaction %s (producer id %d, epoch %d): it answered %v, so it has lost the transaction's state, "+
			"as a broker does that restarted without its data (kafka-dev keeps everything in memory), or it expired the transactional id ('transactional.id.expiration.ms'); the transaction did not time out",
			r.ID, r.ProducerID, r.Epoch, err)
		if checkpointID >= 0 {
			whose = fmt.Sprintf("the rows of checkpoint %d are lost: they were not committed (or were, and went with the broker's data)", checkpointID)
		}
	case errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch):
		why = fmt.Sprintf("the broker has moved transactional id %s past the transaction's epoch %d (it answered %v): it aborted the transaction when it timed out "+
			"('%s' = %v, which must exceed the time a checkpoint takes to complete and a failed job to restart), or another producer with the same transactional id fenced it",
			r.ID, r.Epoch, err, OptTxnTimeout, s.cfg.txnTimeout)
	default:
		why = fmt.Sprintf("transaction %s (producer id %d, epoch %d) is no longer open (the broker answered %v): it was aborted, most likely by its timeout "+
			"('%s' = %v, which must exceed the time a checkpoint takes to complete and a failed job to restart)",
			r.ID, r.ProducerID, r.Epoch, err, OptTxnTimeout, s.cfg.txnTimeout)
	}
	msg := whose + ": " + why
	if terr := s.checkTopic(ctx, s.restoredTopic); errors.Is(terr, ErrTopicRecreated) {
		var te *TopicRecreatedError
		errors.As(terr, &te)
		return s.wrap(&lostTxnError{msg: msg, cause: err, topic: te})
	}
	return s.wrap(&lostTxnError{msg: msg, cause: err})
}

// ErrTransactionLost is matched (errors.Is) by the error of a pre-committed
// transaction the broker no longer has open.
var ErrTransactionLost = errors.New("transaction lost")

type lostTxnError struct {
	msg   string
	cause error
	topic *TopicRecreatedError
}

func (e *lostTxnError) Error() string {
	if e.topic != nil {
		return e.msg + "; and " + e.topic.Error()
	}
	return e.msg
}

func (e *lostTxnError) Is(target error) bool { return target == ErrTransactionLost }

func (e *lostTxnError) Unwrap() []error {
	var out []error
	if e.cause != nil {
		out = append(out, e.cause)
	}
	if e.topic != nil {
		out = append(out, e.topic)
	}
	return out
}

// commitRecovered commits a transaction this instance does not own (a
// restore after a crash) with a raw EndTxn carrying the producer id and
// epoch recorded at its pre-commit; no InitProducerID comes first (that
// would abort it). NONE means committed, also for a transaction committed
// before.
func (s *Sink) commitRecovered(ctx context.Context, checkpointID int64, r ref) error {
	adm, err := s.admin()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = r.ID
	req.ProducerID = r.ProducerID
	req.ProducerEpoch = r.Epoch
	req.Commit = true
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		resp, err := req.RequestWith(ctx, adm)
		if err != nil {
			return s.errorf("committing transaction %s of checkpoint %d: %v", r.ID, checkpointID, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		switch {
		case err == nil:
			return nil
		case lost(err):
			return s.lostError(ctx, checkpointID, r, err)
		case retriable(err):
			select {
			case <-ctx.Done():
				return s.errorf("committing transaction %s of checkpoint %d: %v", r.ID, checkpointID, ctx.Err())
			case <-time.After(backoff):
			}
		default:
			return s.errorf("committing transaction %s of checkpoint %d: %v", r.ID, checkpointID, err)
		}
	}
}

// scope is a range of transactional ids whose open transactions nobody
// will commit: those of one (old) sink subtask from a sequence number on.
type scope struct {
	prefix  string
	subtask int
	from    int64
	// to, if not 0, ends the range (exclusive).
	to int64
}

// sweepEvery is how often, at most, a restored sink aborts again the
// transactions opened under the ids of the instances it took over (sweep).
const sweepEvery = time.Second

// recover runs once, before the sink's first transaction, after the
// restored handles (if any) were committed. It aborts every transaction
// left open by earlier instances of the subtask that no checkpoint
// recorded, and sets the sequence number of the next transaction.
//
// The ids to clean are, for each handle the restore committed (this
// subtask's, and after a rescale those of the old subtasks it took over),
// prefix-subtask-seq for every seq >= the handle's Next; without a handle
// for this subtask (a fresh start), every seq of this subtask under the
// current prefix. Each open transaction among them is aborted by an
// InitProducerID on its id, which fences its producer and aborts it. The
// open transactions are found with ListTransactions (Kafka 3.0+); a broker
// without it is probed id by id from Next up, stopping at the first id
// that was never used (InitProducerID answers epoch 0 for a new id) or
// after probeWindow ids.
//
// The new sequence starts at max(Next, the wall clock in milliseconds), so
// that no id a handle could name is used again by a later run.
func (s *Sink) recover(ctx context.Context) error {
	if s.recovered {
		return nil
	}
	scopes := map[[2]string]*scope{}
	key := func(prefix string, subtask int) [2]string { return [2]string{prefix, strconv.Itoa(subtask)} }
	for _, h := range s.restored {
		k := key(h.Prefix, h.Subtask)
		if sc := scopes[k]; sc == nil {
			scopes[k] = &scope{prefix: h.Prefix, subtask: h.Subtask, from: h.Next}
		} else {
			sc.from = max(sc.from, h.Next)
		}
	}
	own := key(s.prefix, s.spec.Subtask)
	next := int64(0)
	if sc := scopes[own]; sc != nil {
		next = sc.from
	} else {
		scopes[own] = &scope{prefix: s.prefix, subtask: s.spec.Subtask}
	}
	if err := s.abortLingering(ctx, scopes); err != nil {
		return err
	}
	s.seq = max(next, time.Now().UnixMilli())
	s.recovered = true
	s.restored = nil
	// From now on no instance of this job uses the ids of scopes but this
	// one, from s.seq on: sweep aborts whatever another opens below.
	scopes[own].to = s.seq
	s.superseded, s.lastSweep = scopes, time.Now()
	return nil
}

// sweep aborts again the open transactions of the ids recover cleaned, up
// to this instance's first (at most every sweepEvery unless now). The
// instance it took over may still run: a process paused while another
// took over its job from the checkpoints in an object store, and woken
// since. Its transactions open at the takeover were aborted by recover,
// but each of its transactions has an id of its own, and those it opens
// after are fenced by nobody: it never commits them (its checkpoints fail
// with checkpoint.ErrFenced), but an open transaction holds back every
// read_committed reader of its partitions until the transaction timeout.
// A broker without ListTransactions is not swept (probing would take the
// ids it probes).
func (s *Sink) sweep(ctx context.Context, now bool) error {
	if s.superseded == nil || (!now && time.Since(s.lastSweep) < sweepEvery) {
		return nil
	}
	s.lastSweep = time.Now()
	adm, err := s.admin()
	if err != nil {
		return err
	}
	if !s.canListTransactions(ctx, adm) {
		s.superseded = nil
		return nil
	}
	return s.abortLingering(ctx, s.superseded)
}

// abortLingering aborts the open transactions of scopes.
func (s *Sink) abortLingering(ctx context.Context, scopes map[[2]string]*scope) error {
	adm, err := s.admin()
	if err != nil {
		return err
	}
	if !s.canListTransactions(ctx, adm) {
		return s.probeLingering(ctx, scopes)
	}
	listed, err := kadm.NewClient(adm).ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		return s.errorf("listing open transactions: %v", err)
	}
	for _, t := range listed.Sorted() {
		if t.State != "Ongoing" {
			continue
		}
		for _, sc := range scopes {
			seq, ok := seqOf(t.TxnID, sc.prefix, sc.subtask)
			if !ok || seq < sc.from || (sc.to > 0 && seq >= sc.to) {
				continue
			}
			if _, err := s.fence(ctx, t.TxnID); err != nil {
				return err
			}
		}
	}
	return nil
}

// canListTransactions reports whether the brokers answer ListTransactions
// (Kafka 3.0+).
func (s *Sink) canListTransactions(ctx context.Context, adm *kgo.Client) bool {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, adm)
	if err != nil || resp.ErrorCode != 0 {
		return false
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.ListTransactions.Int16() {
			return true
		}
	}
	return false
}

// seqOf parses the sequence number of id, which must be prefix-subtask-seq.
func seqOf(id, prefix string, subtask int) (int64, bool) {
	rest, ok := strings.CutPrefix(id, prefix+"-"+strconv.Itoa(subtask)+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil && n >= 0
}

// probeLingering is abortLingering for brokers without ListTransactions.
func (s *Sink) probeLingering(ctx context.Context, scopes map[[2]string]*scope) error {
	for _, sc := range scopes {
		for seq := sc.from; seq < sc.from+probeWindow; seq++ {
			epoch, err := s.fence(ctx, txnID(sc.prefix, sc.subtask, seq))
			if err != nil {
				return err
			}
			if epoch == 0 {
				break // never used: no later id was either
			}
		}
	}
	return nil
}

// fence sends InitProducerID for a transactional id, which aborts the
// transaction open under it, and returns the epoch the broker answered.
func (s *Sink) fence(ctx context.Context, id string) (int16, error) {
	adm, err := s.admin()
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = int32(s.cfg.txnTimeout.Milliseconds())
	req.ProducerID = -1
	req.ProducerEpoch = -1
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		resp, err := req.RequestWith(ctx, adm)
		if err != nil {
			return 0, s.errorf("aborting the lingering transaction %s: %v", id, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		switch {
		case err == nil:
			return resp.ProducerEpoch, nil
		case retriable(err):
			select {
			case <-ctx.Done():
				return 0, s.errorf("aborting the lingering transaction %s: %v", id, ctx.Err())
			case <-time.After(backoff):
			}
		default:
			return 0, s.errorf("aborting the lingering transaction %s: %v", id, err)
		}
	}
}

// String describes the sink's transactions, for debugging.
func (s *Sink) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seq=%d", s.prefix, s.seq)
	if s.cur != nil {
		fmt.Fprintf(&b, " open=%s", s.cur.ID)
	}
	for _, t := range s.pending {
		fmt.Fprintf(&b, " pending=%s", t.ID)
	}
	return b.String()
}
