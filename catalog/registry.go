package catalog

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/types"
)

// Connector describes what a connector can do, and carries the runtime's
// constructors of its sources and sinks. This is the one connector
// registry: a connector registers itself once, in an init function,
// through exec.RegisterConnector (which fills Factories and calls
// RegisterConnector); the planner consults its capabilities, the runtime
// its factories.
type Connector struct {
	// Name is the value of the 'connector' option ("datagen", "print").
	Name string
	// Source and Sink say whether tables of this connector can be read and written.
	Source, Sink bool
	// AcceptsUpdates says whether the sink takes -U/+U/-D rows. A sink that
	// does not is append-only: planning an updating query into it is an error.
	AcceptsUpdates bool
	// AcceptsUpdatesWith, if set, decides AcceptsUpdates per table from its
	// options (a format that can encode a changelog, say).
	AcceptsUpdatesWith func(opts map[string]string) bool
	// WritesByKey says the sink keeps one value per PRIMARY KEY: each
	// change replaces (or, deleted, removes) its key's value
	// (upsert-kafka, jdbc). An updating query into it must be keyed by
	// columns the primary key contains, or two rows of one key would
	// overwrite each other, and into a table without a primary key it is
	// refused; the planner refuses both.
	WritesByKey bool
	// ReadsRowFields says the source reads a ROW column declared with
	// any subset of its fields, in any order (the planner then asks it
	// for the fields a query reads only).
	ReadsRowFields bool
	// ProducesUpdates, if set, says whether a scan of a table with these
	// options emits a changelog (-U/+U/-D) rather than inserts only.
	ProducesUpdates func(opts map[string]string) bool
	// Bounded reports whether a scan of a table with these options ends.
	Bounded func(opts map[string]string) bool
	// Options lists the option keys the connector understands; a key ending
	// in '#' is a prefix (fields.#). Unknown keys are an error at CREATE TABLE.
	Options []string
	// Required lists option keys that must be present.
	Required []string
	// Partitioned says tables of this connector may be PARTITIONED BY.
	Partitioned bool
	// Validate checks the options against the schema (nil: nothing more to
	// check). It sees the physical columns only (Table.PhysicalTable).
	Validate func(t *Table) error
	// Drop, if set, removes what the connector keeps for t under dataDir when
	// the table is dropped (the rows of an in-memory table, say).
	Drop func(dataDir string, t *Table) error
	// Change, if set, commits the changes of an UPDATE or DELETE to the
	// rows t keeps under dataDir, atomically: the rows removed (-U or -D),
	// then the rows added (+U), each a value per physical column. Only the
	// connector of tables created without WITH has it.
	Change func(dataDir string, t *Table, removed, added [][]types.Value) error
	// Factories are the runtime's source and sink constructors (an
	// *exec.Factories, set by exec.RegisterConnector), kept here without
	// their type so that catalog imports nothing of the runtime.
	Factories any
}

var connectors = struct {
	sync.Mutex
	m map[string]*Connector
}{m: map[string]*Connector{}}

// RegisterConnector adds c to the registry. It panics on a duplicate name.
func RegisterConnector(c Connector) {
	connectors.Lock()
	defer connectors.Unlock()
	if _, dup := connectors.m[c.Name]; dup {
		panic("catalog: duplicate connector " + c.Name)
	}
	connectors.m[c.Name] = &c
}

// SinkAcceptsUpdates reports whether a sink table with these options takes
// -U/+U/-D rows.
func (c *Connector) SinkAcceptsUpdates(opts map[string]string) bool {
	if c.AcceptsUpdatesWith != nil {
		return c.AcceptsUpdatesWith(opts)
	}
	return c.AcceptsUpdates
}

// LookupConnector returns the registered connector called name.
func LookupConnector(name string) (*Connector, bool) {
	connectors.Lock()
	defer connectors.Unlock()
	c, ok := connectors.m[name]
	return c, ok
}

