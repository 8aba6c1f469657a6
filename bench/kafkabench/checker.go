package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// checker reads an output topic (read_committed, from the start) while a
// contender runs and notes when the last value of every key equals its
// true count: the moment the output is complete.
type checker struct {
	topic string
	want  map[string]int64
	// done is closed when the output is complete; at is then that moment.
	done chan struct{}
	at   time.Time
	recs atomic.Int64
	err  error // set before done closes when reading failed
	stop context.CancelFunc
	// exited is closed when the reading goroutine has returned.
	exited chan struct{}
}

// entry is the last value seen for a key.
type entry struct {
	pv   int64
	want int64
}

func startChecker(addr, topic string, want map[string]int64) (*checker, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &checker{topic: topic, want: want, done: make(chan struct{}), stop: cancel, exited: make(chan struct{})}
	last := make(map[string]*entry, len(want))
	for k, w := range want {
		last[k] = &entry{pv: -1, want: w}
	}
	matched := 0
	go func() {
		defer close(c.exited)
		defer cl.Close()
		finished := false
		for !finished {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			var ferr error
			fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("reading %s[%d]: %w", t, p, err) })
			if ferr != nil {
				c.err = ferr
				close(c.done)
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				if ferr != nil {
					return
				}
				c.recs.Add(1)
				app, pv, err := parsePV(r.Value)
				if err != nil {
					ferr = fmt.Errorf("%s[%d] offset %d: %v: %q", r.Topic, r.Partition, r.Offset, err, r.Value)
					return
				}
				e := last[string(app)]
				if e == nil {
					ferr = fmt.Errorf("%s[%d] offset %d: unknown app id %q", r.Topic, r.Partition, r.Offset, app)
					return
				}
				if e.pv == e.want {
					matched--
				}
				e.pv = pv
				if e.pv == e.want {
					matched++
				}
			})
			if ferr != nil {
				c.err = ferr
				close(c.done)
				return
			}
			if matched == len(last) {
				c.at = time.Now()
				close(c.done)
				finished = true
			}
		}
	}()
	return c, nil
}

// close stops reading.
func (c *checker) close() {
	c.stop()
	<-c.exited
}

// parsePV reads app_id and pv of {"app_id":"...","pv":N}: a fast path for
// that exact shape, encoding/json otherwise.
func parsePV(v []byte) (app []byte, pv int64, err error) {
	if rest, ok := bytes.CutPrefix(v, []byte(`{"app_id":"`)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			app = rest[:i]
			if num, ok := bytes.CutPrefix(rest[i:], []byte(`","pv":`)); ok {
				if num, ok = bytes.CutSuffix(num, []byte("}")); ok {
					if pv, err = strconv.ParseInt(string(num), 10, 64); err == nil {
						return app, pv, nil
					}
				}
			}
		}
	}
	var m struct {
		AppID *string `json:"app_id"`
		PV    *int64  `json:"pv"`
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, 0, err
	}
	if m.AppID == nil || m.PV == nil {
		return nil, 0, fmt.Errorf("want app_id and pv")
	}
	return []byte(*m.AppID), *m.PV, nil
}

// wait waits until the output is complete, the context ends or failed
// reports an error (checked every 100ms).
func (c *checker) wait(ctx context.Context, failed func() error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return fmt.Errorf("output of %s not complete (%d records read): %w", c.topic, c.recs.Load(), ctx.Err())
		case <-tick.C:
			if err := failed(); err != nil {
				// Give the checker a moment to see output committed just
				// before the failure was noticed.
				select {
				case <-c.done:
					return c.err
				case <-time.After(2 * time.Second):
				}
				return err
			}
		}
	}
}
