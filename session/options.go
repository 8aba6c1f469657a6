package session

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// Option keys the session itself reads. Defaults are listed in defaults.
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
	OptSavepointDir      = "state.savepoints.dir"
	OptRecoveryPath      = "execution.state-recovery.path"
	OptIgnoreUnclaimed   = "execution.state-recovery.ignore-unclaimed-state"
	// OptSavepointOnStop makes `streamsql -f` stop its jobs with a savepoint
	// on SIGINT/SIGTERM (the --savepoint-on-stop flag).
	OptSavepointOnStop = "execution.savepoint-on-stop"
)

// defaults are the values of the options the session knows, as SET prints them.
var defaults = map[string]string{
	OptParallelism:       "1",
	OptMaxParallelism:    "128",
	OptDMLSync:           "false",
	OptResultMode:        "table",
	OptBatchSize:         "1024",
	OptMaxRows:           "1000000",
	OptStateBackend:      "pebble",
	OptStateCacheEntries: "1000000",
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

// rwOption maps SET name = value to the option and value it sets; ok is
// false for other names. An empty val asks for the option to be reset.
func rwOption(name, value string) (key, val string, ok bool, err error) {
	switch strings.ToUpper(name) {
	case "RW_IMPLICIT_FLUSH":
		switch strings.ToLower(value) {
		case "true", "on":
			return OptDMLSync, "true", true, nil
		case "false", "off":
			return OptDMLSync, "false", true, nil
		}
		return "", "", true, fmt.Errorf("RW_IMPLICIT_FLUSH must be true or false, got '%s'", value)
	case "STREAMING_PARALLELISM":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return "", "", true, fmt.Errorf("streaming_parallelism must be a non-negative integer, got '%s'", value)
		}
		if n == 0 {
			return OptParallelism, "", true, nil
		}
		return OptParallelism, value, true, nil
	}
	return "", "", false, nil
}

// Option keys that are refused or renamed.
const (
	// OptRuntimeMode is Flink's 'execution.runtime-mode': only 'streaming'
	// (the default) is implemented; 'batch' is refused.
	OptRuntimeMode = "execution.runtime-mode"
	// OptStateTTL is Flink's 'table.exec.state.ttl', not supported yet.
	OptStateTTL = "table.exec.state.ttl"
)

// option is one key SET accepts: its documented default and the check of
// its value. Every option that anything reads (the session, the planner,
// checkpoint's ParseOptions and ParseRestart) is listed in options; SET
// and RESET refuse every other key, so that no option is accepted and
// ignored.
type option struct {
	key string
	// def is the default as the docs give it ("" when it has none or it
	// depends on other options).
	def string
	// check validates a value (nil: any text).
	check func(key, value string) error
}

// aliases are the other names Flink accepts for an option (older ones,
// and the newer ones of Flink 1.19/1.20), and the key they set.
var aliases = map[string]string{
	"execution.savepoint.path":                   OptRecoveryPath,
	"execution.savepoint.ignore-unclaimed-state": OptIgnoreUnclaimed,
	"state.backend.type":                         OptStateBackend,
	"execution.checkpointing.savepoint-dir":      OptSavepointDir,
	"execution.checkpointing.num-retained":       checkpoint.KeyNumRetained,
}

// refused are keys of Flink that are known but not implemented: SET of
// one is an error saying so.
var refused = map[string]string{
	OptStateTTL: "option '" + OptStateTTL + "' is not supported yet: state is kept until a window fires, and for ever by GROUP BY without windows",
}