// ConnectorNames lists registered connectors, sorted.
func ConnectorNames() []string {
	connectors.Lock()
	defer connectors.Unlock()
	var out []string
	for n := range connectors.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// OptIdleTimeout is the source table option after which a split that
// produced no row stops holding the watermark back (Flink's
// 'scan.watermark.idle-timeout'; the job's 'table.exec.source.idle-timeout'
// when unset). Every source connector understands it.
const OptIdleTimeout = "scan.watermark.idle-timeout"

// IdleTimeoutOption is OptIdleTimeout's definition.
var IdleTimeoutOption = config.Duration(OptIdleTimeout, 0, false,
	"a split of this source that produced nothing for this long stops holding the watermark back; 0: never; unset: the job's 'table.exec.source.idle-timeout'").
	ShowDefault("the job's 'table.exec.source.idle-timeout'")

// Watermark alignment (Flink's FLIP-182): the sources of a job whose tables
// name the same group read no further while their watermark is more than
// the group's max drift ahead of the group's smallest.
const (
	OptAlignGroup          = "scan.watermark.alignment.group"
	OptAlignMaxDrift       = "scan.watermark.alignment.max-drift"
	OptAlignUpdateInterval = "scan.watermark.alignment.update-interval"
)

// AlignGroupOption and AlignMaxDriftOption are the alignment options'
// definitions (OptAlignUpdateInterval is refused: see Alignment).
var (
	AlignGroupOption = config.String(OptAlignGroup, "",
		"the watermark alignment group of this source: the sources of a job in one group pause while their watermark is more than the group's max drift ahead of its smallest; needs 'scan.watermark.alignment.max-drift' and a WATERMARK")
	AlignMaxDriftOption = config.Duration(OptAlignMaxDrift, 0, true,
		"how far this source's watermark may run ahead of the smallest of its alignment group before it pauses; needs 'scan.watermark.alignment.group'")
)

// TableOptionDefs lists the table (WITH) options the engine reads itself,
// whatever the connector: CREATE TABLE validates them by these definitions.
func TableOptionDefs() []config.Def {
	return []config.Def{IdleTimeoutOption, AlignGroupOption, AlignMaxDriftOption, SinkParallelismOption}
}

// OptSinkParallelism is the sink table option that sets the parallelism
// of the table's sink operator (Flink's 'sink.parallelism'); a connector
// whose sink takes it lists it among its Options.
const OptSinkParallelism = "sink.parallelism"

// SinkParallelismOption is OptSinkParallelism's definition (at most the
// planner's number of key groups, 32768).
var SinkParallelismOption = config.Int(OptSinkParallelism, 0, 1, 32768,
	"the parallelism of the table's sink operator (at most 'pipeline.max-parallelism'); rows reach it by their primary key when the query produces updates; "+
		"unset: its input's parallelism. Connectors that take it: jdbc").
	ShowDefault("the input's parallelism")

// SinkParallelism returns t's 'sink.parallelism' (0: unset).
func SinkParallelism(t *Table) (int, error) {
	v, ok := t.Options[OptSinkParallelism]
	if !ok {
		return 0, nil
	}
	return SinkParallelismOption.Parse(v)
}

// WatermarkAlignment is a source table's watermark alignment; the zero
// value (no group) is none.
type WatermarkAlignment struct {
	Group    string
	MaxDrift time.Duration
}

// Alignment returns t's watermark alignment: a group and a max drift
// both, on a table with a WATERMARK, or neither. The update interval is
// refused: the sources of a job share their watermarks in process, and a
// paused one resumes as soon as the group's smallest allows it.
func Alignment(t *Table) (WatermarkAlignment, error) {
	var a WatermarkAlignment
	if _, ok := t.Options[OptAlignUpdateInterval]; ok {
		return a, fmt.Errorf("%w: '%s' is not implemented: the sources of an alignment group share their watermarks at once, "+
			"and a paused one resumes as soon as the group allows; leave it out", ErrBadOption, OptAlignUpdateInterval)
	}
	g, hasGroup := t.Options[OptAlignGroup]
	d, hasDrift := t.Options[OptAlignMaxDrift]
	if !hasGroup && !hasDrift {
		return a, nil
	}
	if hasDrift {
		var err error
		if a.MaxDrift, err = AlignMaxDriftOption.Parse(d); err != nil {
			return a, badOption{err}
		}
	}
	switch {
	case !hasDrift:
		return a, fmt.Errorf("%w: '%s' needs '%s'", ErrBadOption, OptAlignGroup, OptAlignMaxDrift)
	case !hasGroup || g == "":
		return a, fmt.Errorf("%w: '%s' needs a non-empty '%s'", ErrBadOption, OptAlignMaxDrift, OptAlignGroup)
	case t.WatermarkExpr == "":
		return a, fmt.Errorf("%w: '%s' needs a WATERMARK FOR clause: a source aligns its watermark", ErrBadOption, OptAlignGroup)
	}
	a.Group = g
	return a, nil
}

// IdleTimeout returns t's 'scan.watermark.idle-timeout' and whether it is
// set (CREATE TABLE validated it; the error is for a catalog written
// otherwise).
func IdleTimeout(t *Table) (d time.Duration, set bool, err error) {
	v, ok := t.Options[OptIdleTimeout]
	if !ok {
		return 0, false, nil
	}
	d, err = IdleTimeoutOption.Parse(v)
	return d, err == nil, err
}

// sourceOptions are the options of every source connector.
var sourceOptions = []string{OptIdleTimeout, OptAlignGroup, OptAlignMaxDrift, OptAlignUpdateInterval}

// badOption is a value error of a table option: its message is the
// value's own (config.Error: key, value, what is allowed), and it matches
// ErrBadOption too.
type badOption struct{ err error }

func (b badOption) Error() string   { return b.err.Error() }
func (b badOption) Unwrap() []error { return []error{ErrBadOption, b.err} }

// checkOptions validates t's options against its connector.
func checkOptions(t *Table) error {
	c, ok := LookupConnector(t.Connector)
	if !ok {
		return fmt.Errorf("%w %q (available: %s)", ErrUnknownConnector, t.Connector, strings.Join(ConnectorNames(), ", "))
	}
	known := func(k string) bool {
		if k == "connector" {
			return true
		}
		if c.Source && slices.Contains(sourceOptions, k) {
			return true
		}
		for _, o := range c.Options {
			if p, ok := strings.CutSuffix(o, "#"); ok && strings.HasPrefix(k, p) {
				return true
			}
			if o == k {
				return true
			}
		}
		return false
	}
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known(k) {
			return fmt.Errorf("%w '%s' for connector '%s'%s", ErrBadOption, k, c.Name, closest(k, append(slices.Clip(c.Options), sourceOptions...)))
		}
	}
	if _, _, err := IdleTimeout(t); err != nil {
		return badOption{err}
	}
	if _, err := SinkParallelism(t); err != nil {
		return badOption{err}
	}
	if _, err := Alignment(t); err != nil {
		return err
	}
	for _, r := range c.Required {
		if _, ok := t.Options[r]; !ok {
			return fmt.Errorf("%w: connector '%s' needs option '%s'", ErrBadOption, c.Name, r)
		}
	}
	if len(t.PartitionKeys) > 0 && !c.Partitioned {
		return fmt.Errorf("%w: connector '%s' does not take PARTITIONED BY (the 'filesystem' connector does)", ErrBadOption, c.Name)
	}
	if c.Validate != nil {
		if err := c.Validate(t.PhysicalTable()); errors.Is(err, config.ErrBadValue) {
			return badOption{err}
		} else if err != nil {
			return fmt.Errorf("%w: %v", ErrBadOption, err)
		}
	}
	return nil
}

func closest(k string, candidates []string) string {
	if m := Closest(k, candidates); m != "" {
		return fmt.Sprintf(" (did you mean '%s'?)", m)
	}
	return ""
}

// Closest returns the candidate nearest to name by edit distance, or "" if
// none is near enough to be a plausible typo.
func Closest(name string, candidates []string) string {
	best, bestD := "", len(name)/2+2
	for _, c := range candidates {
		if d := EditDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b in bytes: the
// number of single-byte insertions, deletions and substitutions that turn
// one into the other.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// CheckOptions checks t's options against its connector, as CreateTable
// does (the options of a table hint merged over a table's, say).
func CheckOptions(t *Table) error { return checkOptions(t) }
