// Package json is Flink's JSON format: each record is one JSON object whose
// members are the columns (JSON lines in files).
//
// Options (after the 'json.' prefix; Flink's names and defaults):
//
//	fail-on-missing-field  boolean, default false: a column absent from the
//	                       object is an error instead of NULL
//	ignore-parse-errors    boolean, default false: skip bad records instead
//	                       of failing (cannot be combined with the above)
//
// Reading: members are matched to columns by name, exactly first and then
// ignoring case; unknown members are ignored. A value may be a JSON number,
// string, boolean or null for any column of a matching type, and a string
// holding the value for any type (numbers in strings, as Flink accepts);
// DATE, TIME and TIMESTAMP are strings in SQL form ('2024-01-02 03:04:05')
// or ISO form ('2024-01-02T03:04:05Z', or with an offset such as
// +02:00, taken in UTC); BYTES are base64 strings. A nested
// object or array is read into a STRING column as its JSON text. A record
// that is not JSON is a parse error (an error naming the record, or
// skipped and counted with ignore-parse-errors): among others one with a
// byte that is not UTF-8 anywhere in it, or with a bare NaN, Infinity or
// -Infinity (those are read from strings: "NaN").
//
// Writing: one object per row with every column, NULL as null, numbers as
// JSON numbers (NaN and infinities as strings), everything else as strings
// in the form textenc writes them. What is written is always JSON: a
// STRING holding bytes that are not UTF-8 (read by raw or csv) has each
// such byte written as U+FFFD, the replacement character.
package json
