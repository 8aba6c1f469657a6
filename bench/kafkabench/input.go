package main

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// input is the produced clicks topic.
type input struct {
	took time.Duration
	// counts is the true count per app id.
	counts map[string]int64
}

// mix is splitmix64: a well-spread hash of i.
func mix(i uint64) uint64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9
	i = (i ^ (i >> 27)) * 0x94d049bb133111eb
	return i ^ (i >> 31)
}

var baseTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// produceClicks produces n clicks {"click_id","app_id","user_id","ts"} keyed
// by app id into topic clicks with a batching franz-go producer.
func produceClicks(addr string, n, keys int) (*input, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.DefaultProduceTopic("clicks"),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(1<<20),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	in := &input{counts: make(map[string]int64, keys)}
	names := make([][]byte, keys)
	for k := range names {
		names[k] = []byte("app-" + strconv.Itoa(k))
	}
	var firstErr atomic.Value
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, err)
		}
	}
	ctx := context.Background()
	start := time.Now()
	for id := 1; id <= n; id++ {
		k := int(mix(uint64(id)) % uint64(keys))
		in.counts[string(names[k])]++
		v := make([]byte, 0, 96)
		v = append(v, `{"click_id":`...)
		v = strconv.AppendInt(v, int64(id), 10)
		v = append(v, `,"app_id":"`...)
		v = append(v, names[k]...)
		v = append(v, `","user_id":`...)
		v = strconv.AppendUint(v, mix(uint64(id)<<1)%100000, 10)
		v = append(v, `,"ts":"`...)
		v = baseTime.Add(time.Duration(id)*time.Millisecond).AppendFormat(v, "2006-01-02 15:04:05.000")
		v = append(v, `"}`...)
		cl.Produce(ctx, &kgo.Record{Key: names[k], Value: v}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	in.took = time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	return in, nil
}
