// Package textparse parses SQL values written as text (CSV fields, JSON
// strings, test input) into the physical representation types documents,
// and appends them to Arrow builders. The parsers take []byte and do not
// allocate on success (DECIMAL beyond 18 digits excepted).
//
// Accepted forms:
//
//	BOOLEAN    true/false (any case); also 1/0
//	integers   an optional sign and decimal digits, range checked
//	FLOAT, DOUBLE  Go's/Java's float syntax, NaN, Infinity, -Infinity
//	DECIMAL    a decimal number, rounded half up to the scale
//	DATE       yyyy-MM-dd
//	TIME       HH:mm:ss[.fff]
//	TIMESTAMP  yyyy-MM-dd HH:mm:ss[.f...], or with 'T' for the space (ISO
//	           8601), optionally ending in 'Z'; up to 9 fractional digits,
//	           truncated to microseconds and then to the type's precision
//	STRING     as is; BYTES the bytes of the text
package textparse
