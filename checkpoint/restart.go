package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RestartStrategy decides whether a failed job restarts, and when. Its
// methods are called from one goroutine (the job's supervisor).
type RestartStrategy interface {
	// Next records a failure at now and returns the delay before the
	// restart, or ok=false when the job must stay failed.
	Next(now time.Time) (delay time.Duration, ok bool)
	// String describes the strategy for SHOW JOBS and logs.
	String() string
}

// Restart strategy option keys (Flink's).
const (
	KeyRestartType = "restart-strategy.type"
)

// RestartOption is one option ParseRestart reads, with its default.
type RestartOption struct{ Key, Default string }

// RestartOptions lists every option ParseRestart reads, with Flink's
// defaults (those of ParseRestart).
func RestartOptions() []RestartOption {
	return []RestartOption{
		{KeyRestartType, "exponential-delay with checkpointing, none without"},
		{"restart-strategy.fixed-delay.attempts", "1"},
		{"restart-strategy.fixed-delay.delay", "1 s"},
		{"restart-strategy.failure-rate.max-failures-per-interval", "1"},
		{"restart-strategy.failure-rate.failure-rate-interval", "1 min"},
		{"restart-strategy.failure-rate.delay", "1 s"},
		{"restart-strategy.exponential-delay.initial-backoff", "1 s"},
		{"restart-strategy.exponential-delay.max-backoff", "1 min"},
		{"restart-strategy.exponential-delay.backoff-multiplier", "2"},
		{"restart-strategy.exponential-delay.reset-backoff-threshold", "1 h"},
		{"restart-strategy.exponential-delay.attempts-before-reset-backoff", "unlimited"},
	}
}

// CheckRestartOption validates the value of one restart-strategy option as
// ParseRestart reads it (an option of a strategy is checked as if that
// strategy were chosen).
func CheckRestartOption(key, value string) error {
	m := map[string]string{key: value}
	if key != KeyRestartType {
		family, _, _ := strings.Cut(strings.TrimPrefix(key, "restart-strategy."), ".")
		m[KeyRestartType] = family
	}
	_, err := ParseRestart(m, true)
	return err
}

// ParseRestart builds the restart strategy from a session's options.
// Without 'restart-strategy.type' it is exponential-delay when checkpointing
// is on and none otherwise, as in Flink.
func ParseRestart(m map[string]string, checkpointing bool) (RestartStrategy, error) {
	typ := strings.ToLower(strings.TrimSpace(m[KeyRestartType]))
	if typ == "" {
		typ = "none"
		if checkpointing {
			typ = "exponential-delay"
		}
	}
	var err error
	dur := func(key string, def time.Duration) time.Duration {
		v, ok := m[key]
		if !ok || err != nil {
			return def
		}
		d, e := ParseDuration(v)
		if e != nil {
			err = fmt.Errorf("option '%s': %v", key, e)
		}
		return d
	}
	num := func(key string, def int) int {
		v, ok := m[key]
		if !ok || err != nil {
			return def
		}
		n, e := strconv.Atoi(strings.TrimSpace(v))
		if e != nil || n < 0 {
			err = fmt.Errorf("option '%s' must be a non-negative integer, got '%s'", key, v)
		}
		return n
	}
	var s RestartStrategy
	switch typ {
	case "none", "off", "disable":
		s = noRestart{}
	case "fixed-delay", "fixeddelay":
		s = &fixedDelay{attempts: num("restart-strategy.fixed-delay.attempts", 1), delay: dur("restart-strategy.fixed-delay.delay", time.Second)}
	case "failure-rate", "failurerate":
		s = &failureRate{max: num("restart-strategy.failure-rate.max-failures-per-interval", 1),
			interval: dur("restart-strategy.failure-rate.failure-rate-interval", time.Minute),
			delay:    dur("restart-strategy.failure-rate.delay", time.Second)}
	case "exponential-delay", "exponentialdelay":
		e := &exponentialDelay{initial: dur("restart-strategy.exponential-delay.initial-backoff", time.Second),
			max:      dur("restart-strategy.exponential-delay.max-backoff", time.Minute),
			reset:    dur("restart-strategy.exponential-delay.reset-backoff-threshold", time.Hour),
			attempts: num("restart-strategy.exponential-delay.attempts-before-reset-backoff", 1<<31-1)}
		e.multiplier = 2
		if v, ok := m["restart-strategy.exponential-delay.backoff-multiplier"]; ok {
			f, e2 := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if e2 != nil || f < 1 {
				err = fmt.Errorf("option 'restart-strategy.exponential-delay.backoff-multiplier' must be a number >= 1, got '%s'", v)
			}
			e.multiplier = f
		}
		s = e
	default:
		return nil, fmt.Errorf("option '%s' must be none, fixed-delay, failure-rate or exponential-delay, got '%s'", KeyRestartType, typ)
	}
	return s, err
}

type noRestart struct{}

func (noRestart) Next(time.Time) (time.Duration, bool) { return 0, false }
func (noRestart) String() string                       { return "none" }

type fixedDelay struct {
	attempts, used int
	delay          time.Duration
}

func (f *fixedDelay) Next(time.Time) (time.Duration, bool) {
	if f.used >= f.attempts {
		return 0, false
	}
	f.used++
	return f.delay, true
}

func (f *fixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (%d attempts, %v)", f.attempts, f.delay)
}

type failureRate struct {
	max      int
	interval time.Duration
	delay    time.Duration
	failures []time.Time
}

func (f *failureRate) Next(now time.Time) (time.Duration, bool) {
	kept := f.failures[:0]
	for _, t := range f.failures {
		if now.Sub(t) < f.interval {
			kept = append(kept, t)
		}
	}
	f.failures = append(kept, now)
	if len(f.failures) > f.max {
		return 0, false
	}
	return f.delay, true
}

func (f *failureRate) String() string {
	return fmt.Sprintf("failure-rate (%d per %v, %v)", f.max, f.interval, f.delay)
}

type exponentialDelay struct {
	initial, max, reset time.Duration
	multiplier          float64
	attempts, used      int
	current             time.Duration
	last                time.Time
}

func (e *exponentialDelay) Next(now time.Time) (time.Duration, bool) {
	if !e.last.IsZero() && now.Sub(e.last) > e.reset {
		e.current, e.used = 0, 0
	}
	e.last = now
	if e.used >= e.attempts {
		return 0, false
	}
	e.used++
	if e.current == 0 {
		e.current = e.initial
	} else {
		e.current = min(time.Duration(float64(e.current)*e.multiplier), e.max)
	}
	return e.current, true
}

func (e *exponentialDelay) String() string {
	return fmt.Sprintf("exponential-delay (%v .. %v)", e.initial, e.max)
}
