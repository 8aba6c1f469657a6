package session

import (
	"context"
	"testing"
)

// FuzzPlan feeds arbitrary text through the parser and the planner
// (EXPLAIN plans without running anything). Bad input must come back as an
// error, never as a panic.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{
		"SELECT k, COUNT(*) FROM t GROUP BY k",
		"SELECT a + 1, CASE WHEN a > 1 THEN 'x' END FROM t WHERE b LIKE 'a%' ORDER BY 1 LIMIT 3",
		"SELECT * FROM (SELECT a, b FROM t) s WHERE a IN (1, 2, NULL)",
		"INSERT INTO t SELECT * FROM t UNION ALL SELECT * FROM t",
		"SELECT DISTINCT k FROM t HAVING COUNT(*) > 1",
		"SELECT CAST(a AS STRING), SUBSTRING(k, 2, 3), EXTRACT(YEAR FROM ts) FROM t",
		"SELECT SUM(a) FILTER (WHERE a > 0) FROM t",
		"SELECT ts + INTERVAL '5' SECOND FROM t",
	} {
		f.Add(s)
	}
	s, err := Open("")
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Execute(ctx, "CREATE TABLE t (k STRING, a INT, b STRING, ts TIMESTAMP(3), d DECIMAL(10, 2))"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		s.Execute(ctx, "EXPLAIN "+q)
	})
}
