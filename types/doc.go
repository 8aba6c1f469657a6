// Package types owns streamsql's SQL type system: the logical types a user
// writes in DDL (BOOLEAN ... TIMESTAMP(p)), how each maps onto an Arrow data
// type in a batch, the Go value that stands for one scalar of each type, and
// how values print (Flink's CAST(x AS STRING) rules).
//
// It imports nothing of streamsql's; every other package may import it.
//
// Physical representation of one scalar value (Value), by Kind:
//
//	Boolean                    bool
//	TinyInt, SmallInt, Int,    int64 (range checked against the kind)
//	BigInt
//	Float, Double              float64
//	Decimal                    decimal128.Num, scaled by T.Scale
//	String                     string
//	Bytes                      []byte
//	Date                       int32, days since 1970-01-01
//	Time                       int32, milliseconds since midnight
//	Timestamp                  int64, microseconds since 1970-01-01 00:00:00 (no zone)
//	IntervalDayTime            int64, milliseconds
//	IntervalYearMonth          int64, months
//	Row                        []Value, one per field (T.Fields)
//	Null                       nil (the type of a bare NULL literal)
//
// A nil Value is SQL NULL for every type.
//
// A ROW is an Arrow struct array, a child array per field. Every producer
// of struct arrays here keeps a child NULL where its row is NULL (arrow's
// StructBuilder does), though readers do not rely on it: field access
// (functions.ResolveField) masks the child with the row's validity when
// it does not. A row prints as Flink's CAST(row AS STRING): (v1, v2).
package types
