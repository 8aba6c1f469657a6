package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestSmoke(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []string{
		"SET 'table.dml-sync' = 'true'",
		"CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR)",
		"INSERT INTO t1 VALUES (1, 2, 'x'), (3, 4, 'y'), (5, NULL, 'x')",
		"SELECT a+b, c FROM t1 WHERE a > 1",
		"SELECT c, COUNT(*), SUM(a), MIN(b), MAX(a), AVG(a) FROM t1 GROUP BY c ORDER BY c",
		"SELECT DISTINCT c FROM t1",
		"SELECT COUNT(*) FROM t1 WHERE a > 100",
		"SELECT CASE WHEN a > 2 THEN 'big' ELSE 'small' END, a FROM t1 ORDER BY 2 DESC LIMIT 2",
		"SELECT * FROM t1 WHERE c > (SELECT MIN(c) FROM t1)",
		"EXPLAIN SELECT c, COUNT(*) FROM t1 GROUP BY c",
	} {
		rs, err := s.Execute(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, r := range rs {
			fmt.Println(q, "=>", r.Message, r.Text)
			for _, row := range r.Rows {
				for i, v := range row {
					fmt.Print(types.Format(r.Columns[i].Type, v), " ")
				}
				fmt.Println()
			}
		}
	}
}
