// Package jsonrow reads and writes table rows as JSON objects, for the
// formats that hold rows in JSON (json, debezium-json). It parses by hand,
// straight into the held values of textparse columns, and writes by
// appending to a byte slice: no reflection and no allocation per record.
package jsonrow
