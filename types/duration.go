package types

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a duration option as Flink writes them: a number and
// an optional unit (ms, s, min, h, d and their long forms: "500 ms",
// "5 s", "1 min", "2 hours"); a number without a unit is milliseconds. Go
// durations ("1m30s") are accepted too.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if n, err := strconv.ParseInt(t[:i], 10, 64); err == nil {
		if u, ok := durationUnits[strings.ToLower(strings.TrimSpace(t[i:]))]; ok {
			return time.Duration(n) * u, nil
		}
	}
	if d, err := time.ParseDuration(strings.ReplaceAll(t, " ", "")); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("bad duration '%s' (write e.g. '500 ms', '5 s', '1 min')", s)
}

var durationUnits = map[string]time.Duration{
	"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}
