package session

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/planner"
)

// Option keys the session itself reads (their definitions are the opt*
// variables below; docs/OPTIONS.md lists them all).
const (
	OptParallelism    = "parallelism.default"
	OptMaxParallelism = "pipeline.max-parallelism"
	OptPipelineName   = "pipeline.name"
	OptDMLSync        = "table.dml-sync"
	OptResultMode     = "sql-client.execution.result-mode"
	OptBatchSize      = "table.exec.batch-size"
	OptMaxRows        = "sql-client.execution.max-table-result.rows"
	OptStateBackend   = "state.backend"
	// OptStateCacheEntries bounds the keys a stateful subtask caches above its store.
	OptStateCacheEntries = "state.backend.cache.max-entries"
	// OptManagedMemory is the memory of keyed state (Flink's managed
	// memory): state.ManagedMemory.
	OptManagedMemory   = "taskmanager.memory.managed.size"
	OptSavepointDir    = "state.savepoints.dir"
	OptRecoveryPath    = "execution.state-recovery.path"
	OptIgnoreUnclaimed = "execution.state-recovery.ignore-unclaimed-state"
	// OptSavepointOnStop makes `streamsql -f` stop its jobs with a savepoint
	// on SIGINT/SIGTERM (the --savepoint-on-stop flag).
	OptSavepointOnStop = "execution.savepoint-on-stop"
	// OptLatencyInterval is how often sources send latency markers
	// (exec.Options.LatencyInterval), OptLatencyGranularity how their ages
	// are kept: Flink's options of the same names.
	OptLatencyInterval    = "metrics.latency.interval"
	OptLatencyGranularity = "metrics.latency.granularity"
)

// shownDefaults are the options SET with no arguments lists even when
// they are not set, with their defaults.
var shownDefaults = []config.Def{planner.OptParallelism, planner.OptMaxParallelism, optDMLSync, optResultMode,
	optBatchSize, optMaxRows, optStateBackend, optStateCacheEntries, optManagedMemory}

// The session's own options' definitions.
var (
	optPipelineName = config.String(OptPipelineName, "",
		"the name of the jobs submitted next (their folder under the data directory's jobs/, with / \\ space , : * ? \" < > | made '_', and '.' and '..' made '_' and '__'); stays set until SET again or RESET").
		ShowDefault("insert-into_<tables>-<hash>").
		Where("a name in UTF-8 without control characters (NUL, newlines, tabs...)", validJobName)
	optDMLSync    = config.Bool(OptDMLSync, false, "an INSERT waits for its job to end (bounded input) before the next statement")
	optResultMode = config.Enum(OptResultMode, "table", []string{"table", "changelog", "tableau"}, nil,
		"how the shell shows a streaming query's results")
	optBatchSize = config.Int(OptBatchSize, exec.DefaultBatchSize, 1, config.MaxInt, "rows per batch a source reads")
	optMaxRows   = config.Int(OptMaxRows, 1000000, 1, config.MaxInt,
		"rows a bounded SELECT (or the shell's table mode) may return; more is an error")
	optStateBackend = config.Enum(OptStateBackend, "pebble", []string{"pebble", "hashmap"}, map[string]string{"rocksdb": "pebble"},
		"where keyed state lives: Pebble on disk, or a Go map (snapshotted whole)")
	optStateCacheEntries = config.Int(OptStateCacheEntries, 1000000, 1, config.MaxInt,
		"keys a stateful subtask keeps in memory above its store, whatever their bytes; beyond it the least recently used are written back and evicted")
	optManagedMemory = config.Bytes(OptManagedMemory, DefaultManagedMemory, 64<<20,
		"the memory of keyed state, shared by every stateful subtask of the process (Flink's managed memory): half for the state operators hold in memory, a quarter for Pebble's block cache, a quarter for its memtables (docs/DESIGN.md); jobs submitted next use it")
	optSavepointDir = config.String(OptSavepointDir, "", "where STOP JOB ... WITH SAVEPOINT writes savepoints: a directory, or s3://bucket/prefix").
			ShowDefault("<data-dir>/savepoints").Where(checkpoint.LocationAllowed, checkpoint.ValidLocation)
	optRecoveryPath = config.String(OptRecoveryPath, "",
		"a checkpoint or savepoint the jobs submitted next start from: its directory (or its _metadata), local or s3://bucket/prefix/...").
		Where(checkpoint.LocationAllowed, checkpoint.ValidLocation)
	optIgnoreUnclaimed = config.Bool(OptIgnoreUnclaimed, false,
		"a restore may drop the state of operators the plan no longer has (else it is an error)")
	optSavepointOnStop = config.Bool(OptSavepointOnStop, false,
		"`streamsql -f` stops its jobs with a savepoint on SIGINT/SIGTERM")
	optRuntimeMode = config.Enum(OptRuntimeMode, "streaming", []string{"streaming"}, nil,
		"only streaming: bounded inputs run as streams that end ('batch' is not implemented)")
	optLatencyInterval = config.Duration(OptLatencyInterval, 0, false,
		"how often each source subtask of the jobs submitted next sends a latency marker, whose age every operator records on arrival in a histogram per source operator (/metrics streamsql_operator_latency_seconds, the REST API and the web UI); 0: none (the markers pass records in no queue, and do not wait in an operator's buffers: mini-batches, windows)")
	optLatencyGranularity = config.Enum(OptLatencyGranularity, "operator", []string{"operator"}, nil,
		"how marker ages are kept: 'operator', a histogram per source operator in each operator subtask ('single' and 'subtask' are not implemented)")
)

