package planner_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/session"
)

var idRe = regexp.MustCompile(`id=([0-9a-f-]+)`)

// explainIDs runs the statements and returns the operator ids EXPLAIN of
// the last one prints, in plan order.
func explainIDs(t *testing.T, stmts ...string) []string {
	t.Helper()
	s, err := session.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, st := range stmts[:len(stmts)-1] {
		if _, err := s.Execute(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	rs, err := s.Execute(ctx, "EXPLAIN "+stmts[len(stmts)-1])
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range idRe.FindAllStringSubmatch(rs[0].Text, -1) {
		ids = append(ids, m[1])
	}
	if len(ids) == 0 {
		t.Fatalf("no ids in:\n%s", rs[0].Text)
	}
	return ids
}

const (
	ordersDelay5  = "CREATE TABLE orders (id BIGINT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen', 'rows-per-second' = '10')"
	ordersDelay30 = "CREATE TABLE orders (id BIGINT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '30' SECOND) WITH ('connector' = 'datagen', 'rows-per-second' = '99')"
	out           = "CREATE TABLE out (w TIMESTAMP(3), n BIGINT, total INT) WITH ('connector' = 'blackhole')"
)

// TestIDsOfAQuery: what a user may change without moving the operators'
// ids (aliases, the watermark delay, the table's options), and what moves
// them (another aggregate).
func TestIDsOfAQuery(t *testing.T) {
	query := func(agg, alias string) string {
		return "INSERT INTO out SELECT window_start AS " + alias + ", COUNT(*), " + agg + "(amount) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"
	}
	base := explainIDs(t, ordersDelay5, out, query("SUM", "w"))
	if got := explainIDs(t, ordersDelay5, out, query("SUM", "window_begins")); !slices.Equal(got, base) {
		t.Errorf("another alias moved the ids: %v, was %v", got, base)
	}
	if got := explainIDs(t, ordersDelay30, out, query("SUM", "w")); !slices.Equal(got, base) {
		t.Errorf("another watermark delay and rate moved the ids: %v, was %v", got, base)
	}
	// The plan: #1 source, #2 the Calc of the aggregates' arguments, #3 the
	// window aggregate, #4 the Calc of the select list, #5 the sink.
	got := explainIDs(t, ordersDelay5, out, query("MAX", "w"))
	if len(got) != 5 || len(base) != 5 || got[0] != base[0] || got[1] != base[1] {
		t.Fatalf("MAX instead of SUM: ids %v, was %v; want the same source and argument Calc", got, base)
	}
	for i := 2; i < len(got); i++ {
		if got[i] == base[i] {
			t.Errorf("MAX instead of SUM kept the id %s of operator #%d", got[i], i+1)
		}
	}
}
