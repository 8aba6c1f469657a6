// Package differential checks that a query comes to the same result over
// a stream as over a table. Each query of the TopN, OVER, set-operation
// and subquery suites (tests/sqllogic/testdata) runs
//
//   - bounded, over the in-memory tables;
//   - streaming, over the same tables created as replays ('scan.mode' =
//     'replay': unbounded inputs that read the rows in batches of the
//     batch size and end), at the default batch size and at 3 and 1: the
//     changelog, folded to a table, must equal the bounded rows as a
//     multiset; and once more at parallelism 2 (batch size 3);
//   - following the tables it reads (an OPTIONS('scan.mode'='follow') hint
//     after each table name), at batch size 3: once the folded changelog
//     equals the bounded rows, every table is updated in place (UPDATE t
//     SET c = c, a -U and a +U of each row), so the query's operators
//     retract and re-add all their input, and the folded changelog must
//     come back to the bounded rows.
//
// A query that an unbounded or updating input cannot run is listed with
// its error. The queries are read from the suites themselves, up to the
// statement that starts a suite's own streaming jobs (SET
// 'table.dml-sync' = 'false'). testdata/differential holds, per suite, how
// many queries agree in every run and each one that does not, with its
// reason (go test -rewrite updates it after an intended change).
package differential
