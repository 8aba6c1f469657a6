// Package raw is Flink's raw format: a record is the value of the table's
// single column, as bytes, with no framing.
//
// The table (or, in a Kafka table, the part of the row the format holds:
// the value or the key) must have exactly one column, of type STRING,
// BYTES, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE. A
// STRING is its UTF-8 bytes, BYTES are taken as is, and the numeric types
// and BOOLEAN are their fixed-width binary form (1, 2, 4 or 8 bytes; a
// BOOLEAN is one byte, 0 or 1), big-endian unless 'raw.endianness' says
// otherwise, as in Flink.
//
// Options (after the 'raw.' prefix; Flink's names and defaults):
//
//	charset     default 'UTF-8', the only one supported
//	endianness  'big-endian' (default) or 'little-endian'
//
// Reading: a nil record (a Kafka message without a value) is a NULL; a
// numeric record of the wrong length is an error. Writing: a NULL is
// written as an empty record; a Kafka sink writes it as a message without
// a value (see IsNull). The Encoder contract ends each record with a
// newline, as the line-based connectors need; a message-based connector
// strips it.
package raw