// Settings are the session's own options, typed. SET validates each
// value, and the session keeps Settings up to date with every SET and
// RESET, so nothing reads an option's text afterwards.
type Settings struct {
	PipelineName      string
	DMLSync           bool
	ResultMode        string // table, changelog or tableau
	BatchSize         int
	MaxRows           int
	StateBackend      string // pebble or hashmap
	StateCacheEntries int
	ManagedMemory     int64
	SavepointDir      string // "": <data-dir>/savepoints
	RecoveryPath      string
	IgnoreUnclaimed   bool
	SavepointOnStop   bool
	LatencyInterval   time.Duration
}

// parseSettings reads the session's options from the effective option map.
func parseSettings(m map[string]string) (Settings, error) {
	var st Settings
	var mode, granularity string
	err := config.Collect(
		config.Into(&st.PipelineName, optPipelineName, m),
		config.Into(&st.DMLSync, optDMLSync, m),
		config.Into(&st.ResultMode, optResultMode, m),
		config.Into(&st.BatchSize, optBatchSize, m),
		config.Into(&st.MaxRows, optMaxRows, m),
		config.Into(&st.StateBackend, optStateBackend, m),
		config.Into(&st.StateCacheEntries, optStateCacheEntries, m),
		config.Into(&st.ManagedMemory, optManagedMemory, m),
		config.Into(&st.SavepointDir, optSavepointDir, m),
		config.Into(&st.RecoveryPath, optRecoveryPath, m),
		config.Into(&st.IgnoreUnclaimed, optIgnoreUnclaimed, m),
		config.Into(&st.SavepointOnStop, optSavepointOnStop, m),
		config.Into(&mode, optRuntimeMode, m),
		config.Into(&st.LatencyInterval, optLatencyInterval, m),
		config.Into(&granularity, optLatencyGranularity, m),
	)
	return st, err
}

// RisingWave's session variables (names compared without regard to case)
// stand for the options that mean the same here:
//
//   - RW_IMPLICIT_FLUSH (true | false | on | off): every INSERT waits until
//     its rows are visible to later statements, which is 'table.dml-sync'.
//   - STREAMING_PARALLELISM n: the parallelism of the jobs created next,
//     'parallelism.default'; 0 (RisingWave's "as the system decides")
//     resets it to the default.
//
// rwOptions maps each of those names (upper case) to its option; RESET name
// resets that option.
var rwOptions = map[string]string{"RW_IMPLICIT_FLUSH": OptDMLSync, "STREAMING_PARALLELISM": OptParallelism}

