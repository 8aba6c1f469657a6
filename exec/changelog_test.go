package exec_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/connectors/print"
	"github.com/streamsql/streamsql/session"
)

// TestChangelog runs the files under testdata/changelog: each shows the exact
// changelog (+I, -U, +U, -D) operators emit for a scripted input, as the
// print sink writes it. Commands:
//
//	exec  run statements; prints "ok" or the error
//	run   run an INSERT INTO a print table to completion; prints what the
//	      sink printed, or the error
//
// Inputs are small in-memory tables; 'table.exec.batch-size' makes each row
// its own batch, so every intermediate change shows.
func TestChangelog(t *testing.T) {
	datadriven.Walk(t, "testdata/changelog", func(t *testing.T, path string) {
		s, err := session.Open("")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// INSERTs finish before the next statement, so that an in-memory
		// table's batches are in the order of its INSERTs.
		s.SetDefault(session.OptDMLSync, "true")
		ctx := context.Background()
		var buf bytes.Buffer
		restore := print.SetOutput(&buf, &buf)
		defer restore()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if _, err := s.Execute(ctx, d.Input); err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				return "ok\n"
			case "run":
				buf.Reset()
				if _, err := s.Execute(ctx, "SET 'table.dml-sync' = 'true'; "+d.Input); err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				return buf.String()
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}
