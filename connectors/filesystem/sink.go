package filesystem

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
)

func init() {
	registry.Register(catalog.Connector{
		Name:     Name,
		Source:   true,
		Sink:     true,
		Bounded:  func(map[string]string) bool { return true },
		Options:  optionKeys(),
		Required: []string{OptPath, OptFormat},
		Validate: validate,
	}, newSource, newSink)
}

type sink struct {
	spec exec.TableSpec
	cfg  config
	enc  format.Encoder
	// n is the number of the part file being written.
	n    int
	f    *os.File
	w    *bufio.Writer
	buf  []byte
	rows int64 // rows in the open part file
}

func newSink(spec exec.TableSpec) (exec.Sink, error) {
	cfg, err := parse(spec.Schema, spec.Options)
	if err != nil {
		return nil, fmt.Errorf("filesystem table %s: %w", spec.Table, err)
	}
	enc, err := cfg.format.NewEncoder(format.Spec{Schema: spec.Schema, Options: spec.Options, Prefix: cfg.format.Name + "."})
	if err != nil {
		return nil, err
	}
	return &sink{spec: spec, cfg: cfg, enc: enc}, nil
}

func (s *sink) partName(n int) string { return fmt.Sprintf("part-%d-%d", s.spec.Subtask, n) }

func (s *sink) inProgress() string {
	return filepath.Join(s.cfg.path, "."+s.partName(s.n)+".inprogress")
}

// Open creates the directory and numbers the next part file after the
// highest one of this subtask already there.
func (s *sink) Open(context.Context) error {
	if err := os.MkdirAll(s.cfg.path, 0o755); err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	entries, err := os.ReadDir(s.cfg.path)
	if err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	prefix := fmt.Sprintf("part-%d-", s.spec.Subtask)
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok {
			if k, err := strconv.Atoi(rest); err == nil && k >= s.n {
				s.n = k + 1
			}
		}
	}
	return nil
}

func (s *sink) Write(_ context.Context, b exec.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.Create(s.inProgress())
		if err != nil {
			return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
		}
		s.f = f
		if s.w == nil {
			s.w = bufio.NewWriterSize(f, 256<<10)
		} else {
			s.w.Reset(f)
		}
	}
	buf := s.buf[:0]
	for i := 0; i < b.Len(); i++ {
		if op := b.Op(i); op != exec.Insert {
			return fmt.Errorf("filesystem table %s is append-only but received a %s row", s.spec.Table, op)
		}
		buf = s.enc.AppendRow(buf, b.Rec, i)
	}
	s.buf = buf
	s.rows += int64(b.Len())
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	return nil
}

// roll makes the open part file durable and visible under its final name.
func (s *sink) roll() error {
	if s.f == nil {
		return nil
	}
	f := s.f
	s.f = nil
	err := s.w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(s.inProgress(), filepath.Join(s.cfg.path, s.partName(s.n)))
	}
	if err != nil {
		return fmt.Errorf("filesystem table %s: %w", s.spec.Table, err)
	}
	if d, err := os.Open(s.cfg.path); err == nil {
		d.Sync()
		d.Close()
	}
	s.n++
	s.rows = 0
	return nil
}

func (s *sink) PreCommit(context.Context, int64) ([]byte, error) { return nil, s.roll() }
func (s *sink) Commit(context.Context, int64, []byte) error      { return nil }
func (s *sink) Finish(context.Context) error                     { return s.roll() }

// Close removes an in-progress file left by a failed job.
func (s *sink) Close() error {
	if s.f != nil {
		s.f.Close()
		s.f = nil
		os.Remove(s.inProgress())
	}
	return nil
}
