package session

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// SLTDB runs sqllogictest records on a Session of its own, in a temporary
// data directory removed by Close. INSERTs wait for their job
// ('table.dml-sync'), so a statement sees what the previous one wrote.
type SLTDB struct {
	s   *Session
	dir string
}

// NewSLTDB opens a fresh session for one test file, on a new temporary
// directory under parent (the system's temporary directory when empty).
func NewSLTDB(parent string) (*SLTDB, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(parent, "streamsql-slt-")
	if err != nil {
		return nil, err
	}
	s, err := Open(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.SetDefault(OptDMLSync, "true")
	return &SLTDB{s: s, dir: dir}, nil
}

// Session is the session the records run on.
func (d *SLTDB) Session() *Session { return d.s }

// Exec runs statements that return no rows.
func (d *SLTDB) Exec(ctx context.Context, text string) error {
	_, err := d.s.Execute(ctx, text)
	return err
}

// ExecCount runs statements that return no rows and returns the number of
// rows the last one changed (UPDATE, DELETE, or the rows an INSERT wrote).
func (d *SLTDB) ExecCount(ctx context.Context, text string) (int64, error) {
	rs, err := d.s.Execute(ctx, text)
	if err != nil || len(rs) == 0 {
		return 0, err
	}
	return rs[len(rs)-1].RowsChanged, nil
}

// Query runs the statements of text; the last one's rows are the result,
// with their column kinds ('I' integers, 'R' approximate and decimal
// numbers, 'T' the rest). EXPLAIN's text is one row per line.
func (d *SLTDB) Query(ctx context.Context, text string) (string, [][]slt.Value, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return "", nil, err
	}
	if len(stmts) == 0 {
		return "", nil, fmt.Errorf("the query record holds no statement")
	}
	var r *Result
	for _, st := range stmts {
		if r, err = d.s.ExecuteStatement(ctx, st); err != nil {
			return "", nil, err
		}
	}
	if r.Kind != ResultRows && r.Kind != ResultText {
		return "", nil, fmt.Errorf("the statement returns no rows")
	}
	if r.Kind == ResultText {
		var rows [][]slt.Value
		for _, line := range strings.Split(strings.TrimRight(r.Text, "\n"), "\n") {
			rows = append(rows, []slt.Value{slt.Text(line)})
		}
		return "T", rows, nil
	}
	var kinds strings.Builder
	for _, c := range r.Columns {
		kinds.WriteByte(SLTKind(c.Type))
	}
	rows := make([][]slt.Value, len(r.Rows))
	for i, row := range r.Rows {
		rows[i] = make([]slt.Value, len(row))
		for j, v := range row {
			rows[i][j] = SLTValue(r.Columns[j].Type, v)
		}
	}
	return kinds.String(), rows, nil
}

// SLTKind is the sqllogictest column kind of t.
func SLTKind(t types.T) byte {
	switch {
	case t.IsInteger(), t.Kind == types.Boolean: // booleans are integers to sqllogictest
		return 'I'
	case t.IsNumeric():
		return 'R'
	}
	return 'T'
}

// SLTValue formats one value for the runner.
func SLTValue(t types.T, v types.Value) slt.Value {
	if v == nil {
		return slt.Null
	}
	if b, ok := v.(bool); ok {
		if b {
			return slt.Text("true")
		}
		return slt.Text("false")
	}
	s := types.Format(t, v)
	if t.Kind == types.Timestamp || t.Kind == types.Time {
		// sqllogictest suites (PostgreSQL's and RisingWave's conventions)
		// print a time without a fraction of zeros.
		if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
			s = s[:i]
		}
	}
	return slt.Text(s)
}

// Close stops the session's jobs and removes its data directory.
func (d *SLTDB) Close() error {
	d.s.Close()
	return os.RemoveAll(d.dir)
}
