package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/types"
)

// Mode is the consistency of checkpoints.
type Mode int

const (
	// ExactlyOnce aligns barriers: an operator with several inputs holds back
	// inputs that delivered barrier n until all have.
	ExactlyOnce Mode = iota
	// AtLeastOnce does not align: state may include records after the
	// barrier, which are replayed again after a restore.
	AtLeastOnce
)

func (m Mode) String() string {
	if m == AtLeastOnce {
		return "AT_LEAST_ONCE"
	}
	return "EXACTLY_ONCE"
}

// Options are Flink's checkpointing options. The zero value disables
// checkpointing; EnsureDefaults fills in Flink's defaults for the rest.
type Options struct {
	// Interval between checkpoint triggers ('execution.checkpointing.interval');
	// zero disables checkpointing.
	Interval time.Duration
	// Mode ('execution.checkpointing.mode'), default EXACTLY_ONCE.
	Mode Mode
	// Timeout after which a pending checkpoint is discarded
	// ('execution.checkpointing.timeout', default 10 min).
	Timeout time.Duration
	// MaxConcurrent pending checkpoints ('execution.checkpointing.max-concurrent-checkpoints', default 1).
	MaxConcurrent int
	// MinPause between the end of one checkpoint and the start of the next
	// ('execution.checkpointing.min-pause', default 0).
	MinPause time.Duration
	// TolerableFailures is how many checkpoint failures in a row the job
	// survives ('execution.checkpointing.tolerable-failed-checkpoints', default 0).
	TolerableFailures int
	// RetainOnCancel keeps checkpoints when the job is stopped
	// ('execution.checkpointing.externalized-checkpoint-retention' =
	// RETAIN_ON_CANCELLATION, the default here so that a rerun resumes;
	// DELETE_ON_CANCELLATION deletes them).
	RetainOnCancel bool
	// NumRetained completed checkpoints kept ('state.checkpoints.num-retained', default 1).
	NumRetained int
}

// Option keys.
const (
	KeyInterval      = "execution.checkpointing.interval"
	KeyMode          = "execution.checkpointing.mode"
	KeyTimeout       = "execution.checkpointing.timeout"
	KeyMaxConcurrent = "execution.checkpointing.max-concurrent-checkpoints"
	KeyMinPause      = "execution.checkpointing.min-pause"
	KeyTolerable     = "execution.checkpointing.tolerable-failed-checkpoints"
	KeyRetention     = "execution.checkpointing.externalized-checkpoint-retention"
	KeyNumRetained   = "state.checkpoints.num-retained"
)

// ParseOptions reads the checkpointing options from a session's SET map.
// Unset keys keep their defaults; a bad value is an error naming the key.
func ParseOptions(m map[string]string) (Options, error) {
	o := Options{Timeout: 10 * time.Minute, MaxConcurrent: 1, NumRetained: 1, RetainOnCancel: true}
	var err error
	dur := func(key string, dst *time.Duration) {
		if v, ok := m[key]; ok && err == nil {
			if *dst, err = ParseDuration(v); err != nil {
				err = fmt.Errorf("option '%s': %v", key, err)
			}
		}
	}
	num := func(key string, dst *int, minimum int) {
		if v, ok := m[key]; ok && err == nil {
			n, e := strconv.Atoi(strings.TrimSpace(v))
			if e != nil || n < minimum {
				err = fmt.Errorf("option '%s' must be an integer >= %d, got '%s'", key, minimum, v)
				return
			}
			*dst = n
		}
	}
	dur(KeyInterval, &o.Interval)
	dur(KeyTimeout, &o.Timeout)
	dur(KeyMinPause, &o.MinPause)
	num(KeyMaxConcurrent, &o.MaxConcurrent, 1)
	num(KeyTolerable, &o.TolerableFailures, 0)
	num(KeyNumRetained, &o.NumRetained, 1)
	if err != nil {
		return o, err
	}
	if v, ok := m[KeyMode]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "EXACTLY_ONCE":
			o.Mode = ExactlyOnce
		case "AT_LEAST_ONCE":
			o.Mode = AtLeastOnce
		default:
			return o, fmt.Errorf("option '%s' must be EXACTLY_ONCE or AT_LEAST_ONCE, got '%s'", KeyMode, v)
		}
	}
	if v, ok := m[KeyRetention]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "RETAIN_ON_CANCELLATION":
			o.RetainOnCancel = true
		case "DELETE_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS":
			o.RetainOnCancel = false
		default:
			return o, fmt.Errorf("option '%s' must be RETAIN_ON_CANCELLATION or DELETE_ON_CANCELLATION, got '%s'", KeyRetention, v)
		}
	}
	if o.Interval < 0 || o.Timeout <= 0 {
		return o, fmt.Errorf("checkpoint interval and timeout must be positive")
	}
	return o, nil
}

// ParseDuration parses Flink-style durations: "5s", "200 ms", "1 min",
// "10" (milliseconds). See types.ParseDuration.
func ParseDuration(s string) (time.Duration, error) { return types.ParseDuration(s) }
