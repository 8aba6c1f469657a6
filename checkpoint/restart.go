package checkpoint

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/internal/config"
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

// The restart strategies' options (Flink's keys and defaults).
var (
	OptRestartType = config.Enum(KeyRestartType, "", []string{"none", "fixed-delay", "failure-rate", "exponential-delay"},
		map[string]string{"off": "none", "disable": "none", "fixeddelay": "fixed-delay", "failurerate": "failure-rate", "exponentialdelay": "exponential-delay"},
		"what a failed job does: stay failed, or restart after a delay").ShowDefault("exponential-delay with checkpointing, none without")
	OptFixedAttempts = config.Int("restart-strategy.fixed-delay.attempts", 1, 0, config.MaxInt, "restarts before the job stays failed")
	OptFixedDelay    = config.Duration("restart-strategy.fixed-delay.delay", time.Second, false, "delay before each restart")
	OptRateMax       = config.Int("restart-strategy.failure-rate.max-failures-per-interval", 1, 0, config.MaxInt,
		"failures within the interval before the job stays failed")
	OptRateInterval = config.Duration("restart-strategy.failure-rate.failure-rate-interval", time.Minute, false, "the window failures are counted in")
	OptRateDelay    = config.Duration("restart-strategy.failure-rate.delay", time.Second, false, "delay before each restart")
	OptExpInitial   = config.Duration("restart-strategy.exponential-delay.initial-backoff", time.Second, false, "delay before the first restart")
	OptExpMax       = config.Duration("restart-strategy.exponential-delay.max-backoff", time.Minute, false, "the delay grows up to this")
	OptExpMul       = config.Float("restart-strategy.exponential-delay.backoff-multiplier", 2, 1, "each delay is the previous one times this")
	OptExpReset     = config.Duration("restart-strategy.exponential-delay.reset-backoff-threshold", time.Hour, false,
		"a job that ran this long since its last restart without failing starts again from the initial backoff")
	OptExpAttempts = config.Int("restart-strategy.exponential-delay.attempts-before-reset-backoff", 1<<31-1, 0, config.MaxInt,
		"restarts before the job stays failed (reset with the backoff)").ShowDefault("unlimited")
)

// RestartDefs lists every option ParseRestart reads.
func RestartDefs() []config.Def {
	return []config.Def{OptRestartType, OptFixedAttempts, OptFixedDelay, OptRateMax, OptRateInterval, OptRateDelay,
		OptExpInitial, OptExpMax, OptExpMul, OptExpReset, OptExpAttempts}
}

// ParseRestart builds the restart strategy from a session's options.
// Without 'restart-strategy.type' it is exponential-delay when checkpointing
// is on and none otherwise, as in Flink. A bad value is a *config.Error.
func ParseRestart(m map[string]string, checkpointing bool) (RestartStrategy, error) {
	typ, err := OptRestartType.Get(m)
	if err != nil {
		return nil, err
	}
	if typ == "" {
		typ = "none"
		if checkpointing {
			typ = "exponential-delay"
		}
	}
	switch typ {
	case "fixed-delay":
		s := &fixedDelay{}
		err = config.Collect(config.Into(&s.attempts, OptFixedAttempts, m), config.Into(&s.delay, OptFixedDelay, m))
		return s, err
	case "failure-rate":
		s := &failureRate{}
		err = config.Collect(config.Into(&s.max, OptRateMax, m), config.Into(&s.interval, OptRateInterval, m),
			config.Into(&s.delay, OptRateDelay, m))
		return s, err
	case "exponential-delay":
		s := &exponentialDelay{}
		err = config.Collect(config.Into(&s.initial, OptExpInitial, m), config.Into(&s.max, OptExpMax, m),
			config.Into(&s.multiplier, OptExpMul, m), config.Into(&s.reset, OptExpReset, m),
			config.Into(&s.attempts, OptExpAttempts, m))
		return s, err
	}
	return noRestart{}, nil
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

// exponentialDelay doubles (times the multiplier) its delay with each
// failure, and starts again from the initial one when the job ran the reset
// threshold without failing: measured from the restart (the last failure
// plus its delay), not from the failure, as Flink does since 1.19, so that
// a long backoff does not count as time the job ran.
type exponentialDelay struct {
	initial, max, reset time.Duration
	multiplier          float64
	attempts, used      int
	current             time.Duration
	// restarted is when the job ran again after its last failure (zero
	// before the first).
	restarted time.Time
}

func (e *exponentialDelay) Next(now time.Time) (time.Duration, bool) {
	if !e.restarted.IsZero() && now.Sub(e.restarted) >= e.reset {
		e.current, e.used = 0, 0
	}
	if e.used >= e.attempts {
		return 0, false
	}
	e.used++
	if e.current == 0 {
		e.current = e.initial
	} else {
		e.current = min(time.Duration(float64(e.current)*e.multiplier), e.max)
	}
	e.restarted = now.Add(e.current)
	return e.current, true
}

func (e *exponentialDelay) String() string {
	return fmt.Sprintf("exponential-delay (%v .. %v)", e.initial, e.max)
}
