// Package upsertkafka is Flink's 'upsert-kafka' connector: a Kafka topic as
// a table with a PRIMARY KEY, the message key, where the last message of a
// key is the key's row and a message without a value (a tombstone) deletes
// it. The source and sink are those of package kafka in upsert mode; this
// package registers them.
//
// The table needs a PRIMARY KEY (... PRIMARY KEY (k) NOT ENFORCED), 'topic'
// (one), 'properties.bootstrap.servers', 'key.format' and 'value.format'
// (json, csv or raw; not a changelog format: the table is the changelog).
// CREATE TABLE records the primary key in the options as 'key.fields'
// (written by the user, it must be the primary key), because the runtime
// hands connectors the options but not the key. The other options are the
// kafka connector's: 'value.fields-include' (ALL by default: the value
// holds every column), 'key.fields-prefix', the formats' options under
// 'key.<format>.' and 'value.<format>.', 'properties.group.id',
// 'properties.isolation.level', 'scan.bounded.mode' and its arguments,
// 'scan.topic-partition-discovery.interval', and for the sink
// 'sink.delivery-guarantee', 'sink.transactional-id-prefix' and
// 'properties.transaction.timeout.ms' with the same exactly-once protocol.
// The scan always starts at the earliest offset, as Flink's does.
//
// Sink: the table accepts updates. +I and +U rows are written as messages
// (key: the primary key columns in the key format; value: the row), -D as
// a tombstone (the key, no value), and -U is dropped: the +U that follows
// replaces the key's row. Messages of one key go to one partition (murmur2
// of the key), in order.
//
// Source: the scan produces a changelog, normalised from the upserts with
// the last value of every key, which the source keeps in memory and in its
// snapshot (a Go map: fine for tests and quickstarts, not for topics with
// millions of keys): a new key is +I, a changed value -U (the old row) and
// +U (the new), the same value again nothing, a tombstone of a known key
// -D (the old row), one of an unknown key nothing. Keys and values compare
// as bytes. A message without a key is a bad message.
package upsertkafka
