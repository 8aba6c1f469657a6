package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Change is one row of a query's changelog.
type Change struct {
	Op  exec.RowKind
	Row []types.Value
}

// Query plans a SELECT and runs it, calling onChange for each row of its
// changelog as it is produced, until the input ends (bounded) or ctx is
// canceled (then it returns ctx's error). It returns the result columns
// first through onSchema, before any row.
func (s *Session) Query(ctx context.Context, st *sql.Select, onSchema func(types.Schema, bool), onChange func(Change) error) error {
	sinks, g, err := s.plan(ctx, st)
	if err != nil {
		return err
	}
	if onSchema != nil {
		onSchema(sinks[0].Schema(), g.Bounded)
	}
	return s.run(ctx, g, onChange)
}

// run executes g, passing the collected rows to onChange.
func (s *Session) run(ctx context.Context, g *planner.Graph, onChange func(Change) error) error {
	opts, err := s.execOptions(func(b exec.Batch) error {
		n := b.Len()
		for i := 0; i < n; i++ {
			row := make([]types.Value, b.Rec.NumCols())
			for c := range row {
				row[c] = types.ValueAt(b.Rec.Column(c), i)
			}
			if err := onChange(Change{Op: b.Op(i), Row: row}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	job, err := exec.Start(ctx, g, opts)
	if err != nil {
		return err
	}
	select {
	case <-job.Done():
		return job.Err()
	case <-ctx.Done():
		job.Cancel()
		job.Wait()
		return ctx.Err()
	}
}

// execOptions are the options of a job the session starts now, with the
// session's state memory (managedMemory); its state is in memory unless
// the caller sets a backend.
func (s *Session) execOptions(collect func(exec.Batch) error) (exec.Options, error) {
	st := s.Settings()
	mem, err := s.managedMemory()
	if err != nil {
		return exec.Options{}, err
	}
	return exec.Options{DataDir: s.path(), BatchSize: st.BatchSize, Collect: collect, StateCacheEntries: st.StateCacheEntries,
		Memory: mem.Budget(), LatencyInterval: st.LatencyInterval}, nil
}

// selectBounded runs a SELECT over bounded input and returns its final rows.
func (s *Session) selectBounded(ctx context.Context, st *sql.Select) (*Result, error) {
	sinks, g, err := s.plan(ctx, st)
	if err != nil {
		return nil, err
	}
	if !g.Bounded {
		return nil, &sql.Error{Pos: st.Pos(), Msg: "the query reads unbounded input and never ends",
			Hint: "run it in the interactive shell to see its results stream, or INSERT INTO a sink table"}
	}
	rows, err := s.collect(ctx, g)
	if err != nil {
		return nil, err
	}
	return &Result{Kind: ResultRows, Columns: sinks[0].Schema(), Rows: rows}, nil
}

// runBounded runs a planned bounded query (a subquery) to completion.
func (s *Session) runBounded(ctx context.Context, p *planner.Planner, sink *planner.Sink) ([][]types.Value, error) {
	g, err := p.Physical([]*planner.Sink{sink})
	if err != nil {
		return nil, err
	}
	return s.collect(ctx, g)
}

// collect runs g and applies its changelog to a table of rows, returned in
// the order they were inserted.
func (s *Session) collect(ctx context.Context, g *planner.Graph) ([][]types.Value, error) {
	t := NewTable()
	maxRows := s.Settings().MaxRows
	err := s.run(ctx, g, func(c Change) error {
		if err := t.Apply(c); err != nil {
			return err
		}
		if t.Len() > maxRows {
			return fmt.Errorf("the result has more than %d rows (%s)", maxRows, OptMaxRows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

// Table materializes a changelog: +I/+U add a row, -U/-D remove an equal one.
type Table struct {
	rows  [][]types.Value
	live  []bool
	index map[string][]int
	n     int
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{index: map[string][]int{}} }

// Apply applies one change.
func (t *Table) Apply(c Change) error {
	k := rowKey(c.Row)
	if c.Op.IsRetract() {
		pos := t.index[k]
		if len(pos) == 0 {
			return fmt.Errorf("retraction of a row that is not in the result: %v", c.Row)
		}
		i := pos[len(pos)-1]
		t.index[k] = pos[:len(pos)-1]
		t.live[i] = false
		t.n--
		return nil
	}
	t.index[k] = append(t.index[k], len(t.rows))
	t.rows = append(t.rows, c.Row)
	t.live = append(t.live, true)
	t.n++
	return nil
}

// Len is the number of live rows.
func (t *Table) Len() int { return t.n }

// Rows returns the live rows in insertion order.
func (t *Table) Rows() [][]types.Value {
	out := make([][]types.Value, 0, t.n)
	for i, r := range t.rows {
		if t.live[i] {
			out = append(out, r)
		}
	}
	return out
}

func rowKey(row []types.Value) string {
	var b strings.Builder
	for _, v := range row {
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}
