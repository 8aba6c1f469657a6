package main

import (
	"flag"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/types"
)

func TestSLTTypesAndValues(t *testing.T) {
	schema := types.Schema{
		{Name: "i", Type: types.IntType}, {Name: "b", Type: types.BooleanType},
		{Name: "d", Type: types.DoubleType}, {Name: "dec", Type: types.DecimalOf(5, 1)},
		{Name: "s", Type: types.StringType}, {Name: "day", Type: types.DateType},
	}
	if got := sltTypes(schema); got != "IIRRTT" {
		t.Errorf("types %q, want IIRRTT", got)
	}
	rows := sltRows(schema, [][]types.Value{
		{int64(-3), true, 1.5, decimal128.FromI64(25), "", int32(1)},
		{nil, false, nil, nil, nil, nil},
	})
	want := [][]slt.Value{
		{slt.Text("-3"), slt.Text("TRUE"), slt.Text("1.5"), slt.Text("2.5"), slt.Text(""), slt.Text("1970-01-02")},
		{slt.Null, slt.Text("FALSE"), slt.Null, slt.Null, slt.Null, slt.Null},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	// As the runner prints them: booleans are 1 and 0 in an 'I' column.
	if got := slt.FormatValue(rows[0][1], 'I'); got != "1" {
		t.Errorf("TRUE in an I column prints %q", got)
	}
}

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
