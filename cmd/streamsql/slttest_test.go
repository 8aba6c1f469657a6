package main

import (
	"flag"
	"reflect"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args    []string
		pos     []string
		verbose bool
	}{
		{[]string{"a.slt"}, []string{"a.slt"}, false},
		{[]string{"-v", "a.slt", "b.slt"}, []string{"a.slt", "b.slt"}, true},
		{[]string{"a.slt", "-v", "b.slt"}, []string{"a.slt", "b.slt"}, true},
		{[]string{"a.slt", "--", "-v"}, []string{"a.slt", "-v"}, false},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		v := fs.Bool("v", false, "")
		pos, err := parseInterleaved(fs, tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(pos, tt.pos) || *v != tt.verbose {
			t.Errorf("%q: got %q, -v %v; want %q, -v %v", tt.args, pos, *v, tt.pos, tt.verbose)
		}
	}
}
