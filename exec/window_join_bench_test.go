package exec_test

import (
	"fmt"
	"testing"
)

// BenchmarkPipelineWindowJoin joins two datagen streams of 2M rows each
// (10,000 keys) on their TUMBLE windows of 10 s and the key, into a
// blackhole, as the window benchmarks run (benchWindowJob: one core,
// checkpoints every 10 s, pebble and hashmap backends); rows/s counts the
// rows of both inputs:
//
//	go test ./exec -run '^$' -bench PipelineWindowJoin -benchtime 1x -count 3
func BenchmarkPipelineWindowJoin(b *testing.B) {
	const rows, keys = 2_000_000, 10_000
	table := func(name string) string {
		return fmt.Sprintf(`CREATE TABLE %s (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
			'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '0',
			'fields.k.min' = '1', 'fields.k.max' = '%d', %s)`, name, rows, keys, eventTime)
	}
	checkpointed(b, "window-join", 2*rows, []string{
		table("l"), table("r"),
		`CREATE TABLE out (window_start TIMESTAMP(3), k INT, lv BIGINT, rv BIGINT) WITH ('connector' = 'blackhole')`,
	}, `INSERT INTO out SELECT L.window_start, L.k, L.v, R.v
		FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) L
		JOIN TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) R
		ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k`)
}
