package filesystem

import (
	"slices"
	"testing"
)

func TestNaturalOrder(t *testing.T) {
	in := []string{"part-0-10.csv", "b", "part-0-9.csv", "a/x10", "a/x9", "a-b", "part-0-010.csv", "part-1-0.csv", "x2y10", "x2y9", "x02y1"}
	want := []string{"a/x9", "a/x10", "a-b", "b", "part-0-9.csv", "part-0-010.csv", "part-0-10.csv", "part-1-0.csv", "x02y1", "x2y9", "x2y10"}
	got := slices.Clone(in)
	slices.SortFunc(got, comparePaths)
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
