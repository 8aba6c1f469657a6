package slt

import "strings"

// Dialect is how a file writes the values of its 'R' columns.
type Dialect int

const (
	// DialectSQLite is SQLite's sqllogictest: files named *.test, whose
	// values the C runner formats ("%.3f" in an 'R' column).
	DialectSQLite Dialect = iota
	// DialectRS is sqllogictest-rs's, as RisingWave's suites write it:
	// files named *.slt or *.slt.part, whose values are the engine's text
	// as PostgreSQL prints it, so an 'R' column holds 6, 1.5 or 1e+20
	// (never 6.0).
	DialectRS
)

// DialectOf tells the dialect of the file at path from its name.
func DialectOf(path string) Dialect {
	if strings.HasSuffix(path, ".slt") || strings.HasSuffix(path, ".slt.part") {
		return DialectRS
	}
	return DialectSQLite
}
