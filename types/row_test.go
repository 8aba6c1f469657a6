package types

import "testing"

// TestRowRoundTrip: a ROW type prints as Flink does and parses back (the
// catalog and Arrow field metadata keep types as text), nested rows and
// NOT NULL fields included; a row value prints as CAST(row AS STRING).
func TestRowRoundTrip(t *testing.T) {
	inner := RowOf(Column{Name: "x", Type: IntType}, Column{Name: "y", Type: T{Kind: String, NotNull: true}})
	row := RowOf(Column{Name: "a", Type: BigIntType}, Column{Name: "dateTime", Type: TimestampOf(3)}, Column{Name: "c", Type: inner})
	const want = "ROW<`a` BIGINT, `dateTime` TIMESTAMP(3), `c` ROW<`x` INT, `y` STRING NOT NULL>>"
	if got := row.String(); got != want {
		t.Fatalf("String: %s, want %s", got, want)
	}
	for _, s := range []string{want, want + " NOT NULL", "ROW(a BIGINT, `dateTime` TIMESTAMP(3), c ROW<x INT, y STRING NOT NULL>)"} {
		back, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%s): %v", s, err)
		}
		if !back.Equal(row) || back.Fields[1].Name != "dateTime" {
			t.Fatalf("Parse(%s) = %s, want %s", s, back, row)
		}
	}
	if _, err := Parse("ROW<a BIGINT"); err == nil {
		t.Fatal("Parse of an unclosed ROW: no error")
	}
	if Equal := row.Equal(RowOf(Column{Name: "a", Type: BigIntType})); Equal {
		t.Fatal("rows of different fields are equal")
	}
	v := []Value{int64(5), nil, []Value{int64(7), "seven"}}
	if got := Format(row, v); got != "(5, NULL, (7, seven))" {
		t.Fatalf("Format: %s", got)
	}
	f := row.Field("r")
	if back, err := FromField(f); err != nil || !back.Equal(row) {
		t.Fatalf("FromField: %v %v", back, err)
	}
}
