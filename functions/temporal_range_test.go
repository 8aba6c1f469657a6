package functions

import "testing"

// The range constants are the calendar's 0001-01-01 and 9999-12-31.
func TestTemporalRangeBounds(t *testing.T) {
	if got := daysFromCivil(1, 1, 1); got != minDays {
		t.Errorf("0001-01-01 is day %d, minDays is %d", got, minDays)
	}
	if got := daysFromCivil(9999, 12, 31); got != maxDays {
		t.Errorf("9999-12-31 is day %d, maxDays is %d", got, maxDays)
	}
	for _, c := range []struct {
		us int64
		ok bool
	}{
		{minMicros, true}, {minMicros - 1, false}, {maxMicros, true}, {maxMicros + 1, false},
		{0, true}, {-1 << 63, false}, {1<<63 - 1, false},
	} {
		if inRangeMicros(c.us) != c.ok {
			t.Errorf("inRangeMicros(%d) = %v", c.us, !c.ok)
		}
	}
	for _, c := range []struct {
		d  int64
		ok bool
	}{{minDays, true}, {minDays - 1, false}, {maxDays, true}, {maxDays + 1, false}} {
		if inRangeDays(c.d) != c.ok {
			t.Errorf("inRangeDays(%d) = %v", c.d, !c.ok)
		}
	}
}
