package kafka

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/types"

	_ "github.com/streamsql/streamsql/connectors/format/avro"     // registers avro, avro-confluent
	_ "github.com/streamsql/streamsql/connectors/format/csv"      // registers csv
	_ "github.com/streamsql/streamsql/connectors/format/debezium" // registers debezium-json
	_ "github.com/streamsql/streamsql/connectors/format/json"     // registers json
	_ "github.com/streamsql/streamsql/connectors/format/raw"      // registers raw
)

// Option keys (Flink's names).
const (
	OptTopic        = "topic"
	OptTopicPattern = "topic-pattern"

	OptBootstrapServers = "properties.bootstrap.servers"
	OptGroupID          = "properties.group.id"
	OptClientID         = "properties.client.id"
	OptIsolationLevel   = "properties.isolation.level"
	OptAutoOffsetReset  = "properties.auto.offset.reset"
	OptTxnTimeout       = "properties.transaction.timeout.ms"
	OptCompression      = "properties.compression.type"
	OptLinger           = "properties.linger.ms"

	OptFormat             = "format"
	OptValueFormat        = "value.format"
	OptKeyFormat          = "key.format"
	OptKeyFields          = "key.fields"
	OptKeyFieldsPrefix    = "key.fields-prefix"
	OptValueFieldsInclude = "value.fields-include"

	OptStartupMode           = "scan.startup.mode"
	OptStartupTimestamp      = "scan.startup.timestamp-millis"
	OptStartupOffsets        = "scan.startup.specific-offsets"
	OptBoundedMode           = "scan.bounded.mode"
	OptBoundedTimestamp      = "scan.bounded.timestamp-millis"
	OptBoundedOffsets        = "scan.bounded.specific-offsets"
	OptPartitionDiscovery    = "scan.topic-partition-discovery.interval"
	OptDeliveryGuarantee     = "sink.delivery-guarantee"
	OptTransactionalIDPrefix = "sink.transactional-id-prefix"
	OptPartitioner           = "sink.partitioner"
)

// Delivery guarantees of the sink.
const (
	GuaranteeNone        = "none"
	GuaranteeAtLeastOnce = "at-least-once"
	GuaranteeExactlyOnce = "exactly-once"
)

// Startup and bounded modes.
const (
	ModeEarliest   = "earliest-offset"
	ModeLatest     = "latest-offset"
	ModeGroup      = "group-offsets"
	ModeTimestamp  = "timestamp"
	ModeSpecific   = "specific-offsets"
	ModeUnbounded  = "unbounded"
	includeAll     = "ALL"
	includeExcept  = "EXCEPT_KEY"
	partDefault    = "default"
	partFixed      = "fixed"
	partRoundRobin = "round-robin"
)

// DefaultTransactionTimeout is the transaction timeout of the exactly-once
// sink unless 'properties.transaction.timeout.ms' says otherwise (the Kafka
// producer's default).
const DefaultTransactionTimeout = time.Minute

// TimeoutMargin is what the transaction timeout must exceed the checkpoint
// interval by: the time a checkpoint takes to complete after its barrier,
// and a failed job to restart and commit what its checkpoint recorded.
const TimeoutMargin = 10 * time.Second

// DefaultDiscoveryInterval is how often an unbounded source looks for new
// partitions (and, with 'topic-pattern', topics) unless
// 'scan.topic-partition-discovery.interval' says otherwise (Flink's
// default); '0' turns discovery off.
const DefaultDiscoveryInterval = 5 * time.Minute

// properties lists the Kafka client properties understood after the
// 'properties.' prefix.
var properties = []string{OptBootstrapServers, OptGroupID, OptClientID, OptIsolationLevel,
	OptAutoOffsetReset, OptTxnTimeout, OptCompression, OptLinger}

// config is a table's parsed options.
type config struct {
	table  string
	upsert bool
	schema types.Schema
	opts   map[string]string

	topics   []string
	pattern  *regexp.Regexp
	servers  []string
	groupID  string
	clientID string
	// readCommitted is the isolation level of the source.
	readCommitted bool
	autoReset     string // earliest, latest or none

	value, key     *format.Format
	valuePrefix    string // of the value format's options: "json." or "value.json."
	keyPrefix      string // "key.json."
	keyFields      []int  // indexes into schema
	keyNamesPrefix string // key.fields-prefix
	exceptKey      bool   // value.fields-include = EXCEPT_KEY

	startup       string
	startupMillis int64
	startupOffs   map[int32]int64
	bounded       string
	boundedMillis int64
	boundedOffs   map[int32]int64
	discovery     time.Duration

	guarantee   string
	txnPrefix   string // as given; empty for the default
	partitioner string
	txnTimeout  time.Duration
	compression string
	linger      time.Duration
}

