package checkpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/internal/objstore"
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
	// Dir is where a job's checkpoints are kept, in a folder of the job's
	// own ('execution.checkpointing.dir'; the session takes Flink 1's name
	// 'state.checkpoints.dir' for it): s3://bucket/prefix, file:///path or
	// a path; "" is the job's folder in the data directory.
	Dir string
	// S3 is how to reach the object store of an s3:// location ('s3.*').
	S3 objstore.S3Options
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
	KeyDir           = "execution.checkpointing.dir"
	KeyS3Endpoint    = "s3.endpoint"
	KeyS3PathStyle   = "s3.path.style.access"
	KeyS3AccessKey   = "s3.access-key"
	KeyS3SecretKey   = "s3.secret-key"
)

// LocationAllowed is what a checkpoint or savepoint location may be, as
// option definitions say it (with ValidLocation).
const LocationAllowed = locationAllowed

// ValidLocation reports whether v is a checkpoint or savepoint location
// this build reads ("" too: the default).
func ValidLocation(v string) bool { return validLocation(v) }

// validLocation reports whether v is a location objstore.ParseURI takes.
func validLocation(v string) bool {
	if v == "" {
		return true
	}
	_, err := objstore.ParseURI(v)
	return err == nil
}

// locationAllowed is what a checkpoint or savepoint location may be.
const locationAllowed = "s3://bucket/prefix, file:///path or a path"

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
	OptDir         = config.String(KeyDir, "",
		"where jobs keep their checkpoints, each in a folder named as its folder in the data directory: s3://bucket/prefix (an object store: the data directory keeps the working copy, each checkpoint is uploaded before it completes, and a job started on an empty data directory restores from there), file:///path or a path").
		ShowDefault("<data-dir>/jobs/<job>/checkpoints").Where(locationAllowed, validLocation)
	OptS3Endpoint = config.String(KeyS3Endpoint, "",
		"the URL of the S3-compatible service of s3:// locations, such as http://127.0.0.1:9000 (default: AWS's own, by region)").
		Where("an http:// or https:// URL", func(v string) bool {
			return v == "" || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")
		})
	OptS3PathStyle = config.Bool(KeyS3PathStyle, false,
		"address buckets as <endpoint>/<bucket> rather than <bucket>.<endpoint> (most S3-compatible servers want true)")
	OptS3AccessKey = config.String(KeyS3AccessKey, "",
		"the access key of s3:// locations (default: the AWS environment variables and files, AWS_ACCESS_KEY_ID, ~/.aws/credentials...)")
	OptS3SecretKey = config.String(KeyS3SecretKey, "",
		"the secret key of 's3.access-key' (default: the AWS environment variables and files); SET shows it masked, but a server keeps it in the clear in its data directory (server/options.json, server/jobs.json), so prefer AWS_SECRET_ACCESS_KEY")
)

// OptionDefs lists the checkpointing options ParseOptions reads.
func OptionDefs() []config.Def {
	return []config.Def{OptInterval, OptMode, OptTimeout, OptMaxConcurrent, OptMinPause, OptTolerable, OptRetention, OptNumRetained,
		OptDir, OptS3Endpoint, OptS3PathStyle, OptS3AccessKey, OptS3SecretKey}
}

// ParseOptions reads the checkpointing options from a session's SET map
// (other keys are not looked at). Unset keys keep their defaults; a bad
// value is a *config.Error naming the key, the value and what is allowed.
func ParseOptions(m map[string]string) (Options, error) {
	var o Options
	var mode, retention string
	err := config.Collect(
		config.Into(&o.Dir, OptDir, m),
		config.Into(&o.S3.Endpoint, OptS3Endpoint, m),
		config.Into(&o.S3.PathStyle, OptS3PathStyle, m),
		config.Into(&o.S3.AccessKey, OptS3AccessKey, m),
		config.Into(&o.S3.SecretKey, OptS3SecretKey, m),
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
	if (o.S3.AccessKey == "") != (o.S3.SecretKey == "") {
		return Options{}, fmt.Errorf("'%s' and '%s' are set together or not at all", KeyS3AccessKey, KeyS3SecretKey)
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
