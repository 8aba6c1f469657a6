package textparse

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestValues(t *testing.T) {
	for _, c := range []struct {
		t    types.T
		in   string
		want string // as types.Format prints it, or "error"
	}{
		{types.BigIntType, "-42", "-42"},
		{types.IntType, "2147483648", "error"},
		{types.TinyIntType, "x", "error"},
		{types.BooleanType, "TRUE", "TRUE"},
		{types.DoubleType, "1.5", "1.5"},
		{types.DoubleType, "-Infinity", "-Infinity"},
		{types.DecimalOf(5, 2), "123.456", "123.46"},
		{types.DecimalOf(5, 2), "-0.005", "-0.01"},
		{types.DecimalOf(5, 2), "1234.5", "error"},
		{types.DecimalOf(5, 2), "999.995", "error"},
		{types.DecimalOf(5, 2), ".5", "0.50"},
		{types.DecimalOf(5, 2), "1e2", "100.00"},
		{types.DecimalOf(30, 2), "123456789012345678901234.5", "123456789012345678901234.50"},
		{types.DateType, "2024-02-29", "2024-02-29"},
		{types.DateType, "2023-02-29", "error"},
		{types.DateType, "1969-12-31", "1969-12-31"},
		{types.DateType, "2024-1-5", "2024-01-05"},
		{types.TimeType, "12:34:56", "12:34:56"},
		{types.TimestampOf(3), "2024-01-02 03:04:05.123456", "2024-01-02 03:04:05.123"},
		{types.TimestampOf(6), "2024-01-02T03:04:05.1Z", "2024-01-02 03:04:05.100000"},
		{types.TimestampOf(0), "1969-12-31 23:59:59.5", "1969-12-31 23:59:59"},
		{types.TimestampOf(3), "2024-01-02", "2024-01-02 00:00:00.000"},
		{types.TimestampOf(3), "2024-01-02 25:00:00", "error"},
		{types.TimestampOf(3), "2023-10-09T17:13:20+00:00", "2023-10-09 17:13:20.000"},
		{types.TimestampOf(3), "2023-10-09T17:13:20.200+02:00", "2023-10-09 15:13:20.200"},
		{types.TimestampOf(3), "2023-10-09T00:13:20-0130", "2023-10-09 01:43:20.000"},
		{types.TimestampOf(3), "2023-10-09T17:13:20+05", "2023-10-09 12:13:20.000"},
		{types.TimestampOf(3), "2023-10-09T17:13:20+5:00", "error"},
		{types.TimestampOf(3), "2023-10-09T17:13:20+", "error"},
	} {
		v, err := Value(c.t, []byte(c.in))
		got := "error"
		if err == nil {
			got = types.Format(c.t, v)
		}
		if got != c.want {
			t.Errorf("%s %q: got %s (%v), want %s", c.t, c.in, got, err, c.want)
		}
	}
}
