package exec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// sortOp sorts a bounded input and applies OFFSET/LIMIT. It keeps the rows
// (applying retractions when its input updates) and emits them once, in
// order, at the end of input. It runs with parallelism 1.
type sortOp struct {
	t   *taskContext
	s   *planner.Sort
	sch types.Schema
	// updating says retractions may arrive: rows are kept as a multiset.
	updating bool
	rows     [][]types.Value
	counts   map[string]int // updating input: multiplicity of each row
	byKey    map[string][]types.Value
	buf      []byte
}

func newSortOp(t *subtask) *sortOp {
	sp := t.op.Spec.(*planner.SortSpec)
	return &sortOp{s: sp.Sort, sch: t.op.Schema, updating: sp.InputUpdating, counts: map[string]int{}, byKey: map[string][]types.Value{}}
}

func (s *sortOp) open(t *taskContext) error { s.t = t; return nil }

func (s *sortOp) process(_ int, b Batch, _ *emitter) error {
	n := b.Len()
	for i := 0; i < n; i++ {
		row := make([]types.Value, b.Rec.NumCols())
		for c := range row {
			row[c] = types.ValueAt(b.Rec.Column(c), i)
		}
		op := b.Op(i)
		if !s.updating {
			s.rows = append(s.rows, row)
			continue
		}
		// An updating input: keep a multiset, since a later batch may
		// retract a row of an insert-only one.
		s.buf = s.buf[:0]
		for _, v := range row {
			s.buf = appendValue(s.buf, v)
		}
		k := string(s.buf)
		if op.IsRetract() {
			if s.counts[k] == 0 {
				return errRetractMissing(s.sch, row)
			}
			s.counts[k]--
		} else {
			s.counts[k]++
			s.byKey[k] = row
		}
	}
	return nil
}

// snapshot declines: a sort buffers a bounded input until its end and keeps
// the rows outside the state backend, so a checkpoint could not restore them.
func (s *sortOp) refuseCheckpoint() error {
	return fmt.Errorf("%w: ORDER BY / LIMIT keeps its rows outside checkpoints", errCannotSnapshot)
}
func (s *sortOp) close() error { return nil }

func (s *sortOp) endInput(out *emitter) error {
	rows := s.rows
	for k, c := range s.counts {
		for ; c > 0; c-- {
			rows = append(rows, s.byKey[k])
		}
	}
	keys := s.s.Keys
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, b := rows[i][k.Index], rows[j][k.Index]
			if (a == nil) != (b == nil) {
				return (a == nil) == k.NullsFirst
			}
			c := compareValues(a, b)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	lo := min(int(s.s.Offset), len(rows))
	rows = rows[lo:]
	if s.s.Limit >= 0 && int(s.s.Limit) < len(rows) {
		rows = rows[:s.s.Limit]
	}
	return emitRows(s.t, out, s.sch, rows)
}

// emitRows emits rows as append-only batches of the task's batch size.
func emitRows(t *taskContext, out *emitter, sch types.Schema, rows [][]types.Value) error {
	asch := sch.Arrow()
	for start := 0; start < len(rows); start += t.batchSize {
		end := min(start+t.batchSize, len(rows))
		cols := make([]arrow.Array, len(sch))
		for c := range sch {
			b := array.NewBuilder(t.mem, sch[c].Type.ArrowType())
			for _, r := range rows[start:end] {
				types.AppendValue(b, r[c])
			}
			cols[c] = b.NewArray()
			b.Release()
		}
		rec := array.NewRecordBatch(asch, cols, int64(end-start))
		for _, c := range cols {
			c.Release()
		}
		if err := out.emit(Batch{Rec: rec}); err != nil {
			return err
		}
	}
	return nil
}

// errRetractMissing reports a retraction of a row that is not there: the
// input changelog is inconsistent.
func errRetractMissing(sch types.Schema, row []types.Value) error {
	var parts []string
	for i, v := range row {
		parts = append(parts, types.Format(sch[i].Type, v))
	}
	return fmt.Errorf("retraction of a row that was never added: [%s]", strings.Join(parts, ", "))
}
