// Package arroyo runs Arroyo's SQL smoke queries (conformance/arroyo-smoke,
// from ArroyoSystems/arroyo crates/arroyo-sql-testing) through the engine
// and compares what their sinks write with Arroyo's golden outputs.
//
// They are not .slt records: each query is a script of CREATE TABLEs with
// Arroyo's test connector 'single_file' and an INSERT, and its result is a
// file of JSON rows. The harness does what Arroyo's own smoke test does
// (smoke_tests.rs, correctness_run_codegen and check_output_files): it
// replaces $input_dir by the directory of the inputs and $output_path by
// an output location, runs the script, and compares the output rows with
// the golden rows as a multiset, each row taken as a JSON object with its
// keys in order. 'single_file' itself is mapped here, not in the engine
// (see docs/DIALECT.md): a single_file table is a 'filesystem' table with
// the same path and format, and 'type' ('source' or 'sink') is dropped,
// since the engine tells a source from a sink by its use; the sink's path
// is a directory whose part files together are the output file.
//
// Timestamps are compared as instants: Arroyo's JSON writes
// 2023-10-09T17:13:40.200, the engine's (Flink's) 2023-10-09 17:13:40.200.
package arroyo
