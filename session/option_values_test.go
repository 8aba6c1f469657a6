package session

import (
	"context"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestOptionValues runs testdata/option_values: each input line is one
// statement, each output line its error (or ok).
func TestOptionValues(t *testing.T) {
	datadriven.RunTest(t, "testdata/option_values", func(t *testing.T, d *datadriven.TestData) string {
		s, err := Open("")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if _, err := s.Execute(context.Background(), line); err != nil {
				out.WriteString(err.Error() + "\n")
			} else {
				out.WriteString("ok\n")
			}
		}
		return out.String()
	})
}
