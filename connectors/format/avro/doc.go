// Package avro holds the formats 'avro' (Avro binary records whose schema
// is derived from the table's columns, as Flink's AvroSchemaConverter
// derives it) and 'avro-confluent' (Confluent's wire format: a zero byte,
// the writer schema's 4-byte id in a schema registry, then the Avro body).
// Both register in init.
//
// Schema derivation (Schema): BOOLEAN -> boolean; TINYINT, SMALLINT, INT ->
// int; BIGINT -> long; FLOAT -> float; DOUBLE -> double; CHAR, VARCHAR,
// STRING -> string; BINARY, VARBINARY, BYTES -> bytes; DECIMAL(p, s) ->
// bytes with logicalType decimal; DATE -> int with logicalType date; TIME
// -> int with logicalType time-millis; TIMESTAMP(p) -> long with
// logicalType timestamp-millis (p <= 3) or timestamp-micros (p <= 6); ROW
// -> a nested record. A nullable column is the union ["null", T] with
// default null. Other types (intervals, TIMESTAMP(7..9)) are refused
// when the table is created, naming the column.
//
// Decoding resolves the writer's schema to the table's (the reader's) by
// Avro's rules, once per writer schema: fields are matched by name,
// writer fields the table lacks are skipped, table columns the writer
// lacks are NULL (an error for a NOT NULL column), int widens to long,
// float and double, long to float and double, float to double, string and
// bytes read as each other, an enum reads as its symbol into a STRING, a
// union reads the branch the record holds. The resolved program decodes
// straight into the Arrow builders and allocates nothing per row. A record
// is appended whole or not at all.
//
// 'avro-confluent' looks writer schemas up by id in the registry at
// 'avro-confluent.url' and keeps them (and their resolved programs) by id;
// its encoder registers the table's schema under 'avro-confluent.subject'
// (for Kafka by default '<topic>-value' or '<topic>-key') before the first
// record and writes that id.
//
// Both formats are binary (format.Format.Binary): a record is a whole
// message, never a line, so only connectors that frame records themselves
// (kafka, upsert-kafka) take them.
package avro
