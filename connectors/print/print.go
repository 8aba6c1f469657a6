package print

import (
	"context"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Name is the value of the 'connector' option.
const Name = "print"

// Option keys.
const (
	OptIdentifier    = "print-identifier"
	OptStandardError = "standard-error"
)

var out = struct {
	sync.Mutex
	stdout, stderr io.Writer
}{stdout: os.Stdout, stderr: os.Stderr}

// SetOutput redirects what print sinks write to standard output to stdout,
// and what they write to standard error ('standard-error'='true') to
// stderr; a nil writer leaves that destination as it is. It returns a
// function restoring the previous destinations. It is meant for tests and
// for the shell, which prints results itself.
func SetOutput(stdout, stderr io.Writer) (restore func()) {
	out.Lock()
	defer out.Unlock()
	prevOut, prevErr := out.stdout, out.stderr
	if stdout != nil {
		out.stdout = stdout
	}
	if stderr != nil {
		out.stderr = stderr
	}
	return func() {
		out.Lock()
		defer out.Unlock()
		out.stdout, out.stderr = prevOut, prevErr
	}
}

func init() {
	registry.Register(catalog.Connector{
		Name:           Name,
		Sink:           true,
		AcceptsUpdates: true,
		Options:        []string{OptIdentifier, OptStandardError},
		Validate: func(t *catalog.Table) error {
			_, err := parse(t.Options)
			return err
		},
	}, nil, newSink)
}

type config struct {
	identifier string
	stderr     bool
}

func parse(opts map[string]string) (config, error) {
	var c config
	var err error
	c.identifier = option.String(opts, OptIdentifier, "")
	c.stderr, err = option.Bool(opts, OptStandardError, false)
	return c, err
}

type sink struct {
	schema types.Schema
	prefix []byte
	stderr bool
	buf    []byte
}

func newSink(spec exec.TableSpec) (exec.Sink, error) {
	c, err := parse(spec.Options)
	if err != nil {
		return nil, err
	}
	prefix := c.identifier
	if spec.Parallelism > 1 {
		if prefix != "" {
			prefix += ":"
		}
		prefix += strconv.Itoa(spec.Subtask + 1)
	}
	if prefix != "" {
		prefix += "> "
	}
	return &sink{schema: spec.Schema, prefix: []byte(prefix), stderr: c.stderr}, nil
}

func (s *sink) Open(context.Context) error { return nil }

// Write prints the rows of b, all in one Write call.
func (s *sink) Write(_ context.Context, b exec.Batch) error {
	buf := s.buf[:0]
	for i := 0; i < b.Len(); i++ {
		buf = append(buf, s.prefix...)
		buf = rowfmt.AppendRow(buf, s.schema, b, i)
		buf = append(buf, '\n')
	}
	s.buf = buf
	if len(buf) == 0 {
		return nil
	}
	out.Lock()
	defer out.Unlock()
	w := out.stdout
	if s.stderr {
		w = out.stderr
	}
	_, err := w.Write(buf)
	return err
}

func (s *sink) PreCommit(context.Context, int64) ([]byte, error) { return nil, nil }
func (s *sink) Commit(context.Context, int64, []byte) error      { return nil }
func (s *sink) Finish(context.Context) error                     { return nil }
func (s *sink) Close() error                                     { return nil }
