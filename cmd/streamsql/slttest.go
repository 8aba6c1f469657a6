package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
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
	return func(string) (slt.DB, error) {
		if parent != "" {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return nil, err
			}
		}
		dir, err := os.MkdirTemp(parent, "streamsql-test-")
		if err != nil {
			return nil, err
		}
		sess, err := session.Open(dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		db := &sltDB{sess: sess, dir: dir}
		if err := db.Exec(context.Background(), "SET '"+session.OptDMLSync+"' = 'true';"); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
}

// sltDB is the engine as the sqllogictest runner sees it (slt.DB).
type sltDB struct {
	sess *session.Session
	dir  string
}

var _ interface {
	slt.DB
	io.Closer
} = (*sltDB)(nil)

// Exec runs the statements of text in order.
func (db *sltDB) Exec(ctx context.Context, text string) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if _, err := db.sess.ExecuteStatement(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// Query runs the statements of text; the last must return rows, which are
// the result.
func (db *sltDB) Query(ctx context.Context, text string) (string, [][]slt.Value, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return "", nil, err
	}
	if len(stmts) == 0 {
		return "", nil, errors.New("no query")
	}
	var r *session.Result
	for _, st := range stmts {
		if r, err = db.sess.ExecuteStatement(ctx, st); err != nil {
			return "", nil, err
		}
	}
	if r.Kind != session.ResultRows {
		return "", nil, fmt.Errorf("the statement returns no rows")
	}
	return sltTypes(r.Columns), sltRows(r.Columns, r.Rows), nil
}

// Close stops the session's jobs and removes its data directory.
func (db *sltDB) Close() error {
	db.sess.Close()
	return os.RemoveAll(db.dir)
}

// sltTypes is the sqllogictest type string of a result: 'I' for integers
// and booleans (booleans are integers in sqllogictest, as in SQLite), 'R'
// for FLOAT, DOUBLE and DECIMAL, 'T' for the rest.
func sltTypes(schema types.Schema) string {
	b := make([]byte, len(schema))
	for i, c := range schema {
		switch {
		case c.Type.IsInteger() || c.Type.Kind == types.Boolean:
			b[i] = 'I'
		case c.Type.IsNumeric():
			b[i] = 'R'
		default:
			b[i] = 'T'
		}
	}
	return string(b)
}

// sltRows converts result rows to the runner's values: NULL as slt.Null,
// others in the engine's text (types.Format; booleans print TRUE and FALSE,
// which the runner shows as 1 and 0 in an 'I' column).
func sltRows(schema types.Schema, rows [][]types.Value) [][]slt.Value {
	out := make([][]slt.Value, len(rows))
	for i, row := range rows {
		vals := make([]slt.Value, len(row))
		for j, v := range row {
			if v == nil {
				vals[j] = slt.Null
				continue
			}
			vals[j] = slt.Text(types.Format(schema[j].Type, v))
		}
		out[i] = vals
	}
	return out
}
