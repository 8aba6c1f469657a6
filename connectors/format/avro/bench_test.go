package avro_test

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/format/avro"
	"github.com/streamsql/streamsql/connectors/format/json"
	"github.com/streamsql/streamsql/connectors/internal/conntest"
	"github.com/streamsql/streamsql/exec"
)

// The record of bench/kafkabench: a click.
const clickColumns = "click_id BIGINT, app_id STRING, user_id BIGINT, ts TIMESTAMP(3)"

const benchRows = 100_000

// clicks returns n clicks as JSON (kafkabench's bytes) and as Avro (the
// same rows written by the avro encoder).
func clicks(b *testing.B, n int) (js, av [][]byte) {
	sch, err := conntest.ParseSchema(clickColumns)
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for id := 1; id <= n; id++ {
		v := make([]byte, 0, 96)
		v = append(v, `{"click_id":`...)
		v = strconv.AppendInt(v, int64(id), 10)
		v = append(v, `,"app_id":"app-`...)
		v = strconv.AppendInt(v, int64(id*7919%1000), 10)
		v = append(v, `","user_id":`...)
		v = strconv.AppendInt(v, int64(id*104729%100000), 10)
		v = append(v, `,"ts":"`...)
		v = base.Add(time.Duration(id)*time.Millisecond).AppendFormat(v, "2006-01-02 15:04:05.000")
		v = append(v, `"}`...)
		js = append(js, v)
	}
	// The same rows, read from JSON, written as Avro.
	spec := format.Spec{Schema: sch, Options: map[string]string{}, Mem: memory.DefaultAllocator}
	jd, err := json.NewDecoder(spec)
	if err != nil {
		b.Fatal(err)
	}
	defer jd.Release()
	for _, r := range js {
		if err := jd.Decode(r); err != nil {
			b.Fatal(err)
		}
	}
	rec := jd.Flush()
	defer rec.Release()
	enc, err := avro.NewEncoder(spec)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		av = append(av, enc.AppendRow(nil, rec, i))
	}
	return js, av
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeClicks decodes kafkabench's clicks into Arrow batches of
// exec.DefaultBatchSize rows, from JSON and from Avro; records/cpu-s is
// records per CPU second of the process (the machine is shared).
func BenchmarkDecodeClicks(b *testing.B) {
	js, av := clicks(b, benchRows)
	sch, _ := conntest.ParseSchema(clickColumns)
	spec := format.Spec{Schema: sch, Options: map[string]string{}, Mem: memory.DefaultAllocator}
	run := func(b *testing.B, d format.Decoder, recs [][]byte) {
		defer d.Release()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuTime()
		for range b.N {
			for _, r := range recs {
				if err := d.Decode(r); err != nil {
					b.Fatal(err)
				}
				if d.Rows() == exec.DefaultBatchSize {
					d.Flush().Release()
				}
			}
			d.Flush().Release()
		}
		cpu = cpuTime() - cpu
		b.ReportMetric(float64(len(recs)*b.N)/cpu.Seconds(), "records/cpu-s")
		b.ReportMetric(float64(len(recs)*b.N)/b.Elapsed().Seconds(), "records/s")
	}
	b.Run("JSON", func(b *testing.B) {
		d, err := json.NewDecoder(spec)
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, js)
	})
	b.Run("Avro", func(b *testing.B) {
		d, err := avro.NewDecoder(spec)
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, av)
	})
}
