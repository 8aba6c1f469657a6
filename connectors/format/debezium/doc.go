// Package debezium is Flink's debezium-json format: each record is one
// change of a row in Debezium's JSON envelope,
//
//	{"before": {...} | null, "after": {...} | null, "op": "c" | "r" | "u" | "d", ...}
//
// where before and after are the row's image before and after the change,
// objects with a member per column as in the json format.
//
// Options (after the 'debezium-json.' prefix; Flink's names and defaults):
//
//	ignore-parse-errors  boolean, default false: skip bad records instead
//	                     of failing
//
// Flink's schema-include, timestamp-format.standard, map-null-key.* and
// encode.decimal-as-plain-number options are not supported: records are
// the bare envelope (no Kafka Connect "schema"/"payload" wrapper),
// timestamps are in SQL form and decimals plain numbers.
//
// Reading (a changelog): "c" (create) and "r" (snapshot read) are an insert
// (+I) of after; "u" (update) is an update-before (-U) of before followed
// by an update-after (+U) of after; "d" (delete) is a delete (-D) of
// before. An update or delete whose before is null is an error, as in Flink
// (Debezium's Postgres connector sends it without REPLICA IDENTITY FULL),
// and so is an op that is missing or unknown. Other members of the envelope
// ("source", "ts_ms", "transaction") are ignored. The images are read as
// the json format reads a record: members matched to columns by name
// (exactly, then ignoring case), unknown members ignored, missing ones
// NULL. A record appends all of its rows or none.
//
// Writing follows Flink's DebeziumJsonSerializationSchema, which has no
// update message: +I and +U are written as a create of the row,
// {"before":null,"after":{...},"op":"c"}, and -U and -D as a delete,
// {"before":{...},"after":null,"op":"d"}. An update thus becomes a delete
// of the old row and a create of the new one; reading the records back
// gives -D/+I instead of -U/+U, which a consumer applies the same way.
// Values are written as the json format writes them: every column, NULL as
// null, numbers as JSON numbers, TIMESTAMP as 'yyyy-MM-dd HH:mm:ss[.fff]',
// BYTES as base64.
package debezium