// optionKeys lists the keys a kafka (or upsert-kafka) table accepts.
func optionKeys(upsert bool) []string {
	keys := []string{OptTopic, OptValueFormat, OptKeyFormat, OptKeyFields, OptKeyFieldsPrefix,
		OptValueFieldsInclude, OptBoundedMode, OptBoundedTimestamp, OptBoundedOffsets, OptPartitionDiscovery,
		OptDeliveryGuarantee, OptTransactionalIDPrefix}
	keys = append(keys, properties...)
	if !upsert {
		keys = append(keys, OptTopicPattern, OptFormat, OptStartupMode, OptStartupTimestamp, OptStartupOffsets, OptPartitioner)
	}
	for _, name := range format.Names() {
		f, err := format.Lookup(name)
		if err != nil {
			continue
		}
		for _, o := range f.Options {
			if !upsert {
				keys = append(keys, name+"."+o)
			}
			keys = append(keys, "key."+name+"."+o, "value."+name+"."+o)
		}
	}
	sort.Strings(keys)
	return keys
}

// parse checks the options of a table. upsert selects upsert-kafka's rules.
func parse(table string, schema types.Schema, opts map[string]string, upsert bool) (*config, error) {
	c := &config{table: table, upsert: upsert, schema: schema, opts: opts}
	var err error
	for k := range opts {
		if strings.HasPrefix(k, "properties.") && !slices.Contains(properties, k) {
			return nil, fmt.Errorf("unsupported Kafka client property '%s' (supported: %s)", k, strings.Join(properties, ", "))
		}
	}
	if c.servers = splitList(opts[OptBootstrapServers], ","); len(c.servers) == 0 {
		return nil, fmt.Errorf("'%s' must list at least one host:port", OptBootstrapServers)
	}
	c.groupID = opts[OptGroupID]
	c.clientID = option.String(opts, OptClientID, "streamsql")
	iso, err := option.Enum(opts, OptIsolationLevel, "read_committed", "read_committed", "read_uncommitted")
	if err != nil {
		return nil, err
	}
	c.readCommitted = iso == "read_committed"
	if c.autoReset, err = option.Enum(opts, OptAutoOffsetReset, "none", "earliest", "latest", "none"); err != nil {
		return nil, err
	}

	// Topics.
	topic, hasTopic := opts[OptTopic]
	pattern, hasPattern := opts[OptTopicPattern]
	switch {
	case hasTopic && hasPattern:
		return nil, fmt.Errorf("'%s' and '%s' cannot both be set", OptTopic, OptTopicPattern)
	case hasPattern:
		if c.pattern, err = regexp.Compile("^(?:" + pattern + ")$"); err != nil {
			return nil, fmt.Errorf("'%s' is not a regular expression: %v", OptTopicPattern, err)
		}
	case hasTopic:
		if c.topics = splitList(topic, ";"); len(c.topics) == 0 {
			return nil, fmt.Errorf("'%s' must name a topic", OptTopic)
		}
	default:
		return nil, fmt.Errorf("'%s' or '%s' is required", OptTopic, OptTopicPattern)
	}
	if upsert && len(c.topics) != 1 {
		return nil, fmt.Errorf("upsert-kafka reads and writes one topic: '%s' must name exactly one", OptTopic)
	}

	if err := c.parseFormats(opts); err != nil {
		return nil, err
	}
	if c.value.Flat {
		if err := format.RefuseRows(c.value.Name, schema); err != nil {
			return nil, err
		}
	}
	if err := c.parseScan(opts); err != nil {
		return nil, err
	}
	if err := c.parseSink(opts); err != nil {
		return nil, err
	}
	return c, nil
}