var (
	rwImplicitFlush = config.Enum("RW_IMPLICIT_FLUSH", "false", []string{"true", "false"}, map[string]string{"on": "true", "off": "false"},
		"RisingWave's name of 'table.dml-sync'")
	rwParallelism = config.Int("STREAMING_PARALLELISM", 0, 0, planner.MaxKeyGroups,
		"RisingWave's name of 'parallelism.default' (0: the default)")
)

// rwOption maps SET name = value to the option and value it sets; ok is
// false for other names. An empty val asks for the option to be reset.
func rwOption(name, value string) (key, val string, ok bool, err error) {
	switch strings.ToUpper(name) {
	case "RW_IMPLICIT_FLUSH":
		v, err := rwImplicitFlush.Parse(value)
		return OptDMLSync, v, true, err
	case "STREAMING_PARALLELISM":
		n, err := rwParallelism.Parse(value)
		if err != nil || n == 0 {
			return OptParallelism, "", true, err
		}
		return OptParallelism, strconv.Itoa(n), true, nil
	}
	return "", "", false, nil
}

// DefaultManagedMemory is the default of 'taskmanager.memory.managed.size':
// 512 MiB, which a 2-core laptop with 4 GiB runs beside everything else.
const DefaultManagedMemory = 512 << 20

// Option keys that are refused or renamed.
const (
	// OptRuntimeMode is Flink's 'execution.runtime-mode': only 'streaming'
	// (the default) is implemented; 'batch' is refused.
	OptRuntimeMode = "execution.runtime-mode"
)

// aliases are the other names Flink accepts for an option (older ones,
// and the newer ones of Flink 1.19/1.20), and the key they set.
var aliases = map[string]string{
	"execution.savepoint.path":                   OptRecoveryPath,
	"execution.savepoint.ignore-unclaimed-state": OptIgnoreUnclaimed,
	"state.backend.type":                         OptStateBackend,
	"execution.checkpointing.savepoint-dir":      OptSavepointDir,
	"execution.checkpointing.num-retained":       checkpoint.KeyNumRetained,
	"state.checkpoints.dir":                      checkpoint.KeyDir,
}

// refused are keys of Flink that are known but not implemented: SET of
// one is an error saying so.
var refused = map[string]string{}

// refusedValues are values known but not implemented, per option: SET
// of one is an error saying so.
var refusedValues = map[string]map[string]string{
	OptRuntimeMode: {"batch": "option '" + OptRuntimeMode + "' = 'batch' is not implemented: jobs run in streaming mode (bounded inputs too, which end when their input does)"},
	OptLatencyGranularity: {
		"single":  "option '" + OptLatencyGranularity + "' = 'single' is not implemented: marker ages are kept per source operator ('operator')",
		"subtask": "option '" + OptLatencyGranularity + "' = 'subtask' is not implemented: marker ages are kept per source operator ('operator'), not per source subtask",
	},
}

// sessionDefs are the session's own options.
func sessionDefs() []config.Def {
	return []config.Def{optPipelineName, optDMLSync, optResultMode, optBatchSize, optMaxRows, optStateBackend,
		optStateCacheEntries, optManagedMemory, optSavepointDir, optRecoveryPath, optIgnoreUnclaimed, optSavepointOnStop, optRuntimeMode,
		optLatencyInterval, optLatencyGranularity}
}

// OptionDefs lists every option SET accepts, by scope: the session's own,
// the job's (read by the planner), checkpointing, restart strategies.
// Every option that anything reads is listed; SET and RESET refuse every
// other key, so that no option is accepted and ignored. Table (WITH)
// options the engine reads are catalog.TableOptionDefs.
func OptionDefs() []config.Def {
	var defs []config.Def
	defs = append(defs, sessionDefs()...)
	defs = append(defs, planner.JobOptionDefs()...)
	defs = append(defs, checkpoint.OptionDefs()...)
	return append(defs, checkpoint.RestartDefs()...)
}