var (
	checkPositive = func(key, value string) error {
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 1 {
			return fmt.Errorf("option '%s' must be a positive integer, got '%s'", key, value)
		}
		return nil
	}
	checkBool = func(key, value string) error {
		if _, err := strconv.ParseBool(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("option '%s' must be 'true' or 'false', got '%s'", key, value)
		}
		return nil
	}
	checkDuration = func(key, value string) error {
		if d, err := types.ParseDuration(value); err != nil || d < 0 {
			return fmt.Errorf("option '%s' must be a duration such as '30 s', got '%s'", key, value)
		}
		return nil
	}
	// checkCheckpoint validates a checkpointing option as the job will
	// read it.
	checkCheckpoint = func(key, value string) error {
		_, err := checkpoint.ParseOptions(map[string]string{key: value})
		return err
	}
	checkRestart = func(key, value string) error { return checkpoint.CheckRestartOption(key, value) }
	oneOf        = func(values ...string) func(key, value string) error {
		return func(key, value string) error {
			for _, v := range values {
				if strings.EqualFold(strings.TrimSpace(value), v) {
					return nil
				}
			}
			return fmt.Errorf("option '%s' must be '%s', got '%s'", key, strings.Join(values, "', '"), value)
		}
	}
)

// options are the keys SET accepts, with their defaults.
var options = func() map[string]option {
	m := map[string]option{}
	for _, o := range []option{
		{OptParallelism, "1", checkPositive},
		{OptMaxParallelism, "128", checkPositive},
		{OptPipelineName, "", nil},
		{OptDMLSync, "false", checkBool},
		{OptResultMode, "table", oneOf("table", "changelog", "tableau")},
		{OptBatchSize, "1024", checkPositive},
		{OptMaxRows, "1000000", checkPositive},
		{OptStateBackend, "pebble", func(key, value string) error {
			if oneOf("pebble", "hashmap", "rocksdb")(key, value) != nil {
				return fmt.Errorf("option '%s' must be 'pebble' or 'hashmap', got '%s'", key, value)
			}
			return nil
		}},
		{OptStateCacheEntries, "1000000", checkPositive},
		{OptSavepointDir, "<data-dir>/savepoints", nil},
		{OptRecoveryPath, "", nil},
		{OptIgnoreUnclaimed, "false", checkBool},
		{OptSavepointOnStop, "false", checkBool},
		{OptRuntimeMode, "streaming", func(key, value string) error {
			switch strings.ToLower(strings.TrimSpace(value)) {
			case "streaming":
				return nil
			case "batch":
				return fmt.Errorf("option '%s' = 'batch' is not implemented: jobs run in streaming mode (bounded inputs too, which end when their input does)", key)
			}
			return fmt.Errorf("option '%s' must be 'streaming', got '%s'", key, value)
		}},
		{planner.OptSourceIdleTimeout, "0", checkDuration},
		{planner.OptLateRecordsTable, "", nil},
		{checkpoint.KeyInterval, "0 (off)", checkCheckpoint},
		{checkpoint.KeyMode, "EXACTLY_ONCE", checkCheckpoint},
		{checkpoint.KeyTimeout, "10 min", checkCheckpoint},
		{checkpoint.KeyMaxConcurrent, "1", checkCheckpoint},
		{checkpoint.KeyMinPause, "0", checkCheckpoint},
		{checkpoint.KeyTolerable, "0", checkCheckpoint},
		{checkpoint.KeyRetention, "RETAIN_ON_CANCELLATION", checkCheckpoint},
		{checkpoint.KeyNumRetained, "1", checkCheckpoint},
	} {
		m[o.key] = o
	}
	for _, r := range checkpoint.RestartOptions() {
		m[r.Key] = option{r.Key, r.Default, checkRestart}
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
	if c := options[k].check; c != nil {
		if err := c(k, value); err != nil {
			return "", err
		}
	}
	return k, nil
}

// Options returns the effective options: defaults overridden by SET.
func (s *Session) Options() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range s.base {
		out[k] = v
	}
	for k, v := range s.opts {
		out[k] = v
	}
	return out
}

// Option returns one effective option.
func (s *Session) Option(key string) string {
	return s.Options()[key]
}

func (s *Session) boolOption(key string) bool {
	b, _ := strconv.ParseBool(s.Option(key))
	return b
}

func (s *Session) intOption(key string) int {
	n, _ := strconv.Atoi(s.Option(key))
	return n
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
