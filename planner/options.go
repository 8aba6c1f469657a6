package planner

import (
	"strconv"
	"time"

	"github.com/streamsql/streamsql/internal/config"
)

// JobOptions are the options of a job the planner reads, typed. The
// session parses them once (ParseJobOptions) when it plans a statement;
// the planner never looks at option text. The zero value of a field is its
// default.
type JobOptions struct {
	// Parallelism of every operator ('parallelism.default').
	Parallelism int
	// MaxParallelism is the number of key groups ('pipeline.max-parallelism'):
	// the highest parallelism a savepoint of the job can be restored into.
	MaxParallelism int
	// SourceIdleTimeout applies to the sources whose table does not set
	// 'scan.watermark.idle-timeout' ('table.exec.source.idle-timeout'; 0: never idle).
	SourceIdleTimeout time.Duration
	// LateRecordsTable names the table late records of window aggregations
	// go to ('table.exec.late-records.table'; "": they are dropped and counted).
	LateRecordsTable string
	// StateTTL is how long a regular join keeps a row and a group
	// aggregation a group nobody wrote ('table.exec.state.ttl'; 0: for
	// ever); a STATE_TTL hint overrides it for the inputs it names.
	StateTTL time.Duration
	// MiniBatch makes group aggregations emit each changed group once per
	// mini-batch ('table.exec.mini-batch.enabled'); a mini-batch ends when
	// MiniBatchLatency has passed since its first row
	// ('table.exec.mini-batch.allow-latency'), when it holds MiniBatchSize
	// rows ('table.exec.mini-batch.size'), at a checkpoint barrier and at
	// the end of the input. Both are required (positive) when enabled.
	MiniBatch        bool
	MiniBatchLatency time.Duration
	MiniBatchSize    int
	// MaxChannels is the most channels a job may have
	// ('pipeline.max-channels'; Graph.Channels): Physical refuses a plan
	// with more.
	MaxChannels int
}

// MaxKeyGroups is the upper bound of 'pipeline.max-parallelism', as Flink's.
const MaxKeyGroups = 32768

// OptSourceIdleTimeout is the job option giving the idle timeout of the
// sources whose table does not set 'scan.watermark.idle-timeout'.
const OptSourceIdleTimeout = "table.exec.source.idle-timeout"

// The job options' definitions.
var (
	OptParallelism = config.Int("parallelism.default", 1, 1, MaxKeyGroups,
		"parallelism of every operator of the jobs planned next (at most 'pipeline.max-parallelism')")
	OptMaxParallelism = config.Int("pipeline.max-parallelism", 128, 1, MaxKeyGroups,
		"number of key groups: the highest parallelism the job's state can be rescaled to")
	OptIdleTimeoutDefault = config.Duration(OptSourceIdleTimeout, 0, false,
		"a source split that produced nothing for this long stops holding the watermark back, unless its table sets 'scan.watermark.idle-timeout'; 0: never")
	OptLateRecords = config.String(OptLateRecordsTable, "",
		"the table late records of window aggregations go to (they are dropped and counted without it)")
	OptMiniBatch = config.Bool("table.exec.mini-batch.enabled", false,
		"group aggregations (GROUP BY, DISTINCT) fold their input into their state as it comes but emit each changed group once per mini-batch, ended by 'table.exec.mini-batch.allow-latency', 'table.exec.mini-batch.size', a checkpoint barrier or the end of the input; both options are required when enabled")
	OptMiniBatchLatency = config.Duration("table.exec.mini-batch.allow-latency", 0, false,
		"with mini-batches, the longest a change waits in one (processing time); required (positive) when 'table.exec.mini-batch.enabled'")
	OptMiniBatchSize = config.Int("table.exec.mini-batch.size", 0, 0, 1<<30,
		"with mini-batches, the most input rows one holds; required (positive) when 'table.exec.mini-batch.enabled'").ShowDefault("none")
	OptMaxChannels = config.Int("pipeline.max-channels", 100000, 1, 1<<30,
		"the most channels a job may have, counted over each edge between two operators as the pairs of subtasks it connects: the product of both parallelisms for a hash, rebalance or broadcast edge, the sending parallelism for a forward or global one; each channel buffers what one subtask sends another, and every subtask but a source's reads at least one, so this bounds the job's subtasks and memory too. A statement whose job would have more is refused before anything is built")
	OptStateTTL = config.Duration("table.exec.state.ttl", 0, false,
		"a regular join drops a stored row, and a group aggregation (GROUP BY, DISTINCT) a group, written (inserted, updated, or a join row's match count changed) longer ago than this, in processing time; the STATE_TTL hint overrides it per input; window aggregates and window, interval and temporal joins keep none; 0: state is kept for ever")
)

