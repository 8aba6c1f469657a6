package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
)

// runTest is `streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...`:
// it runs sqllogictest files, each on a fresh session in a fresh temporary
// data directory, prints the report (slt.Report, then reportCauses) and
// returns 1 if a record failed.
func runTest(args []string) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "where the temporary data directories of the files go (default: the system's temporary directory)")
	verbose := fs.Bool("v", false, "print each failure in detail")
	timeout := fs.Duration("timeout", 0, "fail a statement or query that runs longer than this (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...\n\n"+
			"Runs sqllogictest files (a directory: its *.slt and *.test files).\n\n")
		fs.PrintDefaults()
	}
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(paths) == 0 {
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := slt.RunFiles(ctx, paths, slt.Options{
		Verbose: *verbose,
		NewDB:   newSLTDB(*dataDir),
		Timeout: *timeout,
	})
	failed := slt.Report(os.Stdout, results, *verbose)
	reportCauses(os.Stdout, results, *verbose)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns the positional ones. Everything after
// "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// newSLTDB returns the slt.Options.NewDB of `streamsql test`: a session on
// a new temporary directory under parent, with 'table.dml-sync' on so an
// INSERT is applied before the next record runs.
func newSLTDB(parent string) func(path string) (slt.DB, error) {
	return func(string) (slt.DB, error) { return session.NewSLTDB(parent) }
}

// maxCauses is how many causes reportCauses lists; the rest are counted.
const maxCauses = 10

// reportCauses ends the report with why the records failed, when some did:
// the failures of every file grouped by cause, most frequent first, as
//
//	415 failed:
//	    400  query failed: correlated subqueries are not supported
//	     15  query result mismatch
//
// A cause is failureCause of the failure. Without -v it adds how to see
// each failure.
func reportCauses(w io.Writer, results []slt.FileResult, verbose bool) {
	counts := map[string]int{}
	total := 0
	for _, r := range results {
		for _, f := range r.Failures {
			counts[failureCause(f)]++
			total++
		}
	}
	if total == 0 {
		return
	}
	causes := make([]string, 0, len(counts))
	for c := range counts {
		causes = append(causes, c)
	}
	sort.Slice(causes, func(i, j int) bool {
		if counts[causes[i]] != counts[causes[j]] {
			return counts[causes[i]] > counts[causes[j]]
		}
		return causes[i] < causes[j]
	})
	fmt.Fprintf(w, "%d failed:\n", total)
	width := len(fmt.Sprint(counts[causes[0]]))
	rest, restN := 0, 0
	for i, c := range causes {
		if i >= maxCauses {
			rest += counts[c]
			restN++
			continue
		}
		fmt.Fprintf(w, "    %*d  %s\n", width, counts[c], c)
	}
	if rest > 0 {
		fmt.Fprintf(w, "    %*d  of %d other causes\n", width, rest, restN)
	}
	if !verbose {
		fmt.Fprintln(w, "(-v prints each failure)")
	}
}

var (
	// causePos is an error's position, "line 3:14: ".
	causePos = regexp.MustCompile(`line [0-9]+:[0-9]+: `)
	// causeQuoted is a quoted name or value, which varies between records
	// failing for one cause.
	causeQuoted = regexp.MustCompile(`'[^']*'|"[^"]*"|` + "`[^`]*`")
)

// failureCause is what f's failure has in common with others of its kind:
// the runner's message ("query failed", "query result mismatch") and the
// engine's error, without positions, without the parenthesized detail
// (hints, wrapped causes, notes) and with quoted names and values as '…'.
func failureCause(f slt.Failure) string {
	s := f.Message
	if f.Err != nil {
		s += ": " + f.Err.Error()
	}
	s = causePos.ReplaceAllString(s, "")
	if i := strings.Index(s, " ("); i >= 0 {
		s = s[:i]
	}
	s = causeQuoted.ReplaceAllString(s, "'…'")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
