package testenv

import (
	"slices"
	"strings"
)

// Problems lists what a check found wrong for a test's failure message:
// sorted, one per line indented under the message, at most max of them
// and then "...". problems is sorted in place.
func Problems(problems []string, max int) string {
	slices.Sort(problems)
	if len(problems) > max {
		problems = append(problems[:max:max], "...")
	}
	return strings.Join(problems, "\n  ")
}
