package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
	"github.com/lovoo/goka/codec"
	"github.com/lovoo/goka/storage"
)

// click is the JSON value of an input record, as goka's input codec
// decodes it.
type click struct {
	ClickID int64  `json:"click_id"`
	AppID   string `json:"app_id"`
	UserID  int64  `json:"user_id"`
	Ts      string `json:"ts"`
}

// clickCodec decodes clicks with encoding/json (goka's usual way).
type clickCodec struct{}

func (clickCodec) Encode(v any) ([]byte, error) { return json.Marshal(v) }
func (clickCodec) Decode(b []byte) (any, error) {
	var c click
	err := json.Unmarshal(b, &c)
	return &c, err
}

// pvValue is an output record: the app's new count.
type pvValue struct {
	app string
	pv  int64
}

// pvCodec writes {"app_id":"...","pv":N}, the shape streamsql writes.
type pvCodec struct{}

func (pvCodec) Encode(v any) ([]byte, error) {
	p := v.(pvValue)
	b := make([]byte, 0, 32)
	b = append(b, `{"app_id":"`...)
	b = append(b, p.app...)
	b = append(b, `","pv":`...)
	b = strconv.AppendInt(b, p.pv, 10)
	return append(b, '}'), nil
}

func (pvCodec) Decode(b []byte) (any, error) {
	app, pv, err := parsePV(b)
	return pvValue{string(app), pv}, err
}

// runGoka runs a goka processor group counting clicks per key (the app
// id) in its group table (goka.Persist) and emitting each new count to
// pv_goka: goka's at-least-once.
func runGoka(ctx context.Context, c config, b *broker, in *input, work string, round int) result {
	r := result{name: nameGoka, note: fmt.Sprintf("at-least-once, %s storage, default sarama settings but reading from the oldest offset", c.gokaStorage)}
	cfg := goka.DefaultConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	goka.ReplaceGlobalConfig(cfg)
	tmc := goka.NewTopicManagerConfig()
	tmc.Table.Replication = 1
	tmc.Stream.Replication = 1
	out := goka.Stream(fmt.Sprintf("pv_goka_%d", round))
	cb := func(ctx goka.Context, msg any) {
		cl := msg.(*click)
		var n int64
		if v := ctx.Value(); v != nil {
			n = v.(int64)
		}
		n++
		ctx.SetValue(n)
		ctx.Emit(out, ctx.Key(), pvValue{cl.AppID, n})
	}
	g := goka.DefineGroup(goka.Group(fmt.Sprintf("bench-goka-%d", round)),
		goka.Input("clicks", clickCodec{}, cb),
		goka.Persist(new(codec.Int64)),
		goka.Output(out, pvCodec{}),
	)
	sb := storage.MemoryBuilder()
	if c.gokaStorage == "leveldb" {
		sb = storage.DefaultBuilder(filepath.Join(work, fmt.Sprintf("goka-%d", round)))
	}
	p, err := goka.NewProcessor([]string{b.addr}, g,
		goka.WithTopicManagerBuilder(goka.TopicManagerBuilderWithConfig(cfg, tmc)),
		goka.WithConsumerGroupBuilder(goka.ConsumerGroupBuilderWithConfig(cfg)),
		goka.WithStorageBuilder(sb),
	)
	if err != nil {
		r.err = err
		return r
	}
	chk, err := startChecker(b.addr, string(out), in.counts)
	if err != nil {
		r.err = err
		return r
	}
	defer chk.close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	start := time.Now()
	go func() { runErr <- p.Run(runCtx) }()
	var perr error
	stopped := false
	err = chk.wait(ctx, func() error {
		if stopped {
			return fmt.Errorf("goka processor stopped: %v", perr)
		}
		select {
		case perr = <-runErr:
			stopped = true
			return fmt.Errorf("goka processor stopped: %v", perr)
		default:
		}
		return nil
	})
	r.elapsed = chk.at.Sub(start)
	r.outRecs = chk.recs.Load()
	cancel()
	if !stopped {
		select {
		case <-runErr:
		case <-time.After(30 * time.Second):
			logf("goka: the processor did not stop within 30s")
		}
	}
	r.err = err
	return r
}
