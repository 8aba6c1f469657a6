package session

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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

// validate checks a value for the options the session interprets.
func validate(key, value string) error {
	switch key {
	case OptParallelism, OptMaxParallelism, OptBatchSize, OptMaxRows, OptStateCacheEntries:
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return fmt.Errorf("option '%s' must be a positive integer, got '%s'", key, value)
		}
	case OptStateBackend:
		switch strings.ToLower(value) {
		case "pebble", "hashmap", "rocksdb":
		default:
			return fmt.Errorf("option '%s' must be 'pebble' or 'hashmap', got '%s'", key, value)
		}
	case OptDMLSync, OptIgnoreUnclaimed, OptSavepointOnStop:
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("option '%s' must be 'true' or 'false', got '%s'", key, value)
		}
	case planner.OptSourceIdleTimeout:
		if d, err := types.ParseDuration(value); err != nil || d < 0 {
			return fmt.Errorf("option '%s' must be a duration such as '30 s', got '%s'", key, value)
		}
	case OptResultMode:
		switch strings.ToLower(value) {
		case "table", "changelog", "tableau":
		default:
			return fmt.Errorf("option '%s' must be 'table', 'changelog' or 'tableau', got '%s'", key, value)
		}
	}
	return nil
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
