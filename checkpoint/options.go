package checkpoint

import (
	"time"

	"github.com/streamsql/streamsql/internal/config"
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
// checkpointing; ParseOptions fills in Flink's defaults for the options
// not set (OptionDefs lists them).
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

// The checkpointing options' definitions (Flink's keys and defaults).
var (
	OptInterval = config.Duration(KeyInterval, 0, false,
		"time between checkpoint triggers; 0 turns checkpointing off").ShowDefault("0 (off)")
	OptMode = config.Enum(KeyMode, "EXACTLY_ONCE", []string{"EXACTLY_ONCE", "AT_LEAST_ONCE"}, nil,
		"EXACTLY_ONCE aligns barriers; AT_LEAST_ONCE does not (a restore may replay records the state already counts)")
	OptTimeout = config.Duration(KeyTimeout, 10*time.Minute, true,
		"a checkpoint not complete by then fails (and counts against the tolerable failures)")
	OptMaxConcurrent = config.Int(KeyMaxConcurrent, 1, 1, config.MaxInt, "checkpoints pending at once")
	OptMinPause      = config.Duration(KeyMinPause, 0, false, "least time between the end of one checkpoint and the start of the next")
	OptTolerable     = config.Int(KeyTolerable, 0, 0, config.MaxInt,
		"checkpoint failures in a row the job survives; one more fails the job (ErrTooManyFailures), which restarts by its strategy")
	OptRetention = config.Enum(KeyRetention, "RETAIN_ON_CANCELLATION", []string{"RETAIN_ON_CANCELLATION", "DELETE_ON_CANCELLATION"},
		map[string]string{"NO_EXTERNALIZED_CHECKPOINTS": "DELETE_ON_CANCELLATION"},
		"whether a stopped job's checkpoints are kept (so that running the statement again resumes) or deleted")
	OptNumRetained = config.Int(KeyNumRetained, 1, 1, config.MaxInt, "completed checkpoints kept; older ones are deleted")
)

// OptionDefs lists the checkpointing options ParseOptions reads.
func OptionDefs() []config.Def {
	return []config.Def{OptInterval, OptMode, OptTimeout, OptMaxConcurrent, OptMinPause, OptTolerable, OptRetention, OptNumRetained}
}

// ParseOptions reads the checkpointing options from a session's SET map
// (other keys are not looked at). Unset keys keep their defaults; a bad
// value is a *config.Error naming the key, the value and what is allowed.
func ParseOptions(m map[string]string) (Options, error) {
	var o Options
	var mode, retention string
	err := config.Collect(
		config.Into(&o.Interval, OptInterval, m),
		config.Into(&mode, OptMode, m),
		config.Into(&o.Timeout, OptTimeout, m),
		config.Into(&o.MaxConcurrent, OptMaxConcurrent, m),
		config.Into(&o.MinPause, OptMinPause, m),
		config.Into(&o.TolerableFailures, OptTolerable, m),
		config.Into(&retention, OptRetention, m),
		config.Into(&o.NumRetained, OptNumRetained, m),
	)
	if err != nil {
		return Options{}, err
	}
	if mode == "AT_LEAST_ONCE" {
		o.Mode = AtLeastOnce
	}
	o.RetainOnCancel = retention == "RETAIN_ON_CANCELLATION"
	return o, nil
}

// ParseDuration parses Flink-style durations: "5s", "200 ms", "1 min",
// "10" (milliseconds). See types.ParseDuration.
func ParseDuration(s string) (time.Duration, error) { return types.ParseDuration(s) }
