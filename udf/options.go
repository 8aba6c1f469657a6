package udf

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/config"
)

// The options of CREATE FUNCTION ... WITH (...).
var (
	MemoryLimitOption = config.Bytes("memory-limit", 256<<20, 1<<20,
		"The most linear memory one instance of the function may have (WebAssembly pages of 64 KiB; a module built by Go "+
			"starts at a few MiB). A module that needs more fails the call that asked for it.")
	CallTimeoutOption = config.Duration("call-timeout", 10*time.Second, false,
		"The longest one call of the function over a batch of rows may run; past it the call is stopped and the job fails "+
			"with an error naming the function. The limit costs a check at every loop iteration and call inside the module "+
			"(a loop-heavy function runs several times slower, bench/UDF.md); '0' turns it off for a trusted function, "+
			"which then runs without the checks and, should it never return, hangs its job.")
	IgnoreErrorsOption = config.Bool("ignore-errors", false,
		"Whether a row whose call fails (a panic or a trap of the module, not the time limit) gives NULL, and is counted "+
			"(DESCRIBE FUNCTION), rather than failing the job.")
)

// OptionDefs lists the options of CREATE FUNCTION ... WITH (...).
func OptionDefs() []config.Def {
	return []config.Def{MemoryLimitOption, CallTimeoutOption, IgnoreErrorsOption}
}

// Options are a function's sandbox limits.
type Options struct {
	// MemoryLimit is the most linear memory of an instance, in bytes.
	MemoryLimit int64
	// CallTimeout bounds one call over a batch; 0 is no limit (and no
	// checks in the module's loops).
	CallTimeout time.Duration
	// IgnoreErrors makes a row whose call fails NULL (and counted)
	// instead of an error.
	IgnoreErrors bool
}

// ParseOptions reads a function's WITH options; an unknown key is an
// error that lists the known ones.
func ParseOptions(m map[string]string) (Options, error) {
	var known []string
	for _, d := range OptionDefs() {
		known = append(known, d.Key())
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Options{}, fmt.Errorf("%w: unknown function option '%s' (a function takes %s)", ErrBadOption,
			strings.Join(unknown, "', '"), "'"+strings.Join(known, "', '")+"'")
	}
	var o Options
	err := config.Collect(config.Into(&o.MemoryLimit, MemoryLimitOption, m), config.Into(&o.CallTimeout, CallTimeoutOption, m),
		config.Into(&o.IgnoreErrors, IgnoreErrorsOption, m))
	if err != nil {
		return Options{}, fmt.Errorf("%w: %w", ErrBadOption, err)
	}
	return o, nil
}

// pages is the memory limit in 64 KiB pages, at least one.
func (o Options) pages() uint32 {
	p := o.MemoryLimit >> 16
	if p < 1 {
		p = 1
	}
	if p > 65536 {
		p = 65536
	}
	return uint32(p)
}
