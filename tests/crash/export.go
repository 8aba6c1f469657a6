package crash

// The checks of committed output, for the other end-to-end packages that
// run the same jobs (tests/objectstore).

// CheckAgg replays the committed debezium-json changelog of
// `INSERT INTO agg_out SELECT id % 1000, COUNT(*), SUM(id) FROM gen GROUP BY id % 1000`
// in dir and compares it with the aggregate of the ids 1..n: exactly one
// row per key, every change applied to a row that was there.
func CheckAgg(dir string, n int64) error { return checkAgg(dir, n) }

// CheckIDs checks that the committed csv part files in dir hold every id
// in 1..n exactly once.
func CheckIDs(dir string, n int64) error { return checkIDs(dir, n, false) }

// CheckAggFinal reads agg_out's committed changelog in dir as an upsert
// stream keyed by k and checks that the last row of every key is the
// aggregate of the ids 1..n (changes committed twice, after a fallback to
// an older checkpoint, are accepted).
func CheckAggFinal(dir string, n int64) error { return checkAggFinal(dir, n) }