func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c *config) parseFormats(opts map[string]string) error {
	fv, hasFormat := opts[OptFormat]
	vv, hasValue := opts[OptValueFormat]
	var err error
	switch {
	case c.upsert && hasFormat:
		return fmt.Errorf("upsert-kafka takes '%s' and '%s', not '%s'", OptKeyFormat, OptValueFormat, OptFormat)
	case hasFormat && hasValue:
		return fmt.Errorf("'%s' and '%s' cannot both be set", OptFormat, OptValueFormat)
	case hasFormat:
		if c.value, err = format.Lookup(fv); err != nil {
			return fmt.Errorf("'%s': %v", OptFormat, err)
		}
		c.valuePrefix = c.value.Name + "."
	case hasValue:
		if c.value, err = format.Lookup(vv); err != nil {
			return fmt.Errorf("'%s': %v", OptValueFormat, err)
		}
		c.valuePrefix = "value." + c.value.Name + "."
	default:
		return fmt.Errorf("'%s' or '%s' is required", OptFormat, OptValueFormat)
	}
	kv, hasKey := opts[OptKeyFormat]
	if hasKey {
		if c.key, err = format.Lookup(kv); err != nil {
			return fmt.Errorf("'%s': %v", OptKeyFormat, err)
		}
		c.keyPrefix = "key." + c.key.Name + "."
		if isChangelog(c.key) {
			return fmt.Errorf("'%s' cannot be the changelog format '%s'", OptKeyFormat, c.key.Name)
		}
	} else if c.upsert {
		return fmt.Errorf("upsert-kafka needs '%s'", OptKeyFormat)
	}
	if c.upsert && isChangelog(c.value) {
		return fmt.Errorf("upsert-kafka's '%s' cannot be the changelog format '%s': the table is the changelog", OptValueFormat, c.value.Name)
	}
	// Format options must belong to the formats in use, under the right prefix.
	for k := range opts {
		name, rest, ok := strings.Cut(k, ".")
		if !ok {
			continue
		}
		switch name {
		case "key", "value":
			fname, _, ok := strings.Cut(rest, ".")
			if !ok || !slices.Contains(format.Names(), fname) {
				continue
			}
			if f := map[string]*format.Format{"key": c.key, "value": c.value}[name]; f == nil || f.Name != fname || name == "value" && !hasValue {
				return fmt.Errorf("option '%s' does not apply: the %s format is %s", k, name, describeFormat(f, name == "value" && !hasValue))
			}
		default:
			if slices.Contains(format.Names(), name) && (!hasFormat || name != c.value.Name) {
				if hasValue && name == c.value.Name {
					return fmt.Errorf("option '%s' does not apply with '%s': write 'value.%s'", k, OptValueFormat, k)
				}
				return fmt.Errorf("option '%s' does not apply: the format is %s", k, describeFormat(c.value, false))
			}
		}
	}

	// Key fields.
	c.keyNamesPrefix = opts[OptKeyFieldsPrefix]
	inc, err := option.Enum(opts, OptValueFieldsInclude, includeAll, includeAll, includeExcept)
	if err != nil {
		return err
	}
	c.exceptKey = inc == includeExcept
	kf, hasFields := opts[OptKeyFields]
	if hasFields {
		for _, n := range splitList(kf, ";") {
			i := c.schema.Index(n)
			if i < 0 {
				return fmt.Errorf("'%s' names column '%s', which the table does not have (columns: %s)", OptKeyFields, n, strings.Join(c.schema.Names(), ", "))
			}
			if slices.Contains(c.keyFields, i) {
				return fmt.Errorf("'%s' names column '%s' twice", OptKeyFields, n)
			}
			c.keyFields = append(c.keyFields, i)
		}
		if len(c.keyFields) == 0 {
			return fmt.Errorf("'%s' must name at least one column", OptKeyFields)
		}
	}
	switch {
	case hasKey && !hasFields:
		return fmt.Errorf("'%s' needs the key columns in '%s'", OptKeyFormat, OptKeyFields)
	case hasFields && !hasKey:
		return fmt.Errorf("'%s' needs '%s'", OptKeyFields, OptKeyFormat)
	case c.keyNamesPrefix != "" && !c.exceptKey:
		return fmt.Errorf("'%s' needs '%s' = '%s'", OptKeyFieldsPrefix, OptValueFieldsInclude, includeExcept)
	}
	for _, i := range c.keyFields {
		if !strings.HasPrefix(c.schema[i].Name, c.keyNamesPrefix) {
			return fmt.Errorf("key column '%s' does not start with the '%s' '%s'", c.schema[i].Name, OptKeyFieldsPrefix, c.keyNamesPrefix)
		}
	}
	if c.exceptKey && len(c.keyFields) == len(c.schema) && c.value.Name != "raw" {
		return fmt.Errorf("'%s' = '%s' leaves no column for the value", OptValueFieldsInclude, includeExcept)
	}
	if isChangelog(c.value) && c.exceptKey && len(c.keyFields) > 0 {
		return fmt.Errorf("the changelog format '%s' holds whole rows: '%s' must be '%s'", c.value.Name, OptValueFieldsInclude, includeAll)
	}
	// Build every decoder and encoder once, to check the formats' options
	// and that they can hold their columns.
	d, err := newRowDecoder(c, nil, nil, false)
	if err != nil {
		return err
	}
	d.release()
	if _, err := newRowEncoder(c, 0); err != nil {
		return err
	}
	return nil
}

