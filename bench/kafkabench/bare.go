package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runBare is the floor: one franz-go GroupTransactSession consuming the
// clicks (read_committed), counting per app id in a Go map and producing
// the new count of each app id changed by a poll, committing the produced
// records together with the consumed offsets in one transaction per
// checkpoint interval (exactly-once).
func runBare(ctx context.Context, c config, b *broker, in *input, round int) result {
	r := result{name: nameBare, note: fmt.Sprintf("exactly-once: one transaction per %v with the offsets (GroupTransactSession)", c.checkpoint)}
	ends, err := endOffsets(ctx, b.addr, "clicks")
	if err != nil {
		r.err = err
		return r
	}
	topic, name := fmt.Sprintf("pv_bare_%d", round), fmt.Sprintf("bench-bare-%d", round)
	chk, err := startChecker(b.addr, topic, in.counts)
	if err != nil {
		r.err = err
		return r
	}
	defer chk.close()
	start := time.Now()
	var loopErr atomic.Value
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		if err := bareLoop(ctx, c, b, ends, name, topic); err != nil {
			loopErr.Store(err)
		}
	}()
	err = chk.wait(ctx, func() error {
		if err, _ := loopErr.Load().(error); err != nil {
			return err
		}
		return nil
	})
	<-loopDone
	if err == nil {
		if lerr, _ := loopErr.Load().(error); lerr != nil {
			err = lerr
		}
	}
	if err != nil {
		r.err = err
		return r
	}
	r.elapsed = chk.at.Sub(start)
	r.outRecs = chk.recs.Load()
	return r
}

// endOffsets lists the end offset of each partition of topic.
func endOffsets(ctx context.Context, addr, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lo, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	ends := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	if len(ends) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", topic)
	}
	return ends, nil
}

// bareLoop runs until every partition is consumed up to ends and the last
// transaction is committed.
func bareLoop(ctx context.Context, c config, b *broker, ends map[int32]int64, name, topic string) error {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(b.addr),
		kgo.ConsumerGroup(name),
		kgo.ConsumeTopics("clicks"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.TransactionalID(name),
		kgo.TransactionTimeout(60*time.Second),
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	)
	if err != nil {
		return err
	}
	defer sess.Close()
	type count struct {
		app   string
		n     int64
		dirty bool
	}
	counts := map[string]*count{}
	var dirty []*count
	pos := map[int32]int64{}
	caughtUp := func() bool {
		for p, end := range ends {
			if pos[p] < end {
				return false
			}
		}
		return true
	}
	if err := sess.Begin(); err != nil {
		return err
	}
	lastCommit := time.Now()
	var produceErr atomic.Value
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			produceErr.CompareAndSwap(nil, err)
		}
	}
	for {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetching %s[%d]: %w", t, p, err) })
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			app := appID(r.Value)
			cn := counts[string(app)]
			if cn == nil {
				cn = &count{app: string(app)}
				counts[cn.app] = cn
			}
			cn.n++
			if !cn.dirty {
				cn.dirty = true
				dirty = append(dirty, cn)
			}
		})
		for _, cn := range dirty {
			v := make([]byte, 0, 32)
			v = append(v, `{"app_id":"`...)
			v = append(v, cn.app...)
			v = append(v, `","pv":`...)
			v = strconv.AppendInt(v, cn.n, 10)
			v = append(v, '}')
			sess.Produce(ctx, &kgo.Record{Key: []byte(cn.app), Value: v}, promise)
			cn.dirty = false
		}
		dirty = dirty[:0]
		done := caughtUp()
		if done || time.Since(lastCommit) >= c.checkpoint {
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				return fmt.Errorf("ending a transaction: %w", err)
			}
			if perr, _ := produceErr.Load().(error); perr != nil {
				return fmt.Errorf("producing: %w", perr)
			}
			if !committed {
				return fmt.Errorf("a transaction was aborted (rebalance?)")
			}
			lastCommit = time.Now()
			if done {
				return nil
			}
			if err := sess.Begin(); err != nil {
				return err
			}
		}
	}
}

// appID is the app_id of a click's JSON value (a scan for the member, as
// a hand-written consumer would do; streamsql decodes every column).
func appID(v []byte) []byte {
	const member = `"app_id":"`
	i := bytes.Index(v, []byte(member))
	if i < 0 {
		return nil
	}
	rest := v[i+len(member):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return nil
}
