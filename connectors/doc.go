// Package connectors is what the binary imports to get every built-in
// connector: importing it (for its side effects) runs the init function of
// each connector package, which registers the connector's capabilities in
// catalog's registry and its source and sink factories in exec's.
//
// The connectors, one package each:
//
//	datagen     generated rows (Flink's datagen): the benchmark source
//	nexmark     the Nexmark benchmark's auction events (Flink nexmark's source)
//	filesystem  CSV and JSON-lines files, read (bounded) and written
//	print       a sink printing each row as Flink does: +I[1, a, NULL]
//	blackhole   a sink discarding everything
//	memory      the tables created without WITH (catalog.MemoryConnector)
//
// The text formats (csv, json) are in format/, behind a registry keyed by
// the 'format' option, so that every connector reading or writing records
// shares them.
//
// Shared helpers live under internal/: registering a connector in catalog's
// and exec's registries at once (registry), typed option parsing (option),
// text to values (textparse) and values to text (textenc), row printing
// (rowfmt), Arrow buffer helpers (arrowutil) and test helpers (conntest).
//
// Option names and defaults follow Flink's; where a connector differs from
// Flink the package documentation says so.
package connectors
