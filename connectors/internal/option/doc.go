// Package option parses connector options (the WITH clause of CREATE TABLE)
// into typed values. Every function takes the option map, the key and the
// default used when the key is absent, and fails with an error that names
// the option and says what was expected:
//
//	'rows-per-second' must be a non-negative integer, got 'fast'
package option
