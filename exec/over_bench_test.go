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
