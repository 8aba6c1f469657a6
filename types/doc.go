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
//	Null                       nil (the type of a bare NULL literal)
//
// A nil Value is SQL NULL for every type.
package types
