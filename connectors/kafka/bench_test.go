package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/exec"
)

const benchRecords = 200_000

// fill writes n JSON clicks of about 100 bytes to topic.
func fill(b *testing.B, addr, topic string, n int) {
	cl := client(b, addr, kgo.ProducerLinger(0))
	ctx := context.Background()
	for i := 0; i < n; i++ {
		v := fmt.Sprintf(`{"app_id":"app-%04d","user_id":%d,"ts":"2024-01-02 03:04:05.123","pad":"%s"}`, i%1000, i, "xxxxxxxxxxxxxxxxxxxx")
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSourceJSON reads JSON clicks into Arrow batches; BareConsume is
// the floor: a kgo consumer touching every record.
func BenchmarkSourceJSON(b *testing.B) {
	addr := startCluster(b, 4, []string{"clicks"})
	fill(b, addr, "clicks", benchRecords)
	sch := mustSchema(b, "app_id STRING, user_id BIGINT, ts TIMESTAMP(3)")
	b.Run("Source", func(b *testing.B) {
		for range b.N {
			sp := spec(sch, map[string]string{"properties.bootstrap.servers": addr, "topic": "clicks", "format": "json",
				"scan.bounded.mode": "latest-offset"})
			sp.BatchSize = exec.DefaultBatchSize
			src, err := NewSource(sp)
			if err != nil {
				b.Fatal(err)
			}
			if err := src.Open(context.Background()); err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				bt, err := src.Next(context.Background())
				if err == io.EOF {
					break
				}
				if errors.Is(err, exec.ErrNoData) {
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				n += bt.Len()
				bt.Rec.Release()
			}
			src.Close()
			if n != benchRecords {
				b.Fatalf("read %d", n)
			}
		}
		b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("BareConsume", func(b *testing.B) {
		for range b.N {
			cl := client(b, addr, kgo.ConsumeTopics("clicks"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			n, sum := 0, 0
			for n < benchRecords {
				f := cl.PollFetches(context.Background())
				f.EachRecord(func(r *kgo.Record) { n++; sum += len(r.Value) })
			}
			cl.Close()
		}
		b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

// BenchmarkSink writes clicks in batches of 1024 rows with a checkpoint
// every 100 batches.
func BenchmarkSink(b *testing.B) {
	sch := mustSchema(b, "app_id STRING, user_id BIGINT")
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sch.Arrow())
	for i := 0; i < 1024; i++ {
		bld.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("app-%04d", i%1000))
		bld.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	for _, g := range []string{GuaranteeAtLeastOnce, GuaranteeExactlyOnce} {
		b.Run(g, func(b *testing.B) {
			addr := startCluster(b, 4, []string{"out"})
			sp := spec(sch, map[string]string{"properties.bootstrap.servers": addr, "topic": "out", "format": "json",
				"key.format": "raw", "key.fields": "app_id", "sink.delivery-guarantee": g})
			sp.CheckpointInterval = time.Second
			s, err := NewSink(sp)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := s.Open(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cp := int64(0)
			for i := range b.N {
				if err := s.Write(ctx, exec.Batch{Rec: rec}); err != nil {
					b.Fatal(err)
				}
				if i%100 == 99 {
					cp++
					h, err := s.PreCommit(ctx, cp)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Commit(ctx, cp, h); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Finish(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(1024*b.N)/b.Elapsed().Seconds(), "records/s")
			s.Close()
		})
	}
}