func describeFormat(f *format.Format, viaFormat bool) string {
	switch {
	case f == nil:
		return "not set"
	case viaFormat:
		return fmt.Sprintf("'%s' (set by '%s')", f.Name, OptFormat)
	}
	return "'" + f.Name + "'"
}

func isChangelog(f *format.Format) bool { return f != nil && f.Name == "debezium-json" }

func (c *config) parseScan(opts map[string]string) error {
	var err error
	def := ModeEarliest
	modes := []string{ModeEarliest, ModeLatest, ModeGroup, ModeTimestamp, ModeSpecific}
	if c.upsert {
		modes = []string{ModeEarliest}
	}
	if c.startup, err = option.Enum(opts, OptStartupMode, def, modes...); err != nil {
		return err
	}
	if c.startup == ModeGroup && c.groupID == "" {
		return fmt.Errorf("'%s' = '%s' needs '%s'", OptStartupMode, ModeGroup, OptGroupID)
	}
	if c.startupMillis, c.startupOffs, err = c.modeArgs(opts, c.startup, OptStartupMode, OptStartupTimestamp, OptStartupOffsets); err != nil {
		return err
	}
	if c.bounded, err = option.Enum(opts, OptBoundedMode, ModeUnbounded, ModeUnbounded, ModeLatest, ModeTimestamp, ModeSpecific); err != nil {
		return err
	}
	if c.boundedMillis, c.boundedOffs, err = c.modeArgs(opts, c.bounded, OptBoundedMode, OptBoundedTimestamp, OptBoundedOffsets); err != nil {
		return err
	}
	c.discovery = DefaultDiscoveryInterval
	if v, ok := opts[OptPartitionDiscovery]; ok {
		neg := strings.HasPrefix(strings.TrimSpace(v), "-")
		if c.discovery, err = checkpoint.ParseDuration(strings.TrimPrefix(strings.TrimSpace(v), "-")); err != nil {
			return option.Bad(OptPartitionDiscovery, v, "a duration such as '30 s' or '5 min' ('0' or a negative one turns discovery off)")
		}
		if neg {
			c.discovery = 0
		}
	}
	return nil
}

// modeArgs checks the timestamp and offsets options that go with mode.
func (c *config) modeArgs(opts map[string]string, mode, modeKey, tsKey, offsKey string) (int64, map[int32]int64, error) {
	_, hasTs := opts[tsKey]
	_, hasOffs := opts[offsKey]
	switch {
	case mode == ModeTimestamp && !hasTs:
		return 0, nil, fmt.Errorf("'%s' = '%s' needs '%s'", modeKey, ModeTimestamp, tsKey)
	case mode != ModeTimestamp && hasTs:
		return 0, nil, fmt.Errorf("'%s' applies only with '%s' = '%s'", tsKey, modeKey, ModeTimestamp)
	case mode == ModeSpecific && !hasOffs:
		return 0, nil, fmt.Errorf("'%s' = '%s' needs '%s'", modeKey, ModeSpecific, offsKey)
	case mode != ModeSpecific && hasOffs:
		return 0, nil, fmt.Errorf("'%s' applies only with '%s' = '%s'", offsKey, modeKey, ModeSpecific)
	}
	if hasTs {
		ms, err := option.Int(opts, tsKey, 0, 0, 1<<63-1)
		return ms, nil, err
	}
	if !hasOffs {
		return 0, nil, nil
	}
	if len(c.topics) != 1 {
		return 0, nil, fmt.Errorf("'%s' needs a single topic in '%s'", offsKey, OptTopic)
	}
	offs, err := parseSpecificOffsets(opts[offsKey])
	if err != nil {
		return 0, nil, fmt.Errorf("'%s': %v", offsKey, err)
	}
	return 0, offs, nil
}

