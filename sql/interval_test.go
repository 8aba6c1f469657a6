package sql

import (
	"testing"
	"time"
)

func TestIntervalDuration(t *testing.T) {
	for _, c := range []struct {
		value, unit string
		want        time.Duration
		err         bool
	}{
		{"5", "SECOND", 5 * time.Second, false},
		{"1.5", "SECOND", 1500 * time.Millisecond, false},
		{"10", "MINUTE", 10 * time.Minute, false},
		{"2", "HOUR", 2 * time.Hour, false},
		{"1", "DAY", 24 * time.Hour, false},
		{"-15", "MINUTE", -15 * time.Minute, false},
		{"1:30", "MINUTE TO SECOND", 90 * time.Second, false},
		{"1:30", "HOUR TO MINUTE", 90 * time.Minute, false},
		{"1:02:03.5", "HOUR TO SECOND", time.Hour + 2*time.Minute + 3500*time.Millisecond, false},
		{"1 02", "DAY TO HOUR", 26 * time.Hour, false},
		{"1 02:00:01", "DAY TO SECOND", 26*time.Hour + time.Second, false},
		{"1", "MONTH", 0, true},
		{"1-2", "YEAR TO MONTH", 0, true},
		{"x", "SECOND", 0, true},
		{"1:30", "SECOND", 0, true},
		{"1:30", "MINUTE TO HOUR", 0, true},
		{"1.5:30", "MINUTE TO SECOND", 0, true},
	} {
		got, err := Interval{Value: c.value, Unit: c.unit}.Duration()
		if (err != nil) != c.err || got != c.want {
			t.Errorf("INTERVAL '%s' %s = %v, %v; want %v, error %v", c.value, c.unit, got, err, c.want, c.err)
		}
	}
}

func TestOffsetMap(t *testing.T) {
	sc := newScript("SELECT CAST(a AS INT) /* c */ FROM t")
	// INT (at 17..20) -> SIGNED, and a prefix.
	text, m := sc.rewrite(0, len(sc.text), "XX", []edit{{17, 20, "SIGNED"}})
	if want := "XXSELECT CAST(a AS SIGNED)         FROM t"; text != want {
		t.Fatalf("rewrite = %q, want %q", text, want)
	}
	for _, c := range []struct{ r, want int }{
		{0, 0}, {1, 0}, {2, 0}, {9, 7}, {19, 17}, {21, 19}, {24, 19}, {25, 20}, {26, 21}, {len(text), len(sc.text)},
	} {
		if got := m.script(c.r); got != c.want {
			t.Errorf("script(%d) = %d, want %d", c.r, got, c.want)
		}
	}
	if got := m.scriptEnd(22); got != 20 {
		t.Errorf("scriptEnd inside an edit = %d, want 20", got)
	}
}

func TestCloseWord(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"FORM", "FROM", true}, {"FRM", "FROM", true}, {"FROMM", "FROM", true},
		{"WHRE", "WHERE", true}, {"SELET", "SELECT", true}, {"FROM", "FROM", false},
		{"GROPU", "GROUP", true}, {"ORDRE", "ORDER", true}, {"ABC", "FROM", false},
	} {
		if got := closeWord(c.a, c.b); got != c.want {
			t.Errorf("closeWord(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