// tableDefs are the table (WITH) options the engine reads: catalog's and
// the session's own ('event_time_field').
func tableDefs() []config.Def { return append(catalog.TableOptionDefs(), eventTimeOption) }

// options are the keys SET accepts, with their definitions.
var options = func() map[string]config.Def {
	m := map[string]config.Def{}
	for _, d := range OptionDefs() {
		m[d.Key()] = d
	}
	return m
}()

// optionKey returns the key SET or RESET of key means (an alias's
// canonical name), or an error for a key that is not implemented: refused,
// or unknown (with the closest known key as a hint).
func optionKey(key string) (string, error) {
	if k, ok := aliases[key]; ok {
		key = k
	}
	if _, ok := options[key]; ok {
		return key, nil
	}
	if msg, ok := refused[key]; ok {
		return "", errors.New(msg)
	}
	err := fmt.Errorf("unknown option '%s'", key)
	if m := closestKey(key); m != "" {
		return "", fmt.Errorf("%w: did you mean '%s'?", err, m)
	}
	return "", fmt.Errorf("%w (SET with no arguments lists the options)", err)
}

// closestKey is the known option key nearest to key by edit distance, if
// it is close enough to be a typo.
func closestKey(key string) string {
	best, bestD := "", max(3, len(key)/8)+1
	keys := make([]string, 0, len(options)+len(aliases))
	for k := range options {
		keys = append(keys, k)
	}
	for k := range aliases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if d := catalog.EditDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// checkOption validates SET key = value: the key must be implemented and
// the value what the option takes. It returns the canonical key.
func checkOption(key, value string) (string, error) {
	k, err := optionKey(key)
	if err != nil {
		return "", err
	}
	if msg, ok := refusedValues[k][strings.ToLower(strings.TrimSpace(value))]; ok {
		return "", errors.New(msg)
	}
	if err := options[k].Check(value); err != nil {
		return "", err
	}
	return k, nil
}

// Options returns the effective options: defaults overridden by SET.
func (s *Session) Options() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effective()
}

// effective is Options with s.mu held.
func (s *Session) effective() map[string]string {
	out := map[string]string{}
	for _, d := range shownDefaults {
		out[d.Key()] = d.DefaultText()
	}
	for k, v := range s.base {
		out[k] = v
	}
	for k, v := range s.opts {
		out[k] = v
	}
	return out
}

// Option returns one effective option's text, as SET shows it.
func (s *Session) Option(key string) string {
	return s.Options()[key]
}

// Settings returns the session's own options, typed.
func (s *Session) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// update sets (or, with value "", deletes) key in s.opts, or in s.base
// with base, and parses the session's settings anew; on an error nothing
// changes. s.mu must be held.
func (s *Session) update(key, value string, base bool) error {
	m := &s.opts
	if base {
		m = &s.base
	}
	old := maps.Clone(*m)
	if *m == nil {
		*m = map[string]string{}
	}
	if value == "" {
		delete(*m, key)
	} else {
		(*m)[key] = value
	}
	st, err := parseSettings(s.effective())
	if err == nil {
		err = s.checkPathLocked("'"+OptSavepointDir+"'", st.SavepointDir)
	}
	if err == nil {
		err = s.checkPathLocked("'"+OptRecoveryPath+"'", st.RecoveryPath)
	}
	if err == nil {
		err = s.checkPathLocked("'"+checkpoint.KeyDir+"'", s.effective()[checkpoint.KeyDir])
	}
	if err != nil {
		*m = old
		return err
	}
	s.settings = st
	return nil
}

// jobOptions parses the options of the job planned next.
func (s *Session) jobOptions() (planner.JobOptions, error) {
	return planner.ParseJobOptions(s.Options())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
