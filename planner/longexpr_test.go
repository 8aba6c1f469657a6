package planner_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/session"
)

// sumOf is SELECT term+term+...+term (n terms) over the rows of from.
func sumOf(term string, n int, from string) string {
	return "SELECT " + strings.Repeat(term+" + ", n-1) + term + from
}

// BenchmarkPlanLongSum parses and plans (EXPLAIN) a sum of n terms: linear
// in n, where it used to be quadratic (constant folding re-evaluated every
// subtree once per ancestor, positions were found by rescanning the
// statement, expressions were printed by concatenating their children).
func BenchmarkPlanLongSum(b *testing.B) {
	s, err := session.Open("")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		for _, term := range []string{"1", "a"} {
			q := "EXPLAIN " + sumOf(term, n, " FROM (SELECT 1 AS a) AS t")
			b.Run(fmt.Sprintf("terms=%d/%s", n, term), func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Execute(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestLongExpressions runs expressions of 10,000 terms (sums, AND chains,
// CASE chains, nested CASEs, sums of aggregates and of group keys) and
// checks their results.
func TestLongExpressions(t *testing.T) {
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 10000
	rows := " FROM (SELECT 1 AS a, TRUE AS c UNION ALL SELECT 2 AS a, TRUE AS c) AS t"
	var caseChain, nested strings.Builder
	caseChain.WriteString("SELECT CASE")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&caseChain, " WHEN a = %d THEN %d", n-i, -(n - i))
	}
	caseChain.WriteString(" END" + rows)
	nested.WriteString("SELECT " + strings.Repeat("CASE WHEN a > 0 THEN 1 + ", n) + "0" + strings.Repeat(" ELSE 0 END", n) + rows)
	for _, tc := range []struct {
		name, query, want string
	}{
		{"constant sum", sumOf("1", n, ""), "10000"},
		{"column sum", sumOf("a", n, rows), "10000 20000"},
		{"AND chain", "SELECT a" + rows + " WHERE " + strings.Repeat("c AND ", n-1) + "a > 1", "2"},
		{"CASE chain", caseChain.String(), "-1 -2"},
		{"nested CASE", nested.String(), "10000 10000"},
		{"sum of aggregates", sumOf("SUM(a)", n, rows), "30000"},
		{"sum of a group key", sumOf("a", n, rows+" GROUP BY a"), "10000 20000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := s.Execute(ctx, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rs[0].Rows {
				got = append(got, fmt.Sprint(r[0]))
			}
			sort.Strings(got) // UNION ALL gives no order
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
}

// TestDeepExpressionIsAnError: an expression nested deeper than
// planner.MaxExprDepth is refused with an error, not a stack overflow.
func TestDeepExpressionIsAnError(t *testing.T) {
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Execute(context.Background(), "EXPLAIN "+sumOf("1", planner.MaxExprDepth+10, ""))
	if !errors.Is(err, planner.ErrUnsupported) || !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("got %v, want an error about the nesting", err)
	}
}

// cancelAfter is a context whose Err reports it canceled from its
// after-th call on: planning must look at it while it works, not only
// before it starts.
type cancelAfter struct {
	context.Context
	calls, after int64
}

func (c *cancelAfter) Err() error {
	if atomic.AddInt64(&c.calls, 1) >= c.after {
		return context.Canceled
	}
	return nil
}

// TestPlanningHonoursCancellation: a context canceled while a long
// expression is being planned stops planning with the context's error.
func TestPlanningHonoursCancellation(t *testing.T) {
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := "EXPLAIN " + sumOf("1", 20000, "")
	ctx := &cancelAfter{Context: context.Background(), after: 3}
	_, err = s.Execute(ctx, q)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// Canceled before it starts: no work at all.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Execute(done, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
