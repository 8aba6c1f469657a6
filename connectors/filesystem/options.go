package filesystem

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/format"
	iconfig "github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/types"

	_ "github.com/streamsql/streamsql/connectors/format/csv"      // registers csv
	_ "github.com/streamsql/streamsql/connectors/format/debezium" // registers debezium-json
	_ "github.com/streamsql/streamsql/connectors/format/json"     // registers json
)

// Name is the value of the 'connector' option.
const Name = "filesystem"

// Option keys.
const (
	OptPath   = "path"
	OptFormat = "format"

	// Partitioned tables (partition.go).
	OptDefaultPartition = "partition.default-name"
	OptCommitTrigger    = "sink.partition-commit.trigger"
	OptCommitDelay      = "sink.partition-commit.delay"
	OptCommitPolicy     = "sink.partition-commit.policy.kind"
	OptSuccessFileName  = "sink.partition-commit.success-file.name"
	OptTimePattern      = "partition.time-extractor.timestamp-pattern"

	// Rolling of part files (sink.go).
	OptRollInterval = "sink.rolling-policy.rollover-interval"
	OptRollCheck    = "sink.rolling-policy.check-interval"
	OptRollFileSize = "sink.rolling-policy.file-size"
)

type config struct {
	path   string
	format *format.Format
	// partitionKeys are the PARTITIONED BY columns (nil: none), and
	// defaultPartition the directory value of a NULL.
	partitionKeys    []string
	defaultPartition string
	// commit says partitions are committed with a success file, named
	// successFile, once the watermark passes their time (from
	// timePattern) plus delay.
	commit      bool
	successFile string
	timePattern string
	delay       time.Duration
	// rollInterval and rollSize roll a part file before the checkpoint
	// (0: never).
	rollInterval time.Duration
	rollSize     int64
}

func parse(schema types.Schema, opts map[string]string) (config, error) {
	return parsePartitioned(schema, nil, opts)
}

// parsePartitioned reads the options of a table partitioned by keys
// (nil: not partitioned).
func parsePartitioned(schema types.Schema, keys []string, opts map[string]string) (config, error) {
	var c config
	c.path = opts[OptPath]
	if c.path == "" {
		return c, fmt.Errorf("'%s' must not be empty", OptPath)
	}
	// Flink writes paths as URIs: file:///tmp/x is the local /tmp/x.
	if scheme, rest, ok := strings.Cut(c.path, "://"); ok {
		if scheme != "file" {
			return c, fmt.Errorf("'%s' = '%s': the %s:// file system is not supported (a local path or file:///path)", OptPath, c.path, scheme)
		}
		if !strings.HasPrefix(rest, "/") {
			return c, fmt.Errorf("'%s' = '%s': a file:// path must be absolute (file:///path)", OptPath, c.path)
		}
		c.path = rest
	}
	var err error
	if c.format, err = format.Lookup(opts[OptFormat]); err != nil {
		return c, fmt.Errorf("'%s': %v", OptFormat, err)
	}
	if c.format.Binary {
		return c, fmt.Errorf("'%s' = '%s': a binary format needs records framed by the connector (kafka), not lines in files", OptFormat, c.format.Name)
	}
	for k := range opts {
		name, _, ok := strings.Cut(k, ".")
		if ok && name != c.format.Name && slices.Contains(format.Names(), name) {
			return c, fmt.Errorf("option '%s' does not apply to format '%s'", k, c.format.Name)
		}
	}
	if err := c.partitionOptions(schema, keys, opts); err != nil {
		return c, err
	}
	if err := c.rollingOptions(opts); err != nil {
		return c, err
	}
	// Build a decoder and an encoder once to check the format's options
	// (over the columns the files hold: not the partition columns).
	spec := format.Spec{Schema: dataSchema(schema, keys), Options: opts, Prefix: c.format.Name + "."}
	d, err := c.format.NewDecoder(spec)
	if err != nil {
		return c, err
	}
	d.Release()
	if _, err := c.format.NewEncoder(spec); err != nil {
		return c, err
	}
	return c, nil
}

func validate(t *catalog.Table) error {
	_, err := parsePartitioned(t.Columns, t.PartitionKeys, t.Options)
	return err
}

func optionKeys() []string {
	return append([]string{OptPath, OptFormat, OptDefaultPartition, OptCommitTrigger, OptCommitDelay, OptCommitPolicy,
		OptSuccessFileName, OptTimePattern, OptRollInterval, OptRollCheck, OptRollFileSize}, format.OptionKeys()...)
}

// rollingOptions reads sink.rolling-policy.*: a part file is rolled (closed,
// to be committed with the next checkpoint, and a new one started) once it
// has been open rollover-interval or holds file-size bytes. The sink checks
// at each batch it writes, so check-interval, Flink's period of that check,
// only has to be a valid duration.
func (c *config) rollingOptions(opts map[string]string) error {
	for _, k := range []string{OptRollInterval, OptRollCheck} {
		v, ok := opts[k]
		if !ok {
			continue
		}
		d, err := types.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("'%s' = '%s': not a positive duration such as '1 min'", k, v)
		}
		if k == OptRollInterval {
			c.rollInterval = d
		}
	}
	if v, ok := opts[OptRollFileSize]; ok {
		n, err := iconfig.ParseBytes(v)
		if err != nil {
			return fmt.Errorf("'%s' = '%s': %v", OptRollFileSize, v, err)
		}
		c.rollSize = n
	}
	return nil
}
