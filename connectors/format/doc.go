// Package format defines how connectors read and write rows as text
// records (a CSV line, a JSON object) and keeps the registry of formats;
// the formats themselves are its subpackages csv, json, raw, debezium
// (debezium-json) and avro (avro, avro-confluent), which register in init.
// A binary format (avro) writes records without a terminator and is taken
// only by connectors that frame records themselves (Kafka); an encoder
// that must do something before its first record (register a schema) is
// a Preparer. A connector that reads files or
// messages picks a format by the value of its 'format' option and passes
// the format its options.
//
// A changelog format (debezium-json) reads and writes rows of every kind
// (+I, -U, +U, -D): its decoder is a ChangelogDecoder and its encoder a
// ChangelogEncoder. The others hold inserts only.
//
// Option keys of a format are written with the format's name as prefix, as
// in Flink: 'csv.field-delimiter', 'json.ignore-parse-errors'. A connector
// with several formats (a message key and value) passes another prefix
// ("key.json." ...).
package format
