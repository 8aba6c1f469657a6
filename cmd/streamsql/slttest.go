package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
)

// runTest is `streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...`:
// it runs sqllogictest files, each on a fresh session in a fresh temporary
// data directory, prints the report and returns 1 if a record failed.
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
	failed, err := slt.Run(ctx, paths, slt.Options{
		Verbose: *verbose,
		Out:     os.Stdout,
		NewDB:   newSLTDB(*dataDir),
		Timeout: *timeout,
	})
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
