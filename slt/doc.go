// Package slt runs sqllogictest files against a SQL engine.
//
// It owns the test-file format and the runner, and nothing else: it imports
// no other package of this module and reaches the engine only through the
// DB interface, so any engine (or a test double) can be plugged in.
//
// The format is SQLite's sqllogictest with the additions of sqllogictest-rs:
//
//   - statement ok | statement error [regex] | statement count N (the
//     number of rows the statement changed, checked when the DB is a
//     Counter)
//   - query <types> [nosort|rowsort|valuesort] [label] [retry N backoff D],
//     the SQL, "----" and the expected results up to the next blank line;
//     query error [regex]. A multi-line expected error may follow "----"
//     after "statement error" or "query error" and is compared with the
//     error message as a whole (surrounding whitespace ignored).
//   - hash-threshold N, halt, skipif <engine>, onlyif <engine>,
//     control sortmode <mode>, control resultmode rowwise|valuewise,
//     control substitution on|off (as sqllogictest-rs: $NAME and ${NAME}
//     from Options.Vars, then the environment; $__TEST_DIR__ a directory
//     of the file's own),
//     include <glob>, sleep <duration>, system ok <command> [---- stdout],
//     loop <var> <start> <count> ... endloop, and # comments.
//
// Directives the runner does not know (RisingWave's "connection <name>",
// ...) are parsed as records of kind KindUnknown
// and counted as skipped, with the reason in the file's result; the records
// after them run as usual (a "connection" line does not switch engines: a
// file has one DB).
//
// skipif and onlyif compare the engine name of Options.Engine
// (case-insensitively) and may precede any record. "halt" stops the file
// (including the files that included the one it is in); the records left
// count as skipped. An included path is a glob relative to the including
// file's directory; matching files run in lexical order on the same DB and
// share the file's state (hash threshold, sort mode, labels). A file that
// includes itself, directly or not, is a failure. "system ok" runs its
// command with "sh -c" in the directory of the file it is written in.
//
// # Result formatting
//
// Expected results may be written in either layout: SQLite's, one value
// per line, or sqllogictest-rs's, one row per line with the columns
// separated by whitespace (compared with runs of whitespace collapsed).
//
// Values are formatted as SQLite's C runner does, guided by the query's
// declared type string: NULL prints as "NULL"; an 'I' column prints as an
// integer (a floating value is truncated, true/false print as 1/0, and
// text as its leading number or 0, as sqlite3_column_int64 reads it: 'abc'
// is 0); an 'R' column prints with "%.3f" (text likewise: 'abc' is
// 0.000); other columns print the engine's text, with the empty string as
// "(empty)" and control characters replaced by '@'. Because
// sqllogictest-rs files are written against the engine's own text (for
// instance "1.5" in an R column), a result also matches when its rows, in
// the engine's text with only NULL and the empty string mapped, equal the
// expected rows.
//
// The file's dialect (DialectOf) is told by its name: *.slt and *.slt.part
// are sqllogictest-rs's (RisingWave's suites, and ours), *.test SQLite's.
// In the sqllogictest-rs dialect that engine's text is PostgreSQL's for a
// double in an 'R' column: 6, not the engine's 6.0 (Java's, as Flink
// prints it), 10000000 for 1.0E7, 1e-05 for 1.0E-5; decimals and
// integers keep their text.
//
// Expected results of the form "N values hashing to H" are compared by
// count and by the MD5 of every value (C formatting, after sorting)
// followed by a newline, as the C runner computes it, whatever the hash
// threshold. Results written out in full are compared value by value even
// above the threshold ("hash-threshold" is accepted for compatibility).
// With rowsort and valuesort both the result and the expected values are
// sorted before they are compared. Queries that share a label must produce
// the same values.
//
// Run (or RunFiles and Report) is the entry point; Parse exposes the
// parser on its own.
package slt
