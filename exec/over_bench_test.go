package exec_test

import (
	"fmt"
	"testing"
)

// BenchmarkPipelineOver: datagen -> SUM(v) OVER (PARTITION BY k ORDER BY
// ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) over 1,000 keys ->
// blackhole, 5M append-only rows on one core, checkpointed on each backend
// (benchWindowJob):
//
//	go test ./exec -run '^$' -bench PipelineOver -benchtime 1x
//
// Event time advances 1 ms per row, up to 1 s out of order, the watermark
// 1 s behind (eventTime): a row waits about 1,000 rows for the watermark,
// and each key keeps its last 11 rows. STREAMSQL_BENCH_ROWS=n sets the rows.
func BenchmarkPipelineOver(b *testing.B) {
	rows := benchRows(5_000_000)
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE bids (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '1000', 'fields.v.min' = '1', 'fields.v.max' = '1000', %s)`, rows, eventTime),
		`CREATE TABLE out (k INT, ts TIMESTAMP(3), s BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) FROM bids`
	checkpointed(b, "bench-over", rows, ddl, q)
}

// BenchmarkPipelineOverSorted: a bounded datagen -> a window ordered by a
// non-time column over 1,000 keys (mode=[SORTED]: every row kept until
// the input ends, then sorted and framed) -> blackhole, 1M rows, the
// hashmap backend: a running SUM, RANK(), and LAG with a default, side by
// side so their cost per row compares within one run:
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench PipelineOverSorted -benchtime 1x
func BenchmarkPipelineOverSorted(b *testing.B) {
	rows := benchRows(1_000_000)
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE bids (k INT, v BIGINT) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '1000', 'fields.v.min' = '1', 'fields.v.max' = '100000')`, rows),
		`CREATE TABLE out (k INT, v BIGINT, r BIGINT) WITH ('connector' = 'blackhole')`,
		"SET 'state.backend' = 'hashmap'",
	}
	for _, c := range []struct{ name, call string }{
		{"sum", "SUM(v)"},
		{"rank", "RANK()"},
		{"lag", "LAG(v, 1, 0)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := `INSERT INTO out SELECT k, v, ` + c.call + ` OVER (PARTITION BY k ORDER BY v) FROM bids`
			benchWindowJob(b, rows, append(ddl, "SET 'pipeline.name' = 'bench-over-sorted-"+c.name+"'"), q)
		})
	}
}
