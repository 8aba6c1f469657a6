// Package textenc writes the values of Arrow arrays as text, the way
// Flink's CSV and JSON formats write them: numbers as Java prints them,
// BOOLEAN as true/false, DATE/TIME/TIMESTAMP in SQL form
// (yyyy-MM-dd HH:mm:ss.fff), BYTES in base64.
package textenc