// parseSpecificOffsets parses 'partition:0,offset:42;partition:1,offset:300'.
func parseSpecificOffsets(s string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, item := range splitList(s, ";") {
		var p, o int64 = -1, -1
		for _, kv := range strings.Split(item, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if !ok || err != nil || n < 0 {
				return nil, fmt.Errorf("expected 'partition:P,offset:O' items separated by ';', got '%s'", item)
			}
			switch strings.TrimSpace(k) {
			case "partition":
				p = n
			case "offset":
				o = n
			default:
				return nil, fmt.Errorf("expected 'partition:P,offset:O' items separated by ';', got '%s'", item)
			}
		}
		if p < 0 || o < 0 || p > 1<<31-1 {
			return nil, fmt.Errorf("expected 'partition:P,offset:O' items separated by ';', got '%s'", item)
		}
		if _, dup := out[int32(p)]; dup {
			return nil, fmt.Errorf("partition %d is listed twice", p)
		}
		out[int32(p)] = o
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no offsets given")
	}
	return out, nil
}

func (c *config) parseSink(opts map[string]string) error {
	var err error
	if c.guarantee, err = option.Enum(opts, OptDeliveryGuarantee, GuaranteeAtLeastOnce, GuaranteeNone, GuaranteeAtLeastOnce, GuaranteeExactlyOnce); err != nil {
		return err
	}
	c.txnPrefix = opts[OptTransactionalIDPrefix]
	if strings.ContainsAny(c.txnPrefix, " \t\n") {
		return fmt.Errorf("'%s' must not contain white space", OptTransactionalIDPrefix)
	}
	if c.partitioner, err = option.Enum(opts, OptPartitioner, partDefault, partDefault, partFixed, partRoundRobin); err != nil {
		return err
	}
	ms, err := option.Int(opts, OptTxnTimeout, DefaultTransactionTimeout.Milliseconds(), 1, 1<<31-1)
	if err != nil {
		return err
	}
	c.txnTimeout = time.Duration(ms) * time.Millisecond
	if c.compression, err = option.Enum(opts, OptCompression, "none", "none", "gzip", "snappy", "lz4", "zstd"); err != nil {
		return err
	}
	lms, err := option.Int(opts, OptLinger, 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	c.linger = time.Duration(lms) * time.Millisecond
	return nil
}

// isBounded reports whether a scan of a table with these options ends.
func isBounded(opts map[string]string) bool {
	m := opts[OptBoundedMode]
	return m != "" && !strings.EqualFold(strings.TrimSpace(m), ModeUnbounded)
}

// checkSink checks what only a sink needs, against the job.
func (c *config) checkSink(checkpointInterval time.Duration) error {
	if c.pattern != nil {
		return fmt.Errorf("a kafka sink writes to the topic in '%s', not to '%s'", OptTopic, OptTopicPattern)
	}
	if len(c.topics) != 1 {
		return fmt.Errorf("a kafka sink writes to one topic: '%s' lists %d", OptTopic, len(c.topics))
	}
	if c.guarantee != GuaranteeExactlyOnce {
		return nil
	}
	if checkpointInterval <= 0 {
		return fmt.Errorf("'%s' = '%s' needs checkpoints: set 'execution.checkpointing.interval'", OptDeliveryGuarantee, GuaranteeExactlyOnce)
	}
	if c.txnTimeout <= checkpointInterval+TimeoutMargin {
		return fmt.Errorf("'%s' = %d ms is too short for the checkpoint interval of %v: a transaction stays open for an interval and until its checkpoint completes, so the timeout must exceed the interval + %v (at least %d ms)",
			OptTxnTimeout, c.txnTimeout.Milliseconds(), checkpointInterval, TimeoutMargin, (checkpointInterval+TimeoutMargin).Milliseconds()+1)
	}
	return nil
}
