// Package differential checks that a query ends in the same result over a
// stream as over a table: each query of the TopN, OVER, set-operation and
// subquery suites (tests/sqllogic/testdata) runs bounded, over in-memory
// tables, and streaming, over the same tables read as unbounded inputs
// that replay their rows in small batches (the memory connector's
// 'scan.mode' = 'replay'), at the default batch size and at batch sizes 3 and 1;
// the streaming run's changelog, folded to a table, must equal the
// bounded result as a multiset. A query an unbounded input cannot run is
// listed with its error.
//
// The queries are read from the suites themselves, up to the statement
// that starts a suite's own streaming jobs (SET 'table.dml-sync' =
// 'false'). testdata/differential holds, per suite, the verdicts: how
// many queries agree, and each one refused or different with its reason
// (go test -rewrite updates it after an intended change).
package differential
