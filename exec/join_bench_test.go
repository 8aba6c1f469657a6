package exec_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// The join benchmarks run as the window benchmarks do (benchWindowJob: one
// core, bounded in-process datagen, 10 s checkpoints, Pebble and hashmap
// state):
//
//	go test ./exec -run '^$' -bench 'PipelineJoin' -benchtime 1x -count 3
//
// rows/s counts the rows of both inputs. STREAMSQL_BENCH_ROWS=n sets the
// rows of the stream (BenchmarkPipelineJoinTable) or of each stream
// (BenchmarkPipelineJoinStreams): with the default 1M a run ends before its
// first 10 s checkpoint, so ckpt-bytes, the state's size, needs more.

// BenchmarkPipelineJoinTable: a stream of 1M rows over 10K keys joined
// with a table of one row per key (its primary key is the join key) ->
// blackhole: every stream row joins one table row.
func BenchmarkPipelineJoinTable(b *testing.B) {
	stream, table := benchRows(1_000_000), 10_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE clicks (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
			'rows-per-second' = '0', 'fields.k.min' = '1', 'fields.k.max' = '%d')`, stream, table),
		fmt.Sprintf(`CREATE TABLE users (k INT, name STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'datagen',
			'number-of-rows' = '%d', 'rows-per-second' = '0', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1',
			'fields.k.end' = '%d', 'fields.name.length' = '8')`, table, table),
		`CREATE TABLE out (k INT, v BIGINT, name STRING) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT c.k, c.v, u.name FROM clicks c JOIN users u ON c.k = u.k`
	checkpointed(b, "bench-join-table", stream+table, ddl, q)
}

// BenchmarkPipelineJoinStreams: two streams of 1M rows each over 100K
// keys (about 10 rows per key and side) joined on the key -> blackhole.
func BenchmarkPipelineJoinStreams(b *testing.B) {
	rows, keys := benchRows(1_000_000), 100_000
	ddl := []string{
		fmt.Sprintf(`CREATE TABLE l (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
			'rows-per-second' = '0', 'fields.k.min' = '1', 'fields.k.max' = '%d')`, rows, keys),
		fmt.Sprintf(`CREATE TABLE r (k INT, w BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
			'rows-per-second' = '0', 'fields.k.min' = '1', 'fields.k.max' = '%d')`, rows, keys),
		`CREATE TABLE out (k INT, v BIGINT, w BIGINT) WITH ('connector' = 'blackhole')`,
	}
	const q = `INSERT INTO out SELECT l.k, v, w FROM l JOIN r ON l.k = r.k`
	checkpointed(b, "bench-join-streams", 2*rows, ddl, q)
}

// benchRows is STREAMSQL_BENCH_ROWS when it is set to a positive count,
// else def.
func benchRows(def int) int {
	if n, err := strconv.Atoi(os.Getenv("STREAMSQL_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return def
}
