package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// windowInput reads the batches of window and session aggregation: the
// partition key columns (the GROUP BY keys besides the window), the
// aggregates' arguments, the event-time column, and the key hashes that
// place each row in its key group. It also collects a batch's late rows
// and, at the end of the batch, routes them to the late-records table
// (the side output) when the plan has one, or drops and counts them. Its
// buffers are reused batch to batch.
type windowInput struct {
	partKeys []int
	partT    []types.T
	keyR     []colReader
	tsR      colReader
	hashes   []uint64
	// route says late rows go to the side output (spec.Late is set).
	route    bool
	lateRows []int32
}

func newWindowInput(spec *planner.WindowAggregate) windowInput {
	w := windowInput{partKeys: spec.PartitionKeys(), route: spec.Late != nil}
	in := spec.Input.Schema()
	for _, k := range w.partKeys {
		w.partT = append(w.partT, in[k].Type)
	}
	w.keyR = make([]colReader, len(w.partKeys))
	return w
}

// read points the readers at rec's columns (the aggregates' argument
// readers are fold's) and returns the key hash of every row and the
// event-time column.
func (w *windowInput) read(rec arrow.RecordBatch, spec *planner.WindowAggregate, fold *aggFold) ([]uint64, arrow.Array) {
	n := int(rec.NumRows())
	w.lateRows = w.lateRows[:0]
	for j, k := range w.partKeys {
		w.keyR[j].reset(w.partT[j], rec.Column(k))
	}
	fold.read(rec)
	tcol := rec.Column(spec.Window.TimeCol)
	w.tsR.reset(types.TimestampType, tcol)
	if cap(w.hashes) < n {
		w.hashes = make([]uint64, n)
	}
	h := w.hashes[:n]
	clear(h)
	for j, k := range w.partKeys {
		functions.HashColumn(functions.Vec{Array: rec.Column(k), Type: w.partT[j]}, n, h)
	}
	return h, tcol
}

// lateRow records row i of the current batch as late.
func (w *windowInput) lateRow(i int) { w.lateRows = append(w.lateRows, int32(i)) }

// endBatch routes the late rows of rec (recorded by lateRow) along the side
// output, or drops and counts them when the plan routes none, and returns
// how many there were.
func (w *windowInput) endBatch(t *taskContext, rec arrow.RecordBatch, out *emitter) (int64, error) {
	rows := w.lateRows
	n := int64(len(rows))
	if n == 0 {
		return 0, nil
	}
	w.lateRows = rows[:0]
	if !w.route {
		t.job.lateRecords.Add(n)
		return n, nil
	}
	var b Batch
	if n == rec.NumRows() {
		rec.Retain()
		b = Batch{Rec: rec}
	} else {
		var err error
		if b, err = takeRows(t.ctx, Batch{Rec: rec}, rows); err != nil {
			return 0, err
		}
	}
	t.job.lateRouted.Add(n)
	return n, out.emitLate(b)
}
