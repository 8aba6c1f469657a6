// Package connectors is what the binary imports to get every built-in
// connector: importing it (for its side effects) runs the init function of
// each connector package, which registers the connector's capabilities in
// catalog's registry and its source and sink factories in exec's.
//
// The connectors, one package each:
//
//	datagen     generated rows (Flink's datagen): the benchmark source
//	filesystem  CSV and JSON-lines files, read (bounded) and written
//	print       a sink printing each row as Flink does: +I[1, a, NULL]
//	blackhole   a sink discarding everything
//	memory      the tables created without WITH (catalog.MemoryConnector)
//
// Shared helpers live under internal/: typed option parsing (option), row
// printing (rowfmt) and Arrow buffer helpers (arrowutil).
//
// Option names and defaults follow Flink's; where a connector differs from
// Flink the package documentation says so.
package connectors
