package exec_test

import (
	"fmt"
	"testing"
)

// BenchmarkPipelineTopN: datagen -> Top-3 per key (ROW_NUMBER() OVER
// (PARTITION BY k ORDER BY v DESC) <= 3, rn not output) over 10,000 keys
// -> blackhole, 10M append-only rows, on one core, checkpointed on each
// backend (benchWindowJob):
//
//	go test ./exec -run '^$' -bench PipelineTopN -benchtime 1x
//
// v is random, so a key's k-th row enters its top 3 with probability
// 3/k: most rows are compared with the key's third row and dropped.
// STREAMSQL_BENCH_ROWS=n sets the rows.
func BenchmarkPipelineTopN(b *testing.B) {
	rows := benchRows(10_000_000)
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE bids (k INT, v BIGINT) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '10000')`, rows),
		`CREATE TABLE out (k INT, v BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT k, v FROM (
		SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM bids)
		WHERE rn <= 3`
	checkpointed(b, "bench-topn", rows, ddl, q)
}

// BenchmarkPipelineDedupLast: datagen -> deduplication keeping the last
// row per key by event time (ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts
// DESC) = 1, Nexmark q18's shape) over 1,000,000 keys -> blackhole, 10M
// append-only rows, on one core, checkpointed on each backend
// (benchWindowJob):
//
//	go test ./exec -run '^$' -bench PipelineDedupLast -benchtime 1x
//
// ts advances, so every row replaces its key's row: each emits -U of the
// old row and +U of the new one (+I for a key's first row).
// STREAMSQL_BENCH_ROWS=n sets the rows.
func BenchmarkPipelineDedupLast(b *testing.B) {
	rows := benchRows(10_000_000)
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE bids (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '1000000', %s)`, rows, eventTime),
		`CREATE TABLE out (k INT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT k, v, ts FROM (
		SELECT k, v, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM bids)
		WHERE rn = 1`
	checkpointed(b, "bench-dedup-last", rows, ddl, q)
}
