package session

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/types"
)

func TestSLTKindsAndValues(t *testing.T) {
	schema := types.Schema{
		{Name: "i", Type: types.IntType}, {Name: "b", Type: types.BooleanType},
		{Name: "d", Type: types.DoubleType}, {Name: "dec", Type: types.DecimalOf(5, 1)},
		{Name: "s", Type: types.StringType}, {Name: "day", Type: types.DateType},
	}
	var kinds []byte
	for _, c := range schema {
		kinds = append(kinds, SLTKind(c.Type))
	}
	if string(kinds) != "IIRRTT" {
		t.Errorf("kinds %q, want IIRRTT", kinds)
	}
	row := []types.Value{int64(-3), true, 1.5, decimal128.FromI64(25), "", int32(1)}
	var got []slt.Value
	for i, v := range row {
		got = append(got, SLTValue(schema[i].Type, v))
	}
	want := []slt.Value{slt.Text("-3"), slt.Text("true"), slt.Text("1.5"), slt.Text("2.5"), slt.Text(""), slt.Text("1970-01-02")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
	if got := SLTValue(types.TimestampOf(3), int64(1_000_000)); got != slt.Text("1970-01-01 00:00:01") {
		t.Errorf("a whole-second TIMESTAMP(3) prints %v", got)
	}
	if got := SLTValue(types.TimestampOf(3), int64(1_500_000)); got != slt.Text("1970-01-01 00:00:01.500") {
		t.Errorf("a TIMESTAMP(3) with milliseconds prints %v", got)
	}
	if SLTValue(types.IntType, nil) != slt.Null {
		t.Error("NULL is not slt.Null")
	}
	// As the runner prints them: booleans are 1 and 0 in an 'I' column.
	if s := slt.FormatValue(got[1], 'I'); s != "1" {
		t.Errorf("true in an I column prints %q", s)
	}
}