// JobOptionDefs lists the options ParseJobOptions reads.
func JobOptionDefs() []config.Def {
	return []config.Def{OptParallelism, OptMaxParallelism, OptIdleTimeoutDefault, OptLateRecords, OptStateTTL,
		OptMiniBatch, OptMiniBatchLatency, OptMiniBatchSize, OptMaxChannels}
}

// ParseJobOptions reads the job options from a session's SET map (other
// keys are not looked at). A bad value is a *config.Error. That the
// parallelism is at most the max parallelism is checked when a job is laid
// out (Physical), so that SET can change them in either order.
func ParseJobOptions(m map[string]string) (JobOptions, error) {
	var o JobOptions
	err := config.Collect(
		config.Into(&o.Parallelism, OptParallelism, m),
		config.Into(&o.MaxParallelism, OptMaxParallelism, m),
		config.Into(&o.SourceIdleTimeout, OptIdleTimeoutDefault, m),
		config.Into(&o.LateRecordsTable, OptLateRecords, m),
		config.Into(&o.StateTTL, OptStateTTL, m),
		config.Into(&o.MiniBatch, OptMiniBatch, m),
		config.Into(&o.MiniBatchLatency, OptMiniBatchLatency, m),
		config.Into(&o.MiniBatchSize, OptMiniBatchSize, m),
		config.Into(&o.MaxChannels, OptMaxChannels, m),
	)
	if err != nil {
		return JobOptions{}, err
	}
	return o, nil
}

// withDefaults returns o with its zero fields set to their defaults.
func (o JobOptions) withDefaults() JobOptions {
	if o.Parallelism == 0 {
		o.Parallelism = OptParallelism.Default()
	}
	if o.MaxParallelism == 0 {
		o.MaxParallelism = OptMaxParallelism.Default()
	}
	if o.MaxChannels == 0 {
		o.MaxChannels = OptMaxChannels.Default()
	}
	return o
}

// check validates o (zero fields standing for their defaults).
func (o JobOptions) check() error {
	d := o.withDefaults()
	switch {
	case d.Parallelism < 0 || d.Parallelism > MaxKeyGroups:
		return &config.Error{Key: OptParallelism.Key(), Value: strconv.Itoa(d.Parallelism), Allowed: OptParallelism.Allowed()}
	case d.MaxParallelism < 0 || d.MaxParallelism > MaxKeyGroups:
		return &config.Error{Key: OptMaxParallelism.Key(), Value: strconv.Itoa(d.MaxParallelism), Allowed: OptMaxParallelism.Allowed()}
	case d.MaxChannels < 0:
		return &config.Error{Key: OptMaxChannels.Key(), Value: strconv.Itoa(d.MaxChannels), Allowed: OptMaxChannels.Allowed()}
	case d.SourceIdleTimeout < 0:
		return &config.Error{Key: OptSourceIdleTimeout, Value: d.SourceIdleTimeout.String(), Allowed: OptIdleTimeoutDefault.Allowed()}
	case d.Parallelism > d.MaxParallelism:
		return &config.Error{Key: OptParallelism.Key(), Value: strconv.Itoa(d.Parallelism),
			Allowed: "at most 'pipeline.max-parallelism' (" + strconv.Itoa(d.MaxParallelism) + ")"}
	case d.MiniBatch && d.MiniBatchLatency <= 0:
		return &config.Error{Key: OptMiniBatchLatency.Key(), Value: config.FormatDuration(d.MiniBatchLatency),
			Allowed: "a positive duration when 'table.exec.mini-batch.enabled' is true (as Flink)"}
	case d.MiniBatch && d.MiniBatchSize <= 0:
		return &config.Error{Key: OptMiniBatchSize.Key(), Value: strconv.Itoa(d.MiniBatchSize),
			Allowed: "a positive number of rows when 'table.exec.mini-batch.enabled' is true (as Flink)"}
	}
	return nil
}
