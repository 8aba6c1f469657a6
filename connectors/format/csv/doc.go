// Package csv is Flink's CSV format: one record per line (a quoted value
// may span lines), values separated by a delimiter.
//
// Options (after the 'csv.' prefix; Flink's names and defaults):
//
//	field-delimiter          one character, default ',' ('\t' for tab)
//	quote-character          one character, default '"'; a quote inside a
//	                         quoted value is doubled
//	disable-quote-character  boolean, default false: no quoting at all
//	escape-character         one character, default none: the character
//	                         after it is taken literally
//	allow-comments           boolean, default false: skip lines starting with '#'
//	ignore-parse-errors      boolean, default false: skip bad records
//	                         instead of failing
//	null-literal             string, default none: a value equal to it is NULL
//
// Reading: a record must have exactly one value per column of the table.
// An empty unquoted value is NULL for every type but STRING (where it is
// the empty string), as Flink's CSV format reads it. Values are parsed as
// textparse documents; BYTES are base64. Writing: values as textenc writes
// them, quoted only when they contain the delimiter, the quote character,
// a line break or the escape character; NULL as the null literal (empty by
// default).
package csv
