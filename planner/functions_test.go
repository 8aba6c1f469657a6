package planner

import (
	"slices"
	"testing"
)

// TestFunctionNamesLeaveOutRefused: SHOW FUNCTIONS lists what a query can
// call, not the functions that are known only to be refused.
func TestFunctionNamesLeaveOutRefused(t *testing.T) {
	names := FunctionNames()
	for _, n := range []string{"TRUNCATE", "PARSE_URL", "TYPEOF", "TRY_CAST"} {
		if !slices.Contains(names, n) {
			t.Errorf("FunctionNames lacks %s", n)
		}
	}
	for _, n := range []string{"STR_TO_MAP", "REGEXP_EXTRACT_ALL", "NEG"} {
		if slices.Contains(names, n) {
			t.Errorf("FunctionNames lists %s, which a query cannot call", n)
		}
	}
}
