package functions

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// The supported range of DATE and TIMESTAMP values is Flink's (and the SQL
// standard's): 0001-01-01 to 9999-12-31 23:59:59.999999. Arithmetic that
// would leave it fails (ErrTemporalRange), and strings outside it do not
// parse, so a value out of range is never computed or printed.
const (
	minYear = 1
	maxYear = 9999
	// minDays and maxDays are 0001-01-01 and 9999-12-31 in days since the epoch.
	minDays = -719162
	maxDays = 2932896
	// minMicros and maxMicros bound a TIMESTAMP in micros since the epoch.
	minMicros = minDays * usPerDay
	maxMicros = (maxDays+1)*usPerDay - 1
	// spanMillis and spanMonths are the widest interval that can keep a
	// value in range; a larger one is out of range whatever it is added to
	// (and is refused before it is multiplied, so no int64 wraps).
	spanMillis = (maxMicros - minMicros) / 1000
	spanMonths = (maxYear - minYear + 1) * 12
)

// ErrTemporalRange is the error of a DATE or TIMESTAMP computation whose
// result is outside 0001-01-01 .. 9999-12-31.
var ErrTemporalRange = fmt.Errorf("out of the supported range")

// inRangeMicros reports whether us is a TIMESTAMP in the supported range.
func inRangeMicros(us int64) bool { return uint64(us-minMicros) <= uint64(maxMicros-minMicros) }

// inRangeDays reports whether d is a DATE in the supported range.
func inRangeDays(d int64) bool { return uint64(d-minDays) <= uint64(maxDays-minDays) }

// rangeErr is the error of t op iv leaving the supported range. t is a
// TIMESTAMP (micros) or DATE (days) value of type tt, iv an interval of
// type it (millis or months).
func rangeErr(tt types.T, t int64, op string, it types.T, iv int64) error {
	var tv types.Value = t
	if tt.Kind == types.Date {
		tv = int32(t)
	}
	mag := uint64(iv)
	if iv < 0 {
		mag = -mag // also right for the smallest int64
		if op == "-" {
			op = "+"
		} else {
			op = "-"
		}
	}
	return fmt.Errorf("%s %w: %s %s INTERVAL '%s' %s leaves 0001-01-01 .. 9999-12-31", tt.Nullable(), ErrTemporalRange,
		types.Format(tt, tv), op, intervalText(it, mag), intervalUnit(it))
}

// intervalText prints the magnitude of an interval as its literal's digits.
func intervalText(it types.T, iv uint64) string {
	if it.Kind == types.IntervalYearMonth {
		return fmt.Sprintf("%d-%d", iv/12, iv%12)
	}
	ms := iv % 1000
	s := iv / 1000
	d := s / 86400
	s %= 86400
	if ms == 0 {
		return fmt.Sprintf("%d %02d:%02d:%02d", d, s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d %02d:%02d:%02d.%03d", d, s/3600, s/60%60, s%60, ms)
}

func intervalUnit(it types.T) string {
	if it.Kind == types.IntervalYearMonth {
		return "YEAR TO MONTH"
	}
	return "DAY TO SECOND"
}

// yearOutOfRange reports whether s looks like a date whose year is outside
// 1..9999 (for the message of a string that does not parse).
func yearOutOfRange(s string) bool {
	t := trimSpace(s)
	i := 0
	if i < len(t) && t[i] == '-' {
		return true
	}
	y, j, ok := atoiN(t, i, 1, 12)
	return ok && j < len(t) && t[j] == '-' && (y < minYear || y > maxYear)
}
