package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/session"
)

// TestDatadriven runs the files under testdata/. Commands:
//
//	exec     run statements (DDL, SET); prints "ok" or the error
//	explain  EXPLAIN the statement; prints both plans or the error
//	error    execute the statement; prints the error it must fail with
//
// Regenerate expectations after an intended change with
// `go test ./planner -rewrite`.
func TestDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s, err := session.Open("")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if _, err := s.Execute(ctx, d.Input); err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				return "ok\n"
			case "explain":
				rs, err := s.Execute(ctx, "EXPLAIN "+d.Input)
				if err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				return rs[0].Text
			case "error":
				_, err := s.Execute(ctx, d.Input)
				if err == nil {
					t.Fatalf("%s: expected an error", d.Pos)
				}
				return strings.TrimSpace(err.Error()) + "\n"
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}
