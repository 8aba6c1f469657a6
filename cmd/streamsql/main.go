package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/streamsql/streamsql/session"
)

// version is the version `streamsql version` prints.
const version = "0.1.0-dev"

// defaultDataDir is where the catalog and table data live unless
// --data-dir says otherwise.
const defaultDataDir = "./streamsql-data"

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches on the first argument: a subcommand, or the flags of the
// shell and of -f. It returns the exit code.
func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "test":
			return runTest(args[1:])
		case "version":
			fmt.Printf("streamsql %s\n", version)
			return 0
		case "help":
			usage(os.Stdout, newRootFlags(new(rootOptions)))
			return 0
		case "bench", "kafka-dev":
			fmt.Fprintf(os.Stderr, "[ERROR] 'streamsql %s' is not available in this version\n", args[0])
			return 2
		}
	}
	return runRoot(args)
}

// rootOptions are the flags of the shell and of -f.
type rootOptions struct {
	dataDir string
	file    string
	dmlSync bool
}

func newRootFlags(o *rootOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("streamsql", flag.ContinueOnError)
	fs.StringVar(&o.dataDir, "data-dir", defaultDataDir, "the data directory: catalog, table data, job state")
	fs.StringVar(&o.file, "f", "", "run the statements of `FILE` instead of the shell")
	fs.StringVar(&o.file, "file", "", "same as -f")
	fs.BoolVar(&o.dmlSync, "sync", false, "make INSERT wait for its job to finish (SET 'table.dml-sync' = 'true')")
	fs.Usage = func() { usage(fs.Output(), fs) }
	return fs
}

// usage prints how to call streamsql.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage:
  streamsql [--data-dir DIR] [--sync]               the interactive shell
  streamsql [--data-dir DIR] [--sync] -f FILE.sql   run a file of statements, then wait for its jobs
  streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...
                                                    run sqllogictest files
  streamsql version                                 print the version

flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// runRoot runs the shell, or the file of -f.
func runRoot(args []string) int {
	var o rootOptions
	fs := newRootFlags(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "[ERROR] unexpected argument %q (see streamsql -h)\n", fs.Arg(0))
		return 2
	}
	sess, err := session.Open(o.dataDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	defer sess.Close()
	if o.dmlSync {
		if _, err := sess.Execute(context.Background(), "SET '"+session.OptDMLSync+"' = 'true';"); err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return 1
		}
	}
	if o.file != "" {
		return runFile(sess, o.file)
	}
	return runShell(sess)
}
