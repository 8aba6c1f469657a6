package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestParseYAML runs testdata/yaml: each "parse" input is a configuration
// file (config.yaml); the output is its entries, "line: key = value" in
// file order, or the error.
func TestParseYAML(t *testing.T) {
	datadriven.RunTest(t, "testdata/yaml", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "parse" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		entries, err := ParseYAML("config.yaml", []byte(d.Input))
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("%v is not a *FileError", err)
			}
			return "error: " + err.Error() + "\n"
		}
		var b strings.Builder
		for _, e := range entries {
			fmt.Fprintf(&b, "%d: %s = %s\n", e.Line, e.Key, e.Value)
		}
		if b.Len() == 0 {
			return "(no options)\n"
		}
		return b.String()
	})
}
