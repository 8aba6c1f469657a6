package planner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
)

// nestedIn is SELECT a FROM t WHERE a IN (SELECT a FROM t WHERE a IN (...)),
// depth subqueries deep; with corr, each also reads the column a of the
// query around it.
func nestedIn(depth int, table string, corr bool) string {
	q := "SELECT a FROM " + table + " AS t0 WHERE a > 0"
	for i := 1; i <= depth; i++ {
		c := ""
		if corr {
			c = fmt.Sprintf(" AND t%d.a = t%d.a", i-1, i)
		}
		q = fmt.Sprintf("SELECT a FROM %s AS t%d WHERE a IN (%s%s)", table, i, q, c)
	}
	return q
}

// nestedScalar is SELECT (SELECT (... SELECT 1)), depth subqueries deep.
func nestedScalar(depth int) string {
	return strings.Repeat("SELECT (", depth) + "SELECT 1" + strings.Repeat(")", depth)
}

func deepSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, st := range []string{
		"CREATE TABLE b (a INT) WITH ('connector' = 'memory')",
		"INSERT INTO b VALUES (1), (2), (NULL)",
		"CREATE TABLE u (a INT) WITH ('connector' = 'datagen')",
	} {
		if _, err := s.Execute(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestDeepSubqueries: subqueries nested 30 deep plan binding about
// depth²/2 SELECT blocks. Each level used to bind the one below it twice
// or more (once to learn its correlation, then for real; IN three more
// times), 3³⁰ to 5³⁰ blocks in all: the query planned for ever.
func TestDeepSubqueries(t *testing.T) {
	s := deepSession(t)
	const depth = 30
	for _, tc := range []struct {
		name, query, want string
	}{
		{"IN over a bounded table, run while planning", nestedIn(depth, "b", false), "[[1] [2]]"},
		{"correlated IN over a bounded table", nestedIn(depth, "b", true), "[[1] [2]]"},
		{"IN over an unbounded table, semi joins", "EXPLAIN " + nestedIn(depth, "u", false), ""},
		{"correlated IN over an unbounded table", "EXPLAIN " + nestedIn(depth, "u", true), ""},
		{"scalar subqueries", nestedScalar(depth), "[[1]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			stop := planner.CountSelects(&n)
			rs, err := s.Execute(context.Background(), tc.query)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if got := fmt.Sprint(rs[0].Rows); got != tc.want {
					t.Fatalf("got %s, want %s", got, tc.want)
				}
			} else if !strings.Contains(rs[0].Text, "Join") {
				t.Fatalf("EXPLAIN shows no join:\n%s", rs[0].Text)
			}
			if max := (depth + 1) * (depth + 2) / 2; n > max {
				t.Fatalf("planning bound %d SELECT blocks, want at most %d", n, max)
			}
		})
	}
}

// TestSubqueryNestingLimit: subqueries nested deeper than
// planner.MaxSubqueryDepth are refused at the one too deep.
func TestSubqueryNestingLimit(t *testing.T) {
	s := deepSession(t)
	q := nestedScalar(planner.MaxSubqueryDepth + 1)
	_, err := s.Execute(context.Background(), q)
	// The subquery too deep is the (MaxSubqueryDepth+1)th "(".
	col := len(strings.Repeat("SELECT (", planner.MaxSubqueryDepth)) + len("SELECT ") + 1
	want := fmt.Sprintf("line 1:%d: subqueries nested more than %d levels deep", col, planner.MaxSubqueryDepth)
	if !errors.Is(err, planner.ErrUnsupported) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// TestSelectBlockLimit: a statement whose plan needs more than
// planner.MaxSelectBlocks SELECT blocks (here views, each reading the one
// before twice: 2ⁿ blocks) is refused with an error at the statement.
func TestSelectBlockLimit(t *testing.T) {
	s := deepSession(t)
	ctx := context.Background()
	if _, err := s.Execute(ctx, "CREATE VIEW v0 AS SELECT a FROM b"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		v := fmt.Sprintf("CREATE VIEW v%d AS SELECT a FROM v%d UNION ALL SELECT a FROM v%d", i, i-1, i-1)
		if _, err := s.Execute(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	defer planner.LimitSelectBlocks(1000)()
	if _, err := s.Execute(ctx, "SELECT COUNT(*) FROM v8"); err != nil {
		t.Fatalf("767 blocks are within the limit: %v", err)
	}
	n := 0
	stop := planner.CountSelects(&n)
	_, err := s.Execute(ctx, "\n  SELECT COUNT(*) FROM v12")
	stop()
	want := "line 2:3: planning the statement needs more than 1000 SELECT blocks to be bound"
	if !errors.Is(err, planner.ErrUnsupported) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	if n > 1001 {
		t.Fatalf("bound %d SELECT blocks before giving up, want at most 1001", n)
	}
}

// TestDeepSubqueryPlanningHonoursCancellation: a context canceled while
// nested subqueries are being planned stops planning at the next SELECT
// block.
func TestDeepSubqueryPlanningHonoursCancellation(t *testing.T) {
	s := deepSession(t)
	n := 0
	stop := planner.CountSelects(&n)
	defer stop()
	ctx := &cancelAfter{Context: context.Background(), after: 5}
	_, err := s.Execute(ctx, "EXPLAIN "+nestedIn(30, "u", true))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n > 5 {
		t.Fatalf("bound %d SELECT blocks, want at most 5: planning went on once canceled", n)
	}
}
